// F:: convolution, pooling and batch norm: option structs to the differentiable ops of
// autograd/nn_ops.h.
#include "autograd/nn_ops.h"
#include "nn/functional.h"

namespace colony::nn::functional {
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dFuncOptions& o) {
  return colony::conv2d(input, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
}

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return colony::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                            o.ceil_mode());
}

Tensor max_pool2d(const Tensor& input, int64_t kernel_size) { return max_pool2d(input, MaxPool2dFuncOptions(kernel_size)); }

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return colony::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                            o.count_include_pad());
}

Tensor avg_pool2d(const Tensor& input, int64_t kernel_size) { return avg_pool2d(input, AvgPool2dFuncOptions(kernel_size)); }

Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size) {
  return colony::adaptive_avg_pool2d(input, output_size);
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options) {
  return colony::adaptive_avg_pool2d(input, options.output_size());
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  return colony::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

}  // namespace colony::nn::functional
