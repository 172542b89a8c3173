// Batch normalization on the CPU over a contiguous [n, c, s] array (s = the product of the spatial
// sizes), float32 and float64, PyTorch's formulas; channels are split over the thread pool and
// statistics accumulate in double.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// y = (x - mean) * invstd * weight + bias per channel (weight / bias null: 1 / 0).
// training: mean and the biased variance come from the batch; save_mean / save_invstd receive
//   them (invstd = 1 / sqrt(var + eps)), and running_mean / running_var, when not null, become
//   (1 - momentum) * running + momentum * batch statistic, with the unbiased variance.
// evaluation: the running statistics are used; save_mean / save_invstd receive them in the same
//   form, so the backward pass reads one pair of arrays in both modes.
void batch_norm_forward(DType dtype, int64_t n, int64_t c, int64_t s, const void* x, const void* weight,
                        const void* bias, void* running_mean, void* running_var, bool training, double momentum,
                        double eps, void* y, void* save_mean, void* save_invstd);

// Gradients of sum(grad_y * y). training: through the batch statistics; evaluation: the statistics
// are constants. grad_x, grad_weight, grad_bias may each be null (not wanted).
void batch_norm_backward(DType dtype, int64_t n, int64_t c, int64_t s, const void* grad_y, const void* x,
                         const void* weight, const void* save_mean, const void* save_invstd, bool training,
                         void* grad_x, void* grad_weight, void* grad_bias);

}  // namespace colony::kernels::cpu
