#include "nn/layers.h"

#include <stdexcept>

namespace colony::nn {

Dropout::Dropout(double p) : p_(p) {
  if (p < 0 || p > 1) throw std::invalid_argument("Dropout: probability has to be between 0 and 1, but got " + std::to_string(p));
}

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (auto& m : modules_) x = m->forward(x);
  return x;
}

}  // namespace colony::nn
