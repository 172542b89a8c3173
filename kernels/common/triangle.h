// tril and triu over the last two dims of a contiguous [batch, rows, cols] array: the kernel entry
// point, declared once for both devices (kernel.h), defined in kernels/cpu/triangle.cc and
// kernels/cuda/triangle.cu, and the test both devices apply to each element.
#pragma once

#include <cstdint>

#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// Whether element (i, j) survives: on or below diagonal `diagonal` for tril (j - i <= diagonal), on
// or above it for triu (j - i >= diagonal), as torch.tril/torch.triu number the diagonals.
COLONY_INLINE bool triangle_keeps(int64_t i, int64_t j, int64_t diagonal, bool lower) {
  return lower ? j - i <= diagonal : j - i >= diagonal;
}

// y = x where triangle_keeps, else zero (all-zero bytes: 0, 0.0, false in every dtype, which is why
// the kernel needs only the element size). y may be x (in place).
COLONY_KERNEL(TriangleMask, int64_t elem_size, const void* x, void* y, int64_t batch, int64_t rows, int64_t cols,
              int64_t diagonal, bool lower);

}  // namespace colony::kernels
