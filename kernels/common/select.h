// Selection of one order statistic per row (median, nanmedian, kthvalue along a dim): the rule
// each op selects by, the quickselect both devices run, and the kernel entry point, declared once
// for both devices (kernel.h), defined in kernels/cpu/select.cc and kernels/cuda/select.cu.
//
// Every element is compared by its sort key (sort.h: NaN the largest, -0 equal to +0), so the
// order is torch.sort's. Which element is named among equal values follows torch's CPU kernels:
//   median     the first NaN of a row that has one; else the element at (n - 1) / 2 of the
//              order (key, position), which is total, so the answer is unique: the element a
//              stable sort puts there (torch's std::nth_element by value, then position);
//   nanmedian  the element at (valid - 1) / 2 of the same order, NaNs last; a row of NaNs names
//              the NaN that libstdc++'s std::nth_element leaves first among n equivalent
//              elements (torch's comparator finds NaNs equivalent), which depends on n only and
//              is computed once per call by the front function (`all_nan_index`);
//   kthvalue   the k-th smallest by key alone, named as torch's kthvalue names it: its
//              quickselect (Sedgewick's median-of-three partition, Numerical Recipes' select)
//              moves the positions with the values, and the position that lands at k - 1 is
//              the answer. Among equal values that is neither the first nor the last but a
//              deterministic function of the row, which quick_select below reproduces.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"
#include "kernels/common/sort.h"

namespace colony::kernels {

enum class SelectKind : int { Kth, Median, NanMedian };

// An element as the selection moves it: its key and its position in the row. For keys of 32 bits
// and rows shorter than 2^32 both fit one 64-bit word (key high, position low), so the total order
// (key, position) is the word's order and a swap moves 8 bytes; otherwise a pair.
struct PackedItem {
  uint64_t bits;
  COLONY_INLINE static PackedItem make(uint32_t key, int64_t index) {
    return {(static_cast<uint64_t>(key) << 32) | static_cast<uint64_t>(index)};
  }
  COLONY_INLINE uint32_t key() const { return static_cast<uint32_t>(bits >> 32); }
  COLONY_INLINE int64_t index() const { return static_cast<int64_t>(bits & 0xffffffffu); }
  COLONY_INLINE bool operator<(const PackedItem& o) const { return bits < o.bits; }
};

template <typename K>
struct PairItem {
  K key_;
  int64_t index_;
  COLONY_INLINE static PairItem make(K key, int64_t index) { return {key, index}; }
  COLONY_INLINE K key() const { return key_; }
  COLONY_INLINE int64_t index() const { return index_; }
  COLONY_INLINE bool operator<(const PairItem& o) const {
    return key_ < o.key_ || (key_ == o.key_ && index_ < o.index_);
  }
};

// Greater by key alone (torch's kthvalue: `(isnan(x) && !isnan(y)) || x > y`, which the key order
// is), and by (key, position), the total order median and nanmedian select by.
struct KeyGreater {
  template <typename Item>
  COLONY_INLINE bool operator()(const Item& a, const Item& b) const { return b.key() < a.key(); }
};
struct TotalGreater {
  template <typename Item>
  COLONY_INLINE bool operator()(const Item& a, const Item& b) const { return b < a; }
};

template <typename Item>
COLONY_INLINE void swap_items(Item* a, int64_t i, int64_t j) {
  Item t = a[i];
  a[i] = a[j];
  a[j] = t;
}

// Rearranges a[0, n) so that a[k] is the element a sort by `greater` would put at k (every
// element before it not greater, after it not less), by Sedgewick's quickselect: the median of
// a[L], a[(L + R) / 2] and a[R] as pivot, which also leaves sentinels at both ends, then a Hoare
// partition. The exact sequence of swaps is torch's kthvalue's, so among equal keys the same
// position ends at k. Expected O(n); quadratic on inputs built against the median of three (as
// torch's), which the CPU's median avoids through std::nth_element.
template <typename Item, typename Greater>
COLONY_INLINE void quick_select(Item* a, int64_t n, int64_t k, Greater greater) {
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (greater(a[lo], a[hi])) swap_items(a, lo, hi);
      return;
    }
    // Order a[lo + 1] <= a[lo] <= a[hi], with the middle element moved to lo + 1 first.
    swap_items(a, (lo + hi) >> 1, lo + 1);
    if (greater(a[lo + 1], a[hi])) swap_items(a, lo + 1, hi);
    if (greater(a[lo], a[hi])) swap_items(a, lo, hi);
    if (greater(a[lo + 1], a[lo])) swap_items(a, lo + 1, lo);
    const Item pivot = a[lo];
    int64_t i = lo + 1, j = hi;
    for (;;) {
      do ++i; while (greater(pivot, a[i]));
      do --j; while (greater(a[j], pivot));
      if (j < i) break;
      swap_items(a, i, j);
    }
    swap_items(a, lo, j);  // the pivot to its place, j
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

// The position each op selects in a row of n elements with `nans` NaNs (torch's rule above), or -1
// when the answer is not a selection: median's first NaN, nanmedian's row of NaNs.
COLONY_INLINE int64_t select_rank(SelectKind kind, int64_t n, int64_t nans, int64_t k) {
  switch (kind) {
    case SelectKind::Kth:
      return k - 1;
    case SelectKind::Median:
      return nans > 0 ? -1 : (n - 1) / 2;
    case SelectKind::NanMedian:
      return nans == n ? -1 : (n - nans - 1) / 2;
  }
  return -1;
}

// One row x[0, n) of T: fills work[0, n) with its items and returns the number of NaNs, and in
// *first_nan the position of the first (n when none).
template <typename T, typename Item>
COLONY_INLINE int64_t load_row(const T* x, int64_t n, Item* work, int64_t* first_nan) {
  using C = compute_t<T>;
  int64_t nans = 0;
  *first_nan = n;
  for (int64_t i = 0; i < n; ++i) {
    const C v = static_cast<C>(x[i]);
    if (v != v) {
      if (nans++ == 0) *first_nan = i;
    }
    work[i] = Item::make(sort_key(x[i]), i);
  }
  return nans;
}

// The selection of one row as both devices run it (the CPU's median and nanmedian use
// std::nth_element under the same total order instead, for its worst-case bound): `work` holds n
// items of scratch. Writes the selected value and its position in the row.
template <typename T, typename Item>
COLONY_INLINE void select_row(const T* x, int64_t n, SelectKind kind, int64_t k, int64_t all_nan_index, Item* work,
                              T* value, int64_t* index) {
  int64_t first_nan;
  const int64_t nans = load_row(x, n, work, &first_nan);
  const int64_t rank = select_rank(kind, n, nans, k);
  int64_t at;
  if (rank < 0) {
    at = kind == SelectKind::Median ? first_nan : all_nan_index;
  } else if (kind == SelectKind::Kth) {
    quick_select(work, n, rank, KeyGreater());
    at = work[rank].index();
  } else {
    quick_select(work, n, rank, TotalGreater());
    at = work[rank].index();
  }
  *value = x[at];
  *index = at;
}

// For each row r of x [rows, n] (contiguous, n >= 1, dtype `dtype`): values[r] and indices[r] as
// `kind` selects (k for Kth, 1 <= k <= n; all_nan_index for NanMedian, as above).
COLONY_KERNEL(SelectRows, DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t n,
              SelectKind kind, int64_t k, int64_t all_nan_index);

}  // namespace colony::kernels
