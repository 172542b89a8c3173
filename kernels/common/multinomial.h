// Sampling categories with replacement (torch.multinomial): the kernel entry point, declared once
// for both devices (kernel.h), defined in kernels/cpu/multinomial.cc and
// kernels/cuda/multinomial.cu, and the search both devices run for each draw.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// The category a uniform draw u in [0, 1) picks from one row's inclusive prefix sums of the weights:
// the first i with cdf[i] > u * total. A zero-weight category never has cdf[i] above a target its
// predecessor's equal sum does not exceed, so it is never picked. When rounding makes u * total
// reach the total, the last category with a weight is taken.
template <typename C>
COLONY_INLINE int64_t multinomial_pick(const C* cdf, int64_t n, C u) {
  const C target = u * cdf[n - 1];
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] > target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo == n) {
    lo = n - 1;
    while (lo > 0 && cdf[lo] == cdf[lo - 1]) --lo;
  }
  return lo;
}

// out[r, s] = multinomial_pick(cdf row r, u[r, s]) for cdf [rows, n] (non-decreasing, positive total)
// and u [rows, samples], both contiguous float32 or float64 (`dtype`); out is int64 [rows, samples].
COLONY_KERNEL(MultinomialSearch, DType dtype, const void* cdf, const void* u, int64_t rows, int64_t n,
              int64_t samples, int64_t* out);

}  // namespace colony::kernels
