// Softmax and log-softmax over the middle axis of a contiguous [outer, dim, inner] array, and their
// backward formulas: the kernel entry points, declared once for both devices (kernel.h), defined in
// kernels/cpu/softmax.cc and kernels/cuda/softmax.cu. The input maximum is subtracted before
// exponentiating, so no exp overflows.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// y = exp(x - max) / sum(exp(x - max)), or its log (x - max - log(sum(exp(x - max)))). Floating dtypes.
COLONY_KERNEL(SoftmaxForward, DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner, bool log);

// From the forward output y and the incoming gradient g (both contiguous like x):
// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g).
COLONY_KERNEL(SoftmaxBackward, DType dtype, const void* g, const void* y, void* gx, int64_t outer, int64_t dim,
              int64_t inner, bool log);

}  // namespace colony::kernels
