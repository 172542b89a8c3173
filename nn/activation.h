// The nn front of the activations: the F:: function and the module of each, with torch.nn's names,
// defaults, errors and printing. Those whose math and gradient are one entry of
// COLONY_FOR_EACH_ACTIVATION (kernels/common/elementwise_functors.h) fill its UnaryAttrs from their
// options; Tanh, Sigmoid, the softmax family, PReLU, Softsign and Tanhshrink are composed of the
// differentiable ops. (ReLU, which takes `inplace`, is in nn/layers.h and nn/functional.h.)
//
// No `inplace` option on these: torch's in-place forms (F.elu(x, inplace=True), ...) write through
// the Tensor's in-place members, which Colony has for relu_ only; the out-of-place result is the same
// values and gradients. Threshold and RReLU take `inplace`, recorded as relu_ is
// (autograd::detail::record_inplace).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "base/arg.h"
#include "nn/functional.h"
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

// F.leaky_relu: x > 0 ? x : negative_slope x. LeakyReLUOptions(0.2) as nn.LeakyReLU(0.2).
struct LeakyReLUFuncOptions {
  LeakyReLUFuncOptions(double negative_slope = 1e-2) : negative_slope_(negative_slope) {}  // NOLINT
  COLONY_ARG(double, negative_slope);
};
inline Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options = {}) {
  raw::UnaryAttrs attrs;
  attrs.negative_slope = options.negative_slope();
  return colony::leaky_relu(input, attrs);
}

// F.elu: x > 0 ? x : alpha (exp(x) - 1).
struct ELUFuncOptions {
  ELUFuncOptions(double alpha = 1.0) : alpha_(alpha) {}  // NOLINT
  COLONY_ARG(double, alpha);
};
inline Tensor elu(const Tensor& input, const ELUFuncOptions& options = {}) {
  raw::UnaryAttrs attrs;
  attrs.alpha = options.alpha();
  return colony::elu(input, attrs);
}

// F.selu: scale * elu(x, alpha) with the self-normalizing constants, torch.elu's (alpha, scale).
inline Tensor selu(const Tensor& input) {
  raw::UnaryAttrs attrs;
  attrs.alpha = kernels::kSeluAlpha;
  attrs.scale = kernels::kSeluScale;
  return colony::elu(input, attrs);
}

// F.celu: max(0, x) + min(0, alpha (exp(x / alpha) - 1)), torch.elu with input_scale 1 / alpha.
struct CELUFuncOptions {
  CELUFuncOptions(double alpha = 1.0) : alpha_(alpha) {}  // NOLINT
  COLONY_ARG(double, alpha);
};
inline Tensor celu(const Tensor& input, const CELUFuncOptions& options = {}) {
  if (options.alpha() == 0) throw std::invalid_argument("ZeroDivisionError: alpha cannot be 0 for CELU");
  raw::UnaryAttrs attrs;
  attrs.alpha = options.alpha();
  attrs.input_scale = 1.0 / options.alpha();
  return colony::elu(input, attrs);
}

// F.softplus: log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
struct SoftplusFuncOptions {
  COLONY_ARG(double, beta) = 1.0;
  COLONY_ARG(double, threshold) = 20.0;
};
inline Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {}) {
  raw::UnaryAttrs attrs;
  attrs.beta = options.beta();
  attrs.threshold = options.threshold();
  return colony::softplus(input, attrs);
}

// x tanh(softplus(x)) (Misra 2019).
inline Tensor mish(const Tensor& input) { return colony::mish(input); }
// x relu6(x + 3) / 6 (MobileNetV3).
inline Tensor hardswish(const Tensor& input) { return colony::hardswish(input); }
// relu6(x + 3) / 6.
inline Tensor hardsigmoid(const Tensor& input) { return colony::hardsigmoid(input); }
// log(sigmoid(x)), in the form that neither overflows nor loses the small values.
inline Tensor logsigmoid(const Tensor& input) { return colony::log_sigmoid(input); }

// F.hardtanh: clamp(x, min_val, max_val), gradient 1 strictly inside. HardtanhOptions(-2, 2).
struct HardtanhFuncOptions {
  HardtanhFuncOptions(double min_val = -1.0, double max_val = 1.0) : min_val_(min_val), max_val_(max_val) {}  // NOLINT
  COLONY_ARG(double, min_val);
  COLONY_ARG(double, max_val);
};
inline Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options = {}) {
  if (options.min_val() > options.max_val()) throw std::invalid_argument("min_val cannot be greater than max_val");
  raw::UnaryAttrs attrs;
  attrs.min_val = options.min_val();
  attrs.max_val = options.max_val();
  return colony::hardtanh(input, attrs);
}
// hardtanh(x, 0, 6), as torch's.
inline Tensor relu6(const Tensor& input) { return hardtanh(input, HardtanhFuncOptions(0.0, 6.0)); }

// x / (1 + |x|) and x - tanh(x), torch's compositions.
inline Tensor softsign(const Tensor& input) { return colony::div(input, colony::add(colony::abs(input), 1.0)); }
inline Tensor tanhshrink(const Tensor& input) { return colony::sub(input, colony::tanh(input)); }

// F::softmax(x, SoftmaxFuncOptions(dim)) as libtorch spells it (F::softmax(x, dim) is functional.h's).
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  COLONY_ARG(int64_t, dim);
};
struct LogSoftmaxFuncOptions {
  LogSoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  COLONY_ARG(int64_t, dim);
};
// F.softmin: softmax(-x, dim).
struct SoftminFuncOptions {
  SoftminFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  COLONY_ARG(int64_t, dim);
};
inline Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  return colony::softmax(input, options.dim());
}
inline Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  return colony::log_softmax(input, options.dim());
}
inline Tensor softmin(const Tensor& input, const SoftminFuncOptions& options) {
  return colony::softmax(colony::neg(input), options.dim());
}

// F.hardshrink: x outside [-lambda, lambda], 0 inside. HardshrinkFuncOptions(0.3) or .lambda(0.3).
// As ATen's kernels, the shrinks and threshold convert their numbers to the input's dtype first (in
// bfloat16, lambda 2.9 is 2.90625 and x = -2.90625 is inside the band).
struct HardshrinkFuncOptions {
  HardshrinkFuncOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  COLONY_ARG(double, lambda);
};
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options = {});

// F.softshrink: x - lambda above lambda, x + lambda below -lambda, 0 between; lambda must be at
// least 0 (and representable in the input's dtype), as torch checks.
struct SoftshrinkFuncOptions {
  SoftshrinkFuncOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  COLONY_ARG(double, lambda);
};
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options = {});

// F.threshold: x where x > threshold, else value. ThresholdFuncOptions(0.1, 20).inplace(true) as
// F.threshold(x, 0.1, 20, inplace=True) (torch's F.threshold_): written into x and recorded, as relu_.
struct ThresholdFuncOptions {
  ThresholdFuncOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  COLONY_ARG(double, threshold);
  COLONY_ARG(double, value);
  COLONY_ARG(bool, inplace) = false;
};
Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options);

// F.glu: a * sigmoid(b), where a and b are the two halves of the input along dim (default -1),
// whose size must be even. GLUFuncOptions(1).
struct GLUFuncOptions {
  GLUFuncOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  COLONY_ARG(int64_t, dim);
};
Tensor glu(const Tensor& input, const GLUFuncOptions& options = {});

// F.rrelu (randomized leaky ReLU, Xu et al. 2015): while training, each element at or below 0 is
// multiplied by its own slope drawn uniformly from [lower, upper] (Colony's generator, or `gen`), and
// the gradient uses the drawn slopes; otherwise leaky_relu with slope (lower + upper) / 2. training
// defaults to false, as the function's does (the module passes its own mode). inplace(true) writes
// into the input and records it, as torch's F.rrelu_.
struct RReLUFuncOptions {
  COLONY_ARG(double, lower) = 1.0 / 8.0;
  COLONY_ARG(double, upper) = 1.0 / 3.0;
  COLONY_ARG(bool, training) = false;
  COLONY_ARG(bool, inplace) = false;
};
Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options = {}, Generator* gen = nullptr);

// F.prelu: x > 0 ? x : weight x, weight one value or one per channel (dim 1; inputs of fewer than
// two dims have one channel), with torch's checks and messages.
Tensor prelu(const Tensor& input, const Tensor& weight);

}  // namespace functional

using GELUOptions = functional::GELUFuncOptions;
class GELU : public Module {
  COLONY_CLONEABLE
 public:
  explicit GELU(const GELUOptions& options = {}) : options(options) { functional::gelu_attrs(options.approximate()); }
  Tensor forward(const Tensor& input) override { return functional::gelu(input, options); }
  std::string extra_repr() const override { return "approximate='" + options.approximate() + "'"; }
  GELUOptions options;
};

// A module without options over an F:: function of one tensor.
#define COLONY_PLAIN_ACTIVATION(Name, fn)                                                  \
  class Name : public Module {                                                             \
    COLONY_CLONEABLE \
   public:                                                                                 \
    Tensor forward(const Tensor& input) override { return functional::fn(input); }         \
  };
COLONY_PLAIN_ACTIVATION(SiLU, silu)
COLONY_PLAIN_ACTIVATION(SELU, selu)
COLONY_PLAIN_ACTIVATION(Mish, mish)
COLONY_PLAIN_ACTIVATION(Hardswish, hardswish)
COLONY_PLAIN_ACTIVATION(Hardsigmoid, hardsigmoid)
COLONY_PLAIN_ACTIVATION(LogSigmoid, logsigmoid)
COLONY_PLAIN_ACTIVATION(ReLU6, relu6)
COLONY_PLAIN_ACTIVATION(Tanh, tanh)
COLONY_PLAIN_ACTIVATION(Sigmoid, sigmoid)
COLONY_PLAIN_ACTIVATION(Softsign, softsign)
COLONY_PLAIN_ACTIVATION(Tanhshrink, tanhshrink)
#undef COLONY_PLAIN_ACTIVATION

using LeakyReLUOptions = functional::LeakyReLUFuncOptions;
class LeakyReLU : public Module {
  COLONY_CLONEABLE
 public:
  explicit LeakyReLU(const LeakyReLUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::leaky_relu(input, options); }
  std::string extra_repr() const override;
  LeakyReLUOptions options;
};

using ELUOptions = functional::ELUFuncOptions;
class ELU : public Module {
  COLONY_CLONEABLE
 public:
  explicit ELU(const ELUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::elu(input, options); }
  std::string extra_repr() const override;
  ELUOptions options;
};

// alpha = 0 is refused by forward, as nn.CELU(0.0) is.
using CELUOptions = functional::CELUFuncOptions;
class CELU : public Module {
  COLONY_CLONEABLE
 public:
  explicit CELU(const CELUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::celu(input, options); }
  std::string extra_repr() const override;
  CELUOptions options;
};

using SoftplusOptions = functional::SoftplusFuncOptions;
class Softplus : public Module {
  COLONY_CLONEABLE
 public:
  explicit Softplus(const SoftplusOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::softplus(input, options); }
  std::string extra_repr() const override;
  SoftplusOptions options;
};

// Refuses max_val <= min_val when built, as nn.Hardtanh asserts (F::hardtanh allows equal bounds).
using HardtanhOptions = functional::HardtanhFuncOptions;
class Hardtanh : public Module {
  COLONY_CLONEABLE
 public:
  explicit Hardtanh(const HardtanhOptions& options = {});
  Tensor forward(const Tensor& input) override { return functional::hardtanh(input, options); }
  std::string extra_repr() const override;
  HardtanhOptions options;
};

// Softmax(1) or Softmax(SoftmaxOptions(1)); the dim is required (nn.Softmax's implicit dim is
// deprecated in PyTorch, and libtorch has none).
using SoftmaxOptions = functional::SoftmaxFuncOptions;
using LogSoftmaxOptions = functional::LogSoftmaxFuncOptions;
using SoftminOptions = functional::SoftminFuncOptions;
#define COLONY_SOFTMAX_MODULE(Name, fn)                                                       \
  class Name : public Module {                                                                \
    COLONY_CLONEABLE \
   public:                                                                                    \
    explicit Name(const Name##Options& options) : options(options) {}                         \
    Tensor forward(const Tensor& input) override { return functional::fn(input, options); }   \
    std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); } \
    Name##Options options;                                                                    \
  };
COLONY_SOFTMAX_MODULE(Softmax, softmax)
COLONY_SOFTMAX_MODULE(LogSoftmax, log_softmax)
COLONY_SOFTMAX_MODULE(Softmin, softmin)
#undef COLONY_SOFTMAX_MODULE

// nn.Hardshrink(0.5) / nn.Softshrink(0.5), printed as torch: "Hardshrink(0.5)".
using HardshrinkOptions = functional::HardshrinkFuncOptions;
class Hardshrink : public Module {
  COLONY_CLONEABLE
 public:
  explicit Hardshrink(const HardshrinkOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::hardshrink(input, options); }
  std::string extra_repr() const override;
  HardshrinkOptions options;
};

// A negative lambda is refused by forward, as nn.Softshrink(-1) is.
using SoftshrinkOptions = functional::SoftshrinkFuncOptions;
class Softshrink : public Module {
  COLONY_CLONEABLE
 public:
  explicit Softshrink(const SoftshrinkOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::softshrink(input, options); }
  std::string extra_repr() const override;
  SoftshrinkOptions options;
};

// nn.Threshold(threshold, value, inplace = false): "Threshold(threshold=0.1, value=20.0)". torch
// prints the value as it was passed (20 for an int); Colony's options are doubles, so "20.0".
using ThresholdOptions = functional::ThresholdFuncOptions;
class Threshold : public Module {
  COLONY_CLONEABLE
 public:
  explicit Threshold(const ThresholdOptions& options) : options(options) {}
  Threshold(double threshold, double value) : Threshold(ThresholdOptions(threshold, value)) {}
  Tensor forward(const Tensor& input) override { return functional::threshold(input, options); }
  std::string extra_repr() const override;
  ThresholdOptions options;
};

// nn.GLU(dim = -1): "GLU(dim=-1)".
using GLUOptions = functional::GLUFuncOptions;
class GLU : public Module {
  COLONY_CLONEABLE
 public:
  explicit GLU(const GLUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::glu(input, options); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  GLUOptions options;
};

// nn.RReLU(lower = 1/8, upper = 1/3, inplace = false): random slopes while the module is training,
// their mean in eval. "RReLU(lower=0.125, upper=0.3333333333333333)".
struct RReLUOptions {
  COLONY_ARG(double, lower) = 1.0 / 8.0;
  COLONY_ARG(double, upper) = 1.0 / 3.0;
  COLONY_ARG(bool, inplace) = false;
};
class RReLU : public Module {
  COLONY_CLONEABLE
 public:
  explicit RReLU(const RReLUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  RReLUOptions options;
};

// nn.Softmax2d: softmax over the channels of [N, C, H, W] or [C, H, W] (dim -3); other ranks are
// refused with torch's message.
class Softmax2d : public Module {
  COLONY_CLONEABLE
 public:
  Tensor forward(const Tensor& input) override;
};

// nn.PReLU(num_parameters = 1, init = 0.25): a learnable slope for the negative side, one or one per
// channel (dim 1 of the input), the parameter `weight` filled with `init`.
struct PReLUOptions {
  PReLUOptions(int64_t num_parameters = 1, double init = 0.25)  // NOLINT
      : num_parameters_(num_parameters), init_(init) {}
  COLONY_ARG(int64_t, num_parameters);
  COLONY_ARG(double, init);
};
class PReLU : public Module {
  COLONY_CLONEABLE
 public:
  explicit PReLU(const PReLUOptions& options = {});
  PReLU(int64_t num_parameters, double init) : PReLU(PReLUOptions(num_parameters, init)) {}  // nn.PReLU(3, 0.1)
  Tensor forward(const Tensor& input) override { return functional::prelu(input, weight); }
  void reset_parameters();
  std::string extra_repr() const override;
  PReLUOptions options;
  Tensor weight;  // [num_parameters]
};

}  // namespace colony::nn
