// F:: convolution, pooling and batch norm: option structs to the differentiable ops of
// autograd/nn_ops.h.
#include "autograd/nn_ops.h"
#include "nn/functional.h"

namespace colony::nn::functional {
namespace {
raw::Int2 int2(const Size2& s) { return raw::Int2(s.h, s.w); }
}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dFuncOptions& o) {
  return colony::conv2d(input, weight, bias, int2(o.stride()), int2(o.padding()), int2(o.dilation()), o.groups());
}

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return colony::max_pool2d(input, int2(o.kernel_size()), int2(o.stride()), int2(o.padding()), int2(o.dilation()),
                            o.ceil_mode());
}

Tensor max_pool2d(const Tensor& input, Size2 kernel_size) { return max_pool2d(input, MaxPool2dFuncOptions(kernel_size)); }

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return colony::avg_pool2d(input, int2(o.kernel_size()), int2(o.stride()), int2(o.padding()), o.ceil_mode(),
                            o.count_include_pad());
}

Tensor avg_pool2d(const Tensor& input, Size2 kernel_size) { return avg_pool2d(input, AvgPool2dFuncOptions(kernel_size)); }

Tensor adaptive_avg_pool2d(const Tensor& input, Size2 output_size) {
  return colony::adaptive_avg_pool2d(input, int2(output_size));
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  return colony::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

}  // namespace colony::nn::functional
