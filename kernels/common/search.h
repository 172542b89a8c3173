// Binary search of sorted rows (torch.searchsorted, torch.bucketize): the bisection both devices
// run, written once, and the kernel entry point, declared once for both devices (kernel.h),
// defined in kernels/cpu/search.cc and kernels/cuda/search.cu. Each value costs log2(n) reads of
// its row, where comparing it with every boundary cost n (and n bytes of memory per value).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// The position of `value` in the sorted row [row[order[0]], ..., row[order[n-1]]] (order = the
// row's sorter, or nullptr for row itself): the first boundary >= value (right: > value).
// The bisection is torch's (cus_lower_bound / cus_upper_bound of ATen's Bucketization, the same
// midpoints and the same negated test), so the result is torch's bit for bit, NaN included: a
// NaN value passes every boundary (position n, NaN sorting last), and a NaN boundary counts as
// below every value, so with NaNs at the end of the row the answer follows torch's search path.
template <typename T>
COLONY_INLINE int64_t search_sorted_position(const T* row, const int64_t* order, int64_t n, compute_t<T> value,
                                             bool right) {
  using C = compute_t<T>;
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const C boundary = static_cast<C>(row[order != nullptr ? order[mid] : mid]);
    const bool before = right ? !(boundary > value) : !(boundary >= value);
    if (before) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// out[i] = the position of values[i] in row i / per_row of boundaries [rows, n] (contiguous, both
// of dtype `dtype`; a 1-D sequence is rows = 1 with per_row = every value), through that row of
// `sorter` [rows, n] when it is not nullptr. out is int32 when out_int32, else int64.
COLONY_KERNEL(SearchSorted, DType dtype, const void* boundaries, const int64_t* sorter, const void* values, void* out,
              bool out_int32, int64_t rows, int64_t n, int64_t per_row, bool right);

}  // namespace colony::kernels
