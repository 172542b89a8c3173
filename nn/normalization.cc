#include "nn/normalization.h"

#include <stdexcept>

#include "autograd/nn_ops.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/repr.h"
#include "ops/raw_ops.h"

namespace colony::nn {
namespace functional {

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  return colony::layer_norm(input, options.normalized_shape(), options.weight(), options.bias(), options.eps());
}

Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& options) {
  return colony::rms_norm(input, options.normalized_shape(), options.weight(), options.eps());
}

}  // namespace functional

namespace {

void check_shape(const std::vector<int64_t>& shape, const char* module) {
  bool ok = !shape.empty();
  for (int64_t s : shape) ok = ok && s > 0;
  if (!ok) {
    throw std::invalid_argument(std::string(module) + ": normalized_shape must be non-empty with positive sizes, got " +
                                shape_str(shape));
  }
}

// PyTorch prints normalized_shape as a Python tuple: "(128,)", "(4, 8)".
std::string py_tuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

LayerNorm::LayerNorm(const LayerNormOptions& o) : options(o) {
  check_shape(o.normalized_shape(), "LayerNorm");
  if (o.elementwise_affine()) {
    weight = register_parameter("weight", raw::empty(o.normalized_shape()));
    if (o.bias()) bias = register_parameter("bias", raw::empty(o.normalized_shape()));
  }
  reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& input) {
  return colony::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

std::string LayerNorm::extra_repr() const {
  return py_tuple(options.normalized_shape()) + ", eps=" + repr::py_float(options.eps()) +
         ", elementwise_affine=" + repr::py_bool(options.elementwise_affine());
}

RMSNorm::RMSNorm(const RMSNormOptions& o) : options(o) {
  check_shape(o.normalized_shape(), "RMSNorm");
  if (o.eps() && !(*o.eps() >= 0)) {
    throw std::invalid_argument("RMSNorm: eps must be >= 0, got " + std::to_string(*o.eps()));
  }
  if (o.elementwise_affine()) weight = register_parameter("weight", raw::empty(o.normalized_shape()));
  reset_parameters();
}

void RMSNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNorm::forward(const Tensor& input) {
  return colony::rms_norm(input, options.normalized_shape(), weight, options.eps());
}

std::string RMSNorm::extra_repr() const {
  return py_tuple(options.normalized_shape()) + ", eps=" + (options.eps() ? repr::py_float(*options.eps()) : "None") +
         ", elementwise_affine=" + repr::py_bool(options.elementwise_affine());
}

GroupNorm::GroupNorm(const GroupNormOptions& o) : options(o) {
  if (o.num_groups() <= 0 || o.num_channels() <= 0 || o.num_channels() % o.num_groups() != 0) {
    throw std::invalid_argument("GroupNorm: num_channels (" + std::to_string(o.num_channels()) +
                                ") must be a positive multiple of num_groups (" + std::to_string(o.num_groups()) + ")");
  }
  if (o.affine()) {
    weight = register_parameter("weight", raw::empty({o.num_channels()}));
    if (o.bias()) bias = register_parameter("bias", raw::empty({o.num_channels()}));
  }
  reset_parameters();
}

void GroupNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor GroupNorm::forward(const Tensor& input) {
  if (input.dim() >= 2 && input.size(1) != options.num_channels()) {
    throw std::invalid_argument("GroupNorm: expected input with " + std::to_string(options.num_channels()) +
                                " channels (dim 1), got " + shape_str(input.sizes()));
  }
  return colony::group_norm(input, options.num_groups(), weight, bias, options.eps());
}

std::string GroupNorm::extra_repr() const {
  return std::to_string(options.num_groups()) + ", " + std::to_string(options.num_channels()) +
         ", eps=" + repr::py_float(options.eps()) + ", affine=" + repr::py_bool(options.affine()) +
         ", bias=" + repr::py_bool(bias.defined());
}

Tensor LocalResponseNorm::forward(const Tensor& input) {
  return functional::local_response_norm(input, functional::LocalResponseNormFuncOptions(options.size())
                                                    .alpha(options.alpha())
                                                    .beta(options.beta())
                                                    .k(options.k()));
}

std::string LocalResponseNorm::extra_repr() const {
  return std::to_string(options.size()) + ", alpha=" + repr::py_float(options.alpha()) +
         ", beta=" + repr::py_float(options.beta()) + ", k=" + repr::py_float(options.k());
}

}  // namespace colony::nn
