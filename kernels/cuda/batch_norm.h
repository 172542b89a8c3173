// CUDA batch normalization: the contracts of kernels/cpu/batch_norm.h on a contiguous [n, c, s]
// device array, queued on `stream` (a cudaStream_t). float32, float64, float16 and bfloat16;
// statistics accumulate in double for float64 and in float otherwise, in a fixed-order tree (the
// results do not vary between runs). One thread block per channel.
// param_dtype is the dtype of weight, bias, running_mean/var and their gradients: the input's,
// or float32 beside a float16/bfloat16 input (mixed precision, as PyTorch). save_mean and
// save_invstd are always in the compute dtype: float32 for 16-bit inputs.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

void batch_norm_forward(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* x,
                        const void* weight, const void* bias, void* running_mean, void* running_var, bool training,
                        double momentum, double eps, void* y, void* save_mean, void* save_invstd, void* stream);

void batch_norm_backward(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* grad_y,
                         const void* x, const void* weight, const void* save_mean, const void* save_invstd,
                         bool training, void* grad_x, void* grad_weight, void* grad_bias, void* stream);

}  // namespace colony::kernels::cuda
