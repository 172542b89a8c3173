#include "nn/activation.h"

#include <functional>
#include <limits>
#include <sstream>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "kernels/common/convert.h"
#include "nn/init.h"
#include "nn/repr.h"
#include "tensor/shape.h"

namespace colony::nn {
namespace functional {

Tensor prelu(const Tensor& input_arg, const Tensor& weight_arg) {
  // On both of torch's autocast lists as lower precision: input and slope cast alike.
  const Tensor input = autocast::cast(autocast::Op::prelu, input_arg);
  const Tensor weight = autocast::cast(autocast::Op::prelu, weight_arg);
  if (weight.dim() > 1) {
    throw std::invalid_argument("prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = " +
                                std::to_string(weight.dim()));
  }
  const int64_t channels = input.dim() >= 2 ? input.size(1) : 1;
  const int64_t parameters = weight.numel();
  if (parameters != 1 && parameters != channels) {
    throw std::invalid_argument(
        "Mismatch of parameter numbers and input channel size. Found parameter numbers = " +
        std::to_string(parameters) + " and channel size = " + std::to_string(channels) + ".");
  }
  // The weight as [C, 1, ..., 1] against dims 1.. of the input (or one value broadcast everywhere).
  Shape slope_shape(input.dim() >= 2 ? input.dim() - 1 : 0, 1);
  if (!slope_shape.empty()) slope_shape[0] = parameters;
  Tensor slope = colony::reshape(weight, slope_shape);
  // ATen's _prelu_kernel: x > 0 ? x : w x, so NaN takes w x (and stays NaN).
  return colony::where(colony::gt(input, 0.0), input, colony::mul(slope, input));
}

namespace {

// A number as ATen's kernels see it, converted to the input's dtype (lambd.to<scalar_t>()) and then
// computed with in float: only the 16-bit types round it.
double in_dtype(double v, DType dtype) {
  if (dtype == kBFloat16) return kernels::convert<float>(kernels::convert<BFloat16>(v));
  if (dtype == kFloat16) return kernels::convert<float>(kernels::convert<Half>(v));
  return v;
}

}  // namespace

Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options) {
  raw::UnaryAttrs attrs;
  attrs.lambd = in_dtype(options.lambda(), input.dtype());
  return colony::hardshrink(input, attrs);
}

Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options) {
  // torch's check, with its bound for the dtype: [0, 3.40282e+38] for float32 (and the 16-bit types
  // it computes in), [0, 1.79769e+308] for float64. NaN fails it too.
  const double lambda = options.lambda();
  const bool is_double = input.dtype() == kFloat64;
  const double max = is_double ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  if (!(lambda >= 0 && lambda <= max)) {
    std::ostringstream os;
    os << "lambda must be in range [0, " << max << "] for input dtype " << (is_double ? "Double" : "Float")
       << ", but found " << lambda;
    throw std::invalid_argument(os.str());
  }
  raw::UnaryAttrs attrs;
  attrs.lambd = in_dtype(lambda, input.dtype());
  return colony::softshrink(input, attrs);
}

Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options) {
  raw::UnaryAttrs attrs;
  attrs.threshold = in_dtype(options.threshold(), input.dtype());
  attrs.value = in_dtype(options.value(), input.dtype());
  if (!options.inplace()) return colony::threshold(input, attrs);
  Tensor self = input;
  // The gradient reads the input, so the old value is kept for it (reads_old_self).
  return autograd::detail::record_inplace(
      self, "threshold_", {}, /*reads_old_self=*/true,
      [&] { raw::copy_(self, raw::unary(raw::UnaryOp::Threshold, self, attrs)); },
      [&](const Tensor& s) { return colony::threshold(s, attrs); });
}

Tensor glu(const Tensor& input, const GLUFuncOptions& options) {
  if (input.dim() == 0) throw std::invalid_argument("glu does not support scalars because halving size must be even");
  const int64_t dim = wrap_dim(options.dim(), input.dim(), "glu");
  const int64_t n = input.size(dim);
  if (n % 2 != 0) {
    throw std::invalid_argument("Halving dimension must be even, but dimension " + std::to_string(dim) +
                                " is size " + std::to_string(n));
  }
  // ATen's glu: first half * sigmoid(second half); the halves are views, so the gradient of each
  // lands in its half of the input's.
  return colony::mul(colony::narrow(input, dim, 0, n / 2), colony::sigmoid(colony::narrow(input, dim, n / 2, n / 2)));
}

Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options, Generator* gen) {
  const double lower = options.lower(), upper = options.upper();
  if (!(lower <= upper)) throw std::invalid_argument("Lower bound should be less than or equal to the upper bound");
  if (!is_floating(input.dtype())) {
    throw std::invalid_argument(std::string("rrelu: expected a floating-point tensor, got ") +
                                dtype_name(input.dtype()));
  }
  std::function<Tensor(const Tensor&)> outplace;
  Tensor noise;
  if (options.training()) {
    // ATen's rrelu_with_noise: a slope from U(lower, upper) where x <= 0 (0 itself included), 1
    // elsewhere (NaN too); the output is x times it, so its gradient is the incoming one times it.
    Tensor slopes = raw::empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
    raw::uniform_(slopes, lower, upper, gen);
    const Tensor not_at_or_below_0 =
        raw::unary(raw::UnaryOp::LogicalNot, raw::binary(raw::BinaryOp::Le, input, 0.0));
    noise = raw::masked_fill(slopes, not_at_or_below_0, 1.0);
    outplace = [&noise](const Tensor& x) { return colony::mul(x, noise); };
  } else {
    raw::UnaryAttrs attrs;
    attrs.negative_slope = (lower + upper) / 2;
    outplace = [attrs](const Tensor& x) { return colony::leaky_relu(x, attrs); };
  }
  if (!options.inplace()) return outplace(input);
  Tensor self = input;
  // Nothing is recorded in raw_write (no input needs a gradient there), so it may call outplace too.
  return autograd::detail::record_inplace(
      self, "rrelu_", {}, /*reads_old_self=*/true, [&] { raw::copy_(self, outplace(self)); }, outplace);
}

}  // namespace functional

std::string Hardshrink::extra_repr() const { return repr::py_float(options.lambda()); }
std::string Softshrink::extra_repr() const { return repr::py_float(options.lambda()); }
std::string Threshold::extra_repr() const {
  return "threshold=" + repr::py_float(options.threshold()) + ", value=" + repr::py_float(options.value()) +
         (options.inplace() ? ", inplace=True" : "");
}

Tensor RReLU::forward(const Tensor& input) {
  return functional::rrelu(input,
                           functional::RReLUFuncOptions().lower(options.lower()).upper(options.upper())
                               .training(is_training()).inplace(options.inplace()));
}
std::string RReLU::extra_repr() const {
  return "lower=" + repr::py_float(options.lower()) + ", upper=" + repr::py_float(options.upper()) +
         (options.inplace() ? ", inplace=True" : "");
}

Tensor Softmax2d::forward(const Tensor& input) {
  if (input.dim() != 3 && input.dim() != 4) {
    throw std::invalid_argument("Softmax2d: expected input to be 3D or 4D, got " + std::to_string(input.dim()) +
                                "D instead");
  }
  return colony::softmax(input, -3);
}

std::string LeakyReLU::extra_repr() const { return "negative_slope=" + repr::py_float(options.negative_slope()); }
std::string ELU::extra_repr() const { return "alpha=" + repr::py_float(options.alpha()); }
std::string CELU::extra_repr() const { return "alpha=" + repr::py_float(options.alpha()); }
std::string Softplus::extra_repr() const {
  return "beta=" + repr::py_float(options.beta()) + ", threshold=" + repr::py_float(options.threshold());
}

Hardtanh::Hardtanh(const HardtanhOptions& options) : options(options) {
  if (!(options.max_val() > options.min_val())) {
    throw std::invalid_argument("Hardtanh: max_val (" + repr::py_float(options.max_val()) +
                                ") must be greater than min_val (" + repr::py_float(options.min_val()) + ")");
  }
}
std::string Hardtanh::extra_repr() const {
  return "min_val=" + repr::py_float(options.min_val()) + ", max_val=" + repr::py_float(options.max_val());
}

PReLU::PReLU(const PReLUOptions& options) : options(options) {
  weight = register_parameter("weight", raw::empty({options.num_parameters()}));
  reset_parameters();
}

void PReLU::reset_parameters() { init::constant_(weight, options.init()); }

std::string PReLU::extra_repr() const { return "num_parameters=" + std::to_string(options.num_parameters()); }

}  // namespace colony::nn
