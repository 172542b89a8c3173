// Softmax and log-softmax over the middle axis of a contiguous [outer, dim, inner] array, and their
// backward formulas. The input maximum is subtracted before exponentiating, so no exp overflows.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// y = exp(x - max) / sum(exp(x - max)), or its log (x - max - log(sum(exp(x - max)))).
void softmax(DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner, bool log);

// From the forward output y and the incoming gradient g (both contiguous like x):
// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g).
void softmax_backward(DType dtype, const void* g, const void* y, void* gx, int64_t outer, int64_t dim, int64_t inner,
                      bool log);

}  // namespace colony::kernels::cpu
