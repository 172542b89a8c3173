#include "kernels/common/sort.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {

void SortWorkspaceBytes::cpu(DType, int64_t, int64_t, bool, size_t* bytes) { *bytes = 0; }

void SortRows::cpu(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t n, int64_t k,
                   bool descending, void*) {
  COLONY_DISPATCH_ALL(dtype, "sort", [&] {
    using K = sort_key_t<scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* vp = static_cast<scalar_t*>(values);
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n));
    cpu::parallel_for(rows, grain, [&](int64_t b, int64_t e) {
      std::vector<std::pair<K, int64_t>> row(n);
      for (int64_t r = b; r < e; ++r) {
        const scalar_t* xr = xp + r * n;
        for (int64_t i = 0; i < n; ++i) row[i] = {sort_key(xr[i]), i};
        // Ties broken by position make the order total, so std::sort and std::partial_sort give
        // exactly the stable order.
        auto less = [descending](const std::pair<K, int64_t>& a, const std::pair<K, int64_t>& c) {
          if (a.first != c.first) return descending ? a.first > c.first : a.first < c.first;
          return a.second < c.second;
        };
        if (k < n) {
          std::partial_sort(row.begin(), row.begin() + k, row.end(), less);
        } else {
          std::sort(row.begin(), row.end(), less);
        }
        for (int64_t j = 0; j < k; ++j) {
          vp[r * k + j] = xr[row[j].second];
          indices[r * k + j] = row[j].second;
        }
      }
    });
  });
}

}  // namespace colony::kernels
