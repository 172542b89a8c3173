#include "nn/activation.h"

#include "nn/init.h"
#include "nn/repr.h"

namespace colony::nn {
namespace functional {

Tensor prelu(const Tensor& input, const Tensor& weight) {
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

}  // namespace functional

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
