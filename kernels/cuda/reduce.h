// CUDA reductions: the contracts of kernels/cpu/reduce.h, queued on `stream` (a cudaStream_t).
// Floats accumulate in compute_t<T> (float for float/half/bfloat16, double for double) per thread,
// then in a fixed-order tree across threads, so results are deterministic run to run.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

// y[o, i] = scale * sum_r x[o, r, i]; integral and bool inputs sum exactly into int64. A few long
// rows (a full reduction is one) are summed in two passes over the whole device
// (kernels::split_rows): block partials in `workspace`, then one sum per row.
void sum(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
         double scale, void* workspace, void* stream);
// Bytes of device workspace sum() needs for this shape (0: none, workspace may be null).
size_t sum_workspace_bytes(DType x_dtype, int64_t outer, int64_t len, int64_t inner);

// Per-row variance of a contiguous [rows, len] float array (Welford per thread, Chan's merge
// across threads), divided by max(0, len - correction). Few long rows go through two passes, as
// the sum's, with block states in `workspace`.
void var(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction, void* workspace,
         void* stream);
size_t var_workspace_bytes(DType dtype, int64_t rows, int64_t len);

// Per-row extreme value and first index; NaN counts as the extreme. values/indices may be null.
// Few long rows (a full max or argmax is one) go through two passes, as the sum's, with block
// candidates in `workspace`.
void max_min(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len, bool is_max,
             void* workspace, void* stream);
size_t max_min_workspace_bytes(DType dtype, int64_t rows, int64_t len);

}  // namespace colony::kernels::cuda
