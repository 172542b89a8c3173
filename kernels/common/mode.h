// torch.mode on rows already sorted (stably, by sort.h's order) with the positions the sort took
// them from: the scan both devices run, written once, and the kernel entry point, declared once for
// both devices (kernel.h), defined in kernels/cpu/mode.cc and kernels/cuda/mode.cu.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// The longest run of equal values of the sorted row; of runs equally long the first, which holds
// the smallest value (torch's tie rule, its strict `>`). The value and position given are those of
// the run's last element: with a stable sort, the last occurrence of the value in the row (torch's
// CPU kernel names the last occurrence in rows of up to 16 elements, where its std::sort is an
// insertion sort, and any occurrence in longer rows), and of -0 and +0 the later one, as torch's.
// NaN equals nothing, so each NaN is a run of one.
template <typename T>
COLONY_INLINE void mode_of_sorted_row(const T* sorted, const int64_t* order, int64_t n, T* value, int64_t* index) {
  using C = compute_t<T>;
  int64_t best_count = 0, best_last = 0, start = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i + 1 == n || !(static_cast<C>(sorted[i]) == static_cast<C>(sorted[i + 1]))) {
      if (i + 1 - start > best_count) {
        best_count = i + 1 - start;
        best_last = i;
      }
      start = i + 1;
    }
  }
  *value = sorted[best_last];
  *index = order[best_last];
}

// For each row r of sorted [rows, n] (n >= 1, dtype `dtype`) and order [rows, n] (int64 positions
// in the unsorted row): values[r] and indices[r] as mode_of_sorted_row.
COLONY_KERNEL(ModeOfSortedRows, DType dtype, const void* sorted, const int64_t* order, void* values, int64_t* indices,
              int64_t rows, int64_t n);

}  // namespace colony::kernels
