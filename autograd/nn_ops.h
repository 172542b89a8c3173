// Differentiable convolution, pooling and batch normalization: the raw ops of tensor/raw_nn_ops.h
// with fused backward nodes (the backward kernels compute all input gradients in one pass).
// nn::functional (F::) is the user-facing API over these.
#pragma once

#include <optional>

#include "tensor/raw_nn_ops.h"

namespace colony {

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int2 stride = 1,
              Int2 padding = 0, Int2 dilation = 1, int64_t groups = 1);
Tensor max_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride = std::nullopt,
                  Int2 padding = 0, Int2 dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride = std::nullopt,
                  Int2 padding = 0, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size);
// running_mean/var may be undefined (no running statistics). In training mode they are updated in
// place (not recorded by autograd).
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);

// Fused cross-entropy / nll_loss over input [N, C] and int64 target [N] (raw::cross_entropy_loss):
// one kernel forward, one backward.
Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const raw::CrossEntropyOptions& options);

// mean/sum/none of (input - target)^2; input and target of one shape. Composite: the gradient comes
// from sub, mul and the reduction. Under autocast it runs in float32.
Tensor mse_loss(const Tensor& input, const Tensor& target, raw::LossReduction reduction = raw::LossReduction::Mean);

}  // namespace colony
