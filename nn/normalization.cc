#include "nn/normalization.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "autograd/nn_ops.h"
#include "autograd/ops.h"
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
         ", elementwise_affine=" + repr::py_bool(options.elementwise_affine()) +
         // torch 2.x prints whether there is a bias parameter (False without elementwise_affine).
         ", bias=" + repr::py_bool(bias.defined());
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

CrossMapLRN2d::CrossMapLRN2d(const CrossMapLRN2dOptions& options) : options(options) {
  if (options.size() <= 0) {
    throw std::invalid_argument("CrossMapLRN2d: size must be positive, got " + std::to_string(options.size()));
  }
}

namespace {

// w[c][j]: how many times channel j's square is in channel c's sum, replaying torch's running sum
// (nn/modules/_functions.py CrossMapLRN2d.forward) step by step, so its window, quirks included, is
// what this computes.
std::vector<double> cross_map_window(int64_t channels, int64_t size) {
  const int64_t pre_pad = static_cast<int64_t>((size - 1) / 2.0 + 1);  // Python's int() of a float
  std::vector<double> w(channels * channels, 0.0);
  for (int64_t j = 0; j < std::min(pre_pad, channels); ++j) w[j] += 1;
  for (int64_t c = 1; c < channels; ++c) {
    for (int64_t j = 0; j < channels; ++j) w[c * channels + j] = w[(c - 1) * channels + j];
    if (c < channels - pre_pad + 1) w[c * channels + c + pre_pad - 1] += 1;
    if (c > pre_pad) w[c * channels + c - pre_pad] -= 1;
  }
  return w;
}

}  // namespace

Tensor CrossMapLRN2d::forward(const Tensor& input) {
  if (input.dim() != 4) {
    throw std::invalid_argument("CrossMapLRN2d: Expected input to be 4D, got " + std::to_string(input.dim()) +
                                "D instead.");
  }
  const int64_t n = input.size(0), c = input.size(1), hw = input.size(2) * input.size(3);
  Tensor window = raw::from_vector(cross_map_window(c, options.size()), {c, c},
                                   TensorOptions(input.dtype()).device(input.device()));
  // [C, C] x [N, C, HW]: each channel's windowed sum of squares, then torch's scale and power.
  Tensor sums = colony::matmul(window, colony::reshape(colony::mul(input, input), {n, c, hw}));
  Tensor scale = colony::add(colony::mul(colony::reshape(sums, input.sizes()), options.alpha() / options.size()),
                             options.k());
  return colony::mul(colony::pow(scale, -options.beta()), input);
}

std::string CrossMapLRN2d::extra_repr() const {
  const double k = options.k();
  const std::string k_str = std::floor(k) == k && std::abs(k) < 1e15 ? std::to_string(static_cast<int64_t>(k))
                                                                        : repr::py_float(k);
  return std::to_string(options.size()) + ", alpha=" + repr::py_float(options.alpha()) +
         ", beta=" + repr::py_float(options.beta()) + ", k=" + k_str;
}

}  // namespace colony::nn
