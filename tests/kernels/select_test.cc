// The selection both devices share (kernels/common/select.h) on the host: select_row, which the
// CUDA kernel runs for every kind (its medians by quick_select under the total order), against the
// CPU kernel (std::nth_element for the medians) and a stable sort, on rows full of ties and NaNs,
// so the GPU's arithmetic is checked without a device.
#include "kernels/common/select.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace colony::kernels {
namespace {

// The element a stable sort (NaN last) puts at `rank` of the row.
int64_t stable_at(const std::vector<float>& row, int64_t rank) {
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sort_key(row[a]) < sort_key(row[b]); });
  return order[static_cast<size_t>(rank)];
}

TEST(Select, SharedRowSelectionMatchesTheCpuKernelAndTheStableSort) {
  std::mt19937 gen(15);
  std::uniform_int_distribution<int> value(0, 5), nan_odds(0, 9);
  for (int64_t n : {1, 2, 3, 7, 16, 17, 100, 1001}) {
    for (int trial = 0; trial < 20; ++trial) {
      const bool with_nans = trial % 2 == 1;
      std::vector<float> row(static_cast<size_t>(n));
      for (float& v : row) v = with_nans && nan_odds(gen) == 0 ? NAN : static_cast<float>(value(gen)) - 2.0f;
      const int64_t nans = std::count_if(row.begin(), row.end(), [](float v) { return std::isnan(v); });
      std::vector<PackedItem> work(static_cast<size_t>(n));
      for (SelectKind kind : {SelectKind::Median, SelectKind::NanMedian, SelectKind::Kth}) {
        const int64_t k = 1 + (trial * 7) % n;
        float shared_value, cpu_value;
        int64_t shared_index, cpu_index;
        select_row(row.data(), n, kind, k, /*all_nan_index=*/0, work.data(), &shared_value, &shared_index);
        SelectRows::cpu(DType::Float32, row.data(), &cpu_value, &cpu_index, 1, n, kind, k, 0);
        EXPECT_EQ(shared_index, cpu_index) << n << " " << trial << " " << static_cast<int>(kind);
        const int64_t rank = select_rank(kind, n, nans, k);
        if (rank >= 0 && kind != SelectKind::Kth) {
          EXPECT_EQ(shared_index, stable_at(row, rank)) << n;
        }
        if (rank >= 0) {
          // kthvalue names torch's quickselect's element among ties; its value is the sort's.
          const float want = row[static_cast<size_t>(stable_at(row, rank))];
          EXPECT_TRUE(shared_value == want || (std::isnan(shared_value) && std::isnan(want))) << n;
        }
      }
    }
  }
}

TEST(Select, RanksAreTorchs) {
  EXPECT_EQ(select_rank(SelectKind::Median, 4, 0, 0), 1);      // the lower median
  EXPECT_EQ(select_rank(SelectKind::Median, 4, 1, 0), -1);     // the first NaN instead
  EXPECT_EQ(select_rank(SelectKind::NanMedian, 5, 2, 0), 1);   // of the 3 numbers
  EXPECT_EQ(select_rank(SelectKind::NanMedian, 5, 5, 0), -1);  // a row of NaNs
  EXPECT_EQ(select_rank(SelectKind::Kth, 5, 2, 5), 4);         // NaNs count as the largest
}

}  // namespace
}  // namespace colony::kernels
