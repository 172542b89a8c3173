// nn::Unfold and nn::Fold (torch.nn.Unfold / Fold): modules over F::unfold and F::fold
// (nn/functional.h; im2col / col2im, one kernel each way). UnfoldOptions(3).padding(1),
// FoldOptions({4, 5}, 2).stride(2). Printed as torch prints them: Unfold(kernel_size=2,
// dilation=1, padding=0, stride=1); a square size as one number, as repr.h prints every pair.
#pragma once

#include <string>

#include "nn/functional.h"
#include "nn/module.h"

namespace colony::nn {

using UnfoldOptions = functional::UnfoldFuncOptions;
using FoldOptions = functional::FoldFuncOptions;

class Unfold : public Module {
  COLONY_CLONEABLE
 public:
  explicit Unfold(const UnfoldOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  UnfoldOptions options;
};

class Fold : public Module {
  COLONY_CLONEABLE
 public:
  explicit Fold(const FoldOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  FoldOptions options;
};

}  // namespace colony::nn
