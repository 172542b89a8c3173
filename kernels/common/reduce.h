// Reductions over contiguous memory: the entry points, declared once for both devices (kernel.h),
// defined in kernels/cpu/reduce.cc and kernels/cuda/reduce.cu. The front functions
// (ops/reduce_ops.cc) arrange the input so that the reduced elements of one output are `len`
// consecutive elements (a row), or, for sums, a column of a contiguous [outer, len, inner] block,
// which needs no permuting copy.
//
// CUDA: floats accumulate in compute_t<T> (float for float/half/bfloat16, double for double) per
// thread, then in a fixed-order tree across threads, so results are deterministic run to run. A
// few long rows (a full reduction is one) go through two passes over the whole device
// (kernels::split_rows), the block partials in scratch the kernel takes from the caching allocator
// for the call (runtime/cuda/workspaces.h, KernelScratch).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// y[o, i] = scale * sum_r x[o, r, i]. Floats accumulate in compute_t<T> (the CPU with pairwise
// summation: error grows with log(len), not len) and y has x's dtype; integral and bool inputs
// accumulate exactly in int64 and y must be int64 (scale must then be 1).
COLONY_KERNEL(Sum, DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
              double scale);

// y[row] = sum_r (x[row, r] - mean)^2 / max(0, len - correction), over rows of a contiguous
// [rows, len] float array. CPU: two-pass in double (as PyTorch's CPU kernel accumulates in
// double); CUDA: Welford per thread, Chan's merge across threads.
COLONY_KERNEL(Var, DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction);

// The largest (is_max) or smallest element of each row and the index of its first occurrence; a
// NaN counts as the extreme (the first NaN wins). `values` or `indices` may be null. len >= 1.
COLONY_KERNEL(MaxMin, DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len,
              bool is_max);

}  // namespace colony::kernels
