// The 2-norm of each row or column of a contiguous [outer, len, inner] array, read once: the kernel
// entry point, declared once for both devices (kernel.h), defined beside the sums it shares its
// loops with (kernels/cpu/reduce.cc, kernels/cuda/reduce.cu), and the math both devices use.
// torch.linalg.vector_norm(x, 2, dims) reads x once too; composed as sqrt(sum(square(x))) it wrote
// the squares out and read them back (norm over the last dim of [4096, 1024] float32: 1.7 ms
// against torch's 0.45 on one thread, 2026-12-07).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/scalar_math.h"

namespace colony::kernels {

// What one element adds to its sum of squares, in the accumulator type Acc (compute_t<T>: float32
// for float16 and bfloat16, whose squares would overflow at 256 in the narrow type). A NaN stays
// NaN and an infinity gives +inf, so the norm propagates both, as torch's.
template <typename Acc, typename T>
COLONY_INLINE Acc square_term(T x) {
  const Acc v = static_cast<Acc>(static_cast<compute_t<T>>(x));
  return v * v;
}

// The norm from the sum of squares.
template <typename Acc>
COLONY_INLINE Acc norm_from_sum_of_squares(Acc sum_of_squares) {
  return math::sqrt(sum_of_squares);
}

// y[o, i] = sqrt(sum_r x[o, r, i]^2), y in x's dtype; floating dtypes. Squares accumulate in
// compute_t<T>: on the CPU by the pairwise tree (rows) or block counter (columns) of Sum, so the
// sum of squares is sum(square(x))'s up to the rounding of each square (which a fused multiply-add
// may skip); on CUDA per thread, then in a fixed-order tree across threads. len may be 0 (y = 0).
COLONY_KERNEL(VectorNorm2, DType dtype, const void* x, void* y, int64_t outer, int64_t len, int64_t inner);

}  // namespace colony::kernels
