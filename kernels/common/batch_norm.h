// Batch normalization over a contiguous [n, c, s] array (s = the product of the spatial sizes),
// PyTorch's formulas: the entry points, declared once for both devices (kernel.h), defined in
// kernels/cpu/batch_norm.cc (float32 and float64, channels split over the thread pool, statistics
// accumulated in double) and kernels/cuda/batch_norm.cu.
//
// CUDA: float32, float64, float16 and bfloat16; statistics accumulate in double for float64 and in
// float otherwise, in a fixed-order tree (the results do not vary between runs); one thread block
// per channel. save_mean and save_invstd are always in the compute dtype: float32 for 16-bit inputs.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// param_dtype is that of weight, bias and the running and saved statistics: dtype, or float32
// beside a 16-bit input (CUDA only: the CPU kernels take float32/float64 inputs, whose parameters
// share their dtype, so they read param_dtype as dtype).
//
// y = (x - mean) * invstd * weight + bias per channel (weight / bias null: 1 / 0).
// training: mean and the biased variance come from the batch; save_mean / save_invstd receive
//   them (invstd = 1 / sqrt(var + eps)), and running_mean / running_var, when not null, become
//   (1 - momentum) * running + momentum * batch statistic, with the unbiased variance.
// evaluation: the running statistics are used; save_mean / save_invstd receive them in the same
//   form, so the backward pass reads one pair of arrays in both modes.
COLONY_KERNEL(BatchNormForward, DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* x,
              const void* weight, const void* bias, void* running_mean, void* running_var, bool training,
              double momentum, double eps, void* y, void* save_mean, void* save_invstd);

// Gradients of sum(grad_y * y). training: through the batch statistics; evaluation: the statistics
// are constants. grad_x, grad_weight, grad_bias may each be null (not wanted).
COLONY_KERNEL(BatchNormBackward, DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* grad_y,
              const void* x, const void* weight, const void* save_mean, const void* save_invstd, bool training,
              void* grad_x, void* grad_weight, void* grad_bias);

}  // namespace colony::kernels
