// The nn front of the activations whose math and gradient are one entry of
// COLONY_FOR_EACH_ACTIVATION (kernels/common/elementwise_functors.h): the F:: function and the
// module of each, as torch.nn.functional and torch.nn have them. (ReLU, which takes `inplace`, is in
// nn/layers.h and nn/functional.h.)
#pragma once

#include <stdexcept>
#include <string>

#include "autograd/ops.h"
#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {
namespace functional {

// F::gelu(x, GELUFuncOptions().approximate("tanh")) as F.gelu(x, approximate="tanh"): "none" is the
// exact 0.5 x (1 + erf(x / sqrt 2)), "tanh" the approximation GPT-2 was trained with.
struct GELUFuncOptions {
  COLONY_ARG(std::string, approximate) = "none";
};

inline raw::UnaryAttrs gelu_attrs(const std::string& approximate) {
  if (approximate == "none") return {raw::GeluApproximate::None};
  if (approximate == "tanh") return {raw::GeluApproximate::Tanh};
  throw std::invalid_argument("gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
}

inline Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {}) {
  return colony::gelu(input, gelu_attrs(options.approximate()));
}

// x * sigmoid(x), also called swish.
inline Tensor silu(const Tensor& input) { return colony::silu(input); }

}  // namespace functional

using GELUOptions = functional::GELUFuncOptions;
class GELU : public Module {
 public:
  explicit GELU(const GELUOptions& options = {}) : options(options) { functional::gelu_attrs(options.approximate()); }
  Tensor forward(const Tensor& input) override { return functional::gelu(input, options); }
  std::string extra_repr() const override { return "approximate='" + options.approximate() + "'"; }
  GELUOptions options;
};

class SiLU : public Module {
 public:
  Tensor forward(const Tensor& input) override { return functional::silu(input); }
};

}  // namespace colony::nn
