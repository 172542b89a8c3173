// Reductions over contiguous memory. The front functions (tensor/reduce_ops.cc) arrange the input
// so that the reduced elements of one output are `len` consecutive elements (a row), or, for sums,
// a column of a contiguous [outer, len, inner] block, which needs no permuting copy.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// y[o, i] = scale * sum_r x[o, r, i]. Floats accumulate in compute_t<T> with pairwise summation
// (error grows with log(len), not len) and y has x's dtype; integral and bool inputs accumulate
// exactly in int64 and y must be int64 (scale must then be 1).
void sum(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
         double scale);

// y[row] = sum_r (x[row, r] - mean)^2 / max(0, len - correction), over rows of a contiguous
// [rows, len] float array; two-pass in double (as PyTorch's CPU kernel accumulates in double).
void var(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction);

// The largest (is_max) or smallest element of each row and the index of its first occurrence; a
// NaN counts as the extreme (the first NaN wins). `values` or `indices` may be null. len >= 1.
void max_min(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len, bool is_max);

}  // namespace colony::kernels::cpu
