// CUDA softmax family: the contracts of kernels/cpu/softmax.h on a contiguous [outer, dim, inner]
// array, queued on `stream` (a cudaStream_t).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

void softmax(DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner, bool log, void* stream);

void softmax_backward(DType dtype, const void* g, const void* y, void* gx, int64_t outer, int64_t dim, int64_t inner,
                      bool log, void* stream);

}  // namespace colony::kernels::cuda
