// A model whose heads are used by some ranks on some steps and one by none: what the DDP and ZeRO
// tests of parameters without a gradient train.
#pragma once

#include <memory>

#include "nn/functional.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace colony::testing {

// 8 inputs, 4 classes: trunk, then head_a, or head_b when use_b is set; `never` is never used.
struct Branchy : nn::Module {
  Branchy() {
    trunk = register_module("trunk", std::make_shared<nn::Linear>(8, 8));
    head_a = register_module("head_a", std::make_shared<nn::Linear>(8, 4));
    head_b = register_module("head_b", std::make_shared<nn::Linear>(8, 4));
    never = register_module("never", std::make_shared<nn::Linear>(8, 4));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = F::relu(trunk->forward(x));
    return use_b ? head_b->forward(h) : head_a->forward(h);
  }
  bool use_b = false;
  std::shared_ptr<nn::Linear> trunk, head_a, head_b, never;
};

}  // namespace colony::testing
