// LayerNorm and RMSNorm over the last `cols` elements of a contiguous [rows, cols] array: the kernel
// entry points, declared once for both devices (kernel.h), defined in kernels/cpu/norm.cc and
// kernels/cuda/norm.cu. The two share their kernels: RMSNorm is LayerNorm without the centring
// (mean taken as 0, no bias, no mean term in the gradient), selected by `rms`.
//
// Types: x, y, dy, dx are `dtype` (float32, float64, float16, bfloat16); everything per row or per
// column (weight, bias, mean, rstd, dweight, dbias) is in the compute type, compute_t<dtype>
// (float32 for the 16-bit dtypes, so the statistics and the parameter gradients accumulate in
// float32), as PyTorch keeps them.
//
//   LayerNorm: mean = sum(x) / n, var = sum((x - mean)^2) / n (biased), rstd = 1 / sqrt(var + eps),
//              y = (x - mean) * rstd * w + b
//   RMSNorm:   rstd = 1 / sqrt(sum(x^2) / n + eps), y = x * rstd * w
//
// Backward, with xhat = (x - mean) * rstd (mean = 0 for RMSNorm) and g = dy * w:
//   dx = rstd * (g - sum(g) / n - xhat * sum(g * xhat) / n)   (RMSNorm: without the sum(g) / n term)
//   dweight = sum over rows of dy * xhat, dbias = sum over rows of dy.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// weight and bias may be null (1 and 0); bias is ignored when rms. mean [rows] may be null (RMSNorm
// keeps none); rstd [rows] is always written. rows * cols may be 0; cols > 0 when rows > 0.
COLONY_KERNEL(RowNormForward, DType dtype, const void* x, const void* weight, const void* bias, void* y, void* mean,
              void* rstd, int64_t rows, int64_t cols, double eps, bool rms);

// From the forward's input x, its mean (null when rms) and rstd, and the incoming gradient dy. Any of
// dx, dweight, dbias may be null (not wanted); dweight and dbias are overwritten, not added to. On
// the CPU the sums over rows are taken in a fixed order (blocks of kNormRowsPerBlock rows, then the
// blocks in order), so the result does not depend on the thread count.
COLONY_KERNEL(RowNormBackward, DType dtype, const void* dy, const void* x, const void* mean, const void* rstd,
              const void* weight, void* dx, void* dweight, void* dbias, int64_t rows, int64_t cols, bool rms);

}  // namespace colony::kernels
