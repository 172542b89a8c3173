// F:: 3-D pooling (max, average, adaptive), power-average pooling (1-D to 3-D, composed as torch's
// functional is) and fractional max pooling (2-D and 3-D), over the differentiable ops of
// autograd/nn_ops.h. max_unpool3d is beside max_unpool2d in nn/functional_pool.cc.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "ops/raw_ops.h"

namespace colony::nn::functional {
namespace {

Int3 adaptive_size(const OptionalInt3& size, const Tensor& input) {
  const bool has = input.defined() && input.dim() >= 3;
  return {size.d.value_or(has ? input.size(-3) : 0), size.h.value_or(has ? input.size(-2) : 0),
          size.w.value_or(has ? input.size(-1) : 0)};
}

void check_norm_type(double p, const char* op) {
  if (p == 0) {
    throw std::invalid_argument(std::string(op) + ": norm_type must be a non-zero value, but got 0");
  }
}

// torch's tail of lp_pool: (sign(s) * relu(|s|)) * window, to the power 1/p, where s is the average
// of x^p over the window.
Tensor lp_finish(const Tensor& avg, double p, int64_t window) {
  const Tensor s = mul(mul(sign(avg), functional::relu(abs(avg))), static_cast<double>(window));
  return pow(s, 1.0 / p);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// torch's functional draws [N or 1, C, dims] samples with torch.rand in the input's dtype and device.
Tensor draw_samples(const Tensor& input, int dims) {
  const int64_t unbatched = dims + 1;
  if (!input.defined() || (input.dim() != unbatched && input.dim() != unbatched + 1)) return Tensor();
  const int64_t n = input.dim() == unbatched ? 1 : input.size(0);
  return raw::rand({n, input.size(-unbatched), dims}, TensorOptions(input.dtype()).device(input.device()));
}

void check_spatial(const Tensor& input, int dims, const char* op) {
  if (!input.defined() || input.dim() < dims) {
    throw std::invalid_argument(std::string(op) + ": expected a " + std::to_string(dims + 1) + "D or " +
                                std::to_string(dims + 2) + "D input, got " +
                                (input.defined() ? shape_str(input.sizes()) : std::string("undefined")));
  }
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return colony::max_pool3d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return std::get<0>(max_pool3d_with_indices(input, o));
}

Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  return colony::avg_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                            o.divisor_override());
}

Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  return colony::adaptive_avg_pool3d(input, adaptive_size(o.output_size(), input));
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  return colony::adaptive_max_pool3d(input, adaptive_size(o.output_size(), input));
}

Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, o));
}

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  const double p = o.norm_type();
  check_norm_type(p, "lp_pool1d");
  const int64_t stride = o.stride().value_or(o.kernel_size());
  if (p == kInf || p == -kInf) {
    const auto mo = MaxPool1dFuncOptions(o.kernel_size()).stride(stride).ceil_mode(o.ceil_mode());
    return p > 0 ? max_pool1d(abs(input), mo) : neg(max_pool1d(neg(abs(input)), mo));
  }
  const Tensor avg =
      avg_pool1d(pow(input, p), AvgPool1dFuncOptions(o.kernel_size()).stride(stride).ceil_mode(o.ceil_mode()));
  return lp_finish(avg, p, o.kernel_size());
}

Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  const double p = o.norm_type();
  check_norm_type(p, "lp_pool2d");
  const Int2 k = o.kernel_size(), stride = o.stride().value_or(k);
  if (p == kInf || p == -kInf) {
    const auto mo = MaxPool2dFuncOptions(k).stride(stride).ceil_mode(o.ceil_mode());
    return p > 0 ? max_pool2d(abs(input), mo) : neg(max_pool2d(neg(abs(input)), mo));
  }
  const Tensor avg = avg_pool2d(pow(input, p), AvgPool2dFuncOptions(k).stride(stride).ceil_mode(o.ceil_mode()));
  return lp_finish(avg, p, k.h * k.w);
}

Tensor lp_pool3d(const Tensor& input, const LPPool3dFuncOptions& o) {
  const double p = o.norm_type();
  check_norm_type(p, "lp_pool3d");
  const Int3 k = o.kernel_size(), stride = o.stride().value_or(k);
  if (p == kInf || p == -kInf) {
    const auto mo = MaxPool3dFuncOptions(k).stride(stride).ceil_mode(o.ceil_mode());
    return p > 0 ? max_pool3d(abs(input), mo) : neg(max_pool3d(neg(abs(input)), mo));
  }
  const Tensor avg = avg_pool3d(pow(input, p), AvgPool3dFuncOptions(k).stride(stride).ceil_mode(o.ceil_mode()));
  return lp_finish(avg, p, k.d * k.h * k.w);
}

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& o) {
  if (!o.output_size() && !o.output_ratio()) {
    throw std::invalid_argument(
        "fractional_max_pool2d requires specifying either an output_size or an output_ratio");
  }
  Int2 out = o.output_size().value_or(Int2(0));
  if (!o.output_size()) {
    check_spatial(input, 2, "fractional_max_pool2d");
    out = {static_cast<int64_t>(static_cast<double>(input.size(-2)) * o.output_ratio()->h),
           static_cast<int64_t>(static_cast<double>(input.size(-1)) * o.output_ratio()->w)};
  }
  const Tensor samples = o._random_samples().defined() ? o._random_samples() : draw_samples(input, 2);
  return colony::fractional_max_pool2d(input, o.kernel_size(), out, samples);
}

Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& o) {
  return std::get<0>(fractional_max_pool2d_with_indices(input, o));
}

std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& o) {
  if (!o.output_size() && !o.output_ratio()) {
    throw std::invalid_argument(
        "fractional_max_pool3d requires specifying either an output_size or an output_ratio");
  }
  Int3 out = o.output_size().value_or(Int3(0));
  if (!o.output_size()) {
    check_spatial(input, 3, "fractional_max_pool3d");
    out = {static_cast<int64_t>(static_cast<double>(input.size(-3)) * o.output_ratio()->d),
           static_cast<int64_t>(static_cast<double>(input.size(-2)) * o.output_ratio()->h),
           static_cast<int64_t>(static_cast<double>(input.size(-1)) * o.output_ratio()->w)};
  }
  const Tensor samples = o._random_samples().defined() ? o._random_samples() : draw_samples(input, 3);
  return colony::fractional_max_pool3d(input, o.kernel_size(), out, samples);
}

Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& o) {
  return std::get<0>(fractional_max_pool3d_with_indices(input, o));
}

}  // namespace colony::nn::functional
