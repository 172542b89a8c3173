#include "kernels/common/select.h"

#include <algorithm>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

// Rows per chunk of the thread pool: the project's 16,384 element steps (kernels/cpu/index.cc).
constexpr int64_t kGrainElements = 16384;

// The rows [begin, end) with one scratch row of items per chunk. kthvalue runs select_row's
// quickselect (its ties are torch's); median and nanmedian run std::nth_element under the same
// total order, whose answer is unique, so it names the same element with a worst-case bound.
template <typename T, typename Item>
void select_rows(const T* x, T* values, int64_t* indices, int64_t begin, int64_t end, int64_t n, SelectKind kind,
                 int64_t k, int64_t all_nan_index) {
  std::vector<Item> work(static_cast<size_t>(n));
  for (int64_t r = begin; r < end; ++r) {
    const T* row = x + r * n;
    if (kind == SelectKind::Kth) {
      select_row(row, n, kind, k, all_nan_index, work.data(), values + r, indices + r);
      continue;
    }
    int64_t first_nan;
    const int64_t nans = load_row(row, n, work.data(), &first_nan);
    const int64_t rank = select_rank(kind, n, nans, k);
    int64_t at;
    if (rank < 0) {
      at = kind == SelectKind::Median ? first_nan : all_nan_index;
    } else {
      std::nth_element(work.begin(), work.begin() + rank, work.end());
      at = work[static_cast<size_t>(rank)].index();
    }
    values[r] = row[at];
    indices[r] = at;
  }
}

}  // namespace

void SelectRows::cpu(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t n,
                     SelectKind kind, int64_t k, int64_t all_nan_index) {
  if (rows == 0) return;
  COLONY_DISPATCH_ALL(dtype, "select", [&] {
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* vp = static_cast<scalar_t*>(values);
    using Pair = PairItem<sort_key_t<scalar_t>>;
    cpu::parallel_for(rows, std::max<int64_t>(1, kGrainElements / n), [&](int64_t begin, int64_t end) {
      if constexpr (sizeof(sort_key_t<scalar_t>) == 4) {
        if (n <= (int64_t{1} << 32)) {
          select_rows<scalar_t, PackedItem>(xp, vp, indices, begin, end, n, kind, k, all_nan_index);
          return;
        }
      }
      select_rows<scalar_t, Pair>(xp, vp, indices, begin, end, n, kind, k, all_nan_index);
    });
  });
}

}  // namespace colony::kernels
