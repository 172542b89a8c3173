// The CPU reductions (kernels/cpu/reduce.cc) on raw buffers against naive loops in double: sums
// over rows ([outer, len]) and columns ([outer, len, inner]), their accuracy on long rows, integer
// inputs summed exactly into int64, variance with corrections, max/min with NaNs and ties, and one
// and two threads (a long row is cut into pieces only when threads would otherwise idle); sums the
// same bits on any thread count, in the serial order of additions.
#include "kernels/cpu/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "tests/kernels/kernel_testing.h"
#include "tests/test_util.h"

namespace colony::kernels::cpu {
namespace {

using namespace colony::testing;  // NOLINT(build/namespaces): the references and helpers of the kernel tests

// y[o, i] = scale * sum_r x[o, r, i], in double.
std::vector<double> naive_sum(const std::vector<double>& x, int64_t outer, int64_t len, int64_t inner, double scale) {
  std::vector<double> y(outer * inner, 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < len; ++r)
      for (int64_t i = 0; i < inner; ++i) y[o * inner + i] += x[(o * len + r) * inner + i];
  for (double& v : y) v *= scale;
  return y;
}

// |got - want| <= rtol * (1 + magnitude), where magnitude is the same sum over |x|: a rounding
// error scales with the terms summed, not with a result that cancelled to near zero.
void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                     const std::vector<double>& magnitude, double rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rtol * (1.0 + magnitude[i])) << "element " << i;
}

std::vector<double> abs_values(std::vector<double> v) {
  for (double& x : v) x = std::abs(x);
  return v;
}

TEST(SumKernel, RowsAndColumnsMatchNaiveForEdgeShapes) {
  struct Case {
    int64_t outer, len, inner;
  };
  // One element; rows shorter and longer than a 128-element leaf; an odd tail; columns narrower
  // and wider than a 256-column task and taller than a 64-row block; an empty reduction (zeros).
  for (const Case& c : {Case{1, 1, 1}, Case{3, 127, 1}, Case{2, 1000, 1}, Case{5, 9, 1}, Case{2, 70, 3},
                        Case{1, 130, 300}, Case{3, 1, 7}, Case{2, 0, 1}, Case{2, 0, 5}}) {
    SCOPED_TRACE(std::to_string(c.outer) + " x " + std::to_string(c.len) + " x " + std::to_string(c.inner));
    std::vector<double> x = random_values(c.outer * c.len * c.inner, 7);
    std::vector<double> ref = naive_sum(x, c.outer, c.len, c.inner, 0.5);
    std::vector<double> magnitude = naive_sum(abs_values(x), c.outer, c.len, c.inner, 0.5);
    for (int threads : {1, 2}) {
      ScopedThreads use(threads);
      std::vector<double> y64(c.outer * c.inner, 99.0);
      sum(DType::Float64, x.data(), DType::Float64, y64.data(), c.outer, c.len, c.inner, 0.5);
      expect_near_all(y64, ref, magnitude, 1e-15);
      std::vector<float> x32 = cast<float>(x), y32(c.outer * c.inner, 99.0f);
      sum(DType::Float32, x32.data(), DType::Float32, y32.data(), c.outer, c.len, c.inner, 0.5);
      expect_near_all(cast<double>(y32), naive_sum(cast<double>(x32), c.outer, c.len, c.inner, 0.5), magnitude, 1e-7);
    }
  }
}

// 2^20 float32 copies of 0.1f: a running float32 sum drifts by about 1e-3 of the total, pairwise
// summation stays within a few float32 roundings (1e-6) on 1 thread and on 2 (two pieces).
TEST(SumKernel, LongRowsKeepFloat32Accuracy) {
  const int64_t n = int64_t{1} << 20;
  std::vector<float> x(n, 0.1f);
  const double exact = static_cast<double>(n) * static_cast<double>(0.1f);
  for (int threads : {1, 2}) {
    ScopedThreads use(threads);
    float y = 0;
    sum(DType::Float32, x.data(), DType::Float32, &y, 1, n, 1, 1.0);
    EXPECT_NEAR(y, exact, exact * 1e-6) << threads << " thread(s)";
    std::vector<float> cols(3 * n / 4, 0.1f);  // the same along columns: [1, n / 4, 3]
    std::vector<float> yc(3);
    sum(DType::Float32, cols.data(), DType::Float32, yc.data(), 1, n / 4, 3, 1.0);
    for (float v : yc) EXPECT_NEAR(v, exact / 4, exact / 4 * 1e-6) << threads << " thread(s)";
  }
}

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The contract's order of additions, written out serially: float32 pairwise over a row, splitting
// n at (n / 2 + 7) / 8 * 8 down to leaves of 128 summed by 8 interleaved accumulators.
float pairwise_reference(const float* x, int64_t n) {
  if (n <= 128) {
    float a[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) a[k] += x[i + k];
    float tail = 0;
    for (; i < n; ++i) tail += x[i];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) + tail;
  }
  const int64_t left = (n / 2 + 7) / 8 * 8;
  return pairwise_reference(x, left) + pairwise_reference(x + left, n - left);
}

// Columns: rows summed in blocks of 64, the blocks' sums combined by one binary counter over all
// of them (level l holds 2^l blocks), the levels added to zero lowest first.
std::vector<float> column_reference(const float* x, int64_t len, int64_t inner) {
  std::vector<std::vector<float>> level;
  std::vector<bool> used;
  for (int64_t r0 = 0; r0 < len; r0 += 64) {
    std::vector<float> blk(static_cast<size_t>(inner), 0.0f);
    for (int64_t r = r0; r < std::min(len, r0 + 64); ++r)
      for (int64_t j = 0; j < inner; ++j) blk[j] += x[r * inner + j];
    size_t l = 0;
    for (; l < used.size() && used[l]; ++l) {
      for (int64_t j = 0; j < inner; ++j) blk[j] += level[l][j];
      used[l] = false;
    }
    if (l == used.size()) {
      used.push_back(false);
      level.emplace_back();
    }
    level[l] = blk;
    used[l] = true;
  }
  std::vector<float> out(static_cast<size_t>(inner), 0.0f);
  for (size_t l = 0; l < used.size(); ++l)
    if (used[l])
      for (int64_t j = 0; j < inner; ++j) out[j] += level[l][j];
  return out;
}

// Sums are the same bits on any number of threads, and equal the serial order of additions: a
// long row cut into pieces along pairwise summation's own tree, columns split into groups of
// rows (a linear layer's bias gradient: [768, 128]) that a counter over the groups adds up in
// the one counter's order, and columns split into tasks of up to 2,048 (the width-384 GPT's
// [B * T, 1536]; wider than one task, with a partial last one). Lengths off the powers of two,
// with a partial last group.
TEST(SumKernel, SplitsKeepTheSerialOrderOfAdditionsOnAnyThreadCount) {
  for (int64_t len : {int64_t{40000}, int64_t{100001}, int64_t{1} << 20, int64_t{3000007}}) {
    std::vector<float> x = cast<float>(random_values(len, 11));
    const float want = pairwise_reference(x.data(), len);
    for (int threads : {1, 2, 3, 4, 7}) {
      ScopedThreads use(threads);
      float y = 0;
      sum(DType::Float32, x.data(), DType::Float32, &y, 1, len, 1, 1.0);
      EXPECT_EQ(bits_of(y), bits_of(want)) << "row of " << len << ", " << threads << " thread(s)";
    }
  }
  struct Case {
    int64_t outer, len, inner;
  };
  for (const Case& c : {Case{1, 768, 128}, Case{1, 768, 384}, Case{2, 1000, 65}, Case{1, 64 * 300 + 5, 130},
                        Case{3, 200, 300}, Case{1, 64 * 4096 + 1, 3}, Case{1, 64 * 70 + 3, 1536},
                        Case{1, 64 * 9 + 7, 2048 + 300}, Case{2, 50, 2500}}) {
    SCOPED_TRACE(std::to_string(c.outer) + " x " + std::to_string(c.len) + " x " + std::to_string(c.inner));
    std::vector<float> x = cast<float>(random_values(c.outer * c.len * c.inner, 12));
    std::vector<float> want;
    for (int64_t o = 0; o < c.outer; ++o) {
      std::vector<float> part = column_reference(x.data() + o * c.len * c.inner, c.len, c.inner);
      want.insert(want.end(), part.begin(), part.end());
    }
    for (int threads : {1, 2, 3}) {
      ScopedThreads use(threads);
      std::vector<float> y(static_cast<size_t>(c.outer * c.inner), 99.0f);
      sum(DType::Float32, x.data(), DType::Float32, y.data(), c.outer, c.len, c.inner, 1.0);
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_EQ(bits_of(y[i]), bits_of(want[i])) << "column " << i << ", " << threads << " thread(s)";
    }
  }
}

TEST(SumKernel, IntegersSumExactlyIntoInt64) {
  std::vector<int32_t> x = {2000000000, 2000000000, -7, 1};
  int64_t y = 0;
  sum(DType::Int32, x.data(), DType::Int64, &y, 1, 4, 1, 1.0);
  EXPECT_EQ(y, int64_t{4000000000} - 6);  // past int32's range
  std::vector<uint8_t> flags = {1, 0, 1, 1, 1, 0};  // bool
  std::vector<int64_t> counts(2);
  sum(DType::Bool, flags.data(), DType::Int64, counts.data(), 2, 3, 1, 1.0);
  EXPECT_EQ(counts, (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { sum(DType::Int32, x.data(), DType::Int32, &y, 1, 4, 1, 1.0); }, "sum: a int32 input sums to int64, not int32"));
}

TEST(VarKernel, MatchesTwoPassDoubleWithEveryCorrection) {
  for (int64_t len : {1, 2, 9, 300, 70000}) {  // up to many 128-element leaves
    std::vector<double> x = random_values(2 * len, 11, 3.0, 5.0);  // an offset mean, as activations have
    for (int64_t correction : {0, 1}) {
      SCOPED_TRACE("len " + std::to_string(len) + " correction " + std::to_string(correction));
      std::vector<double> ref(2);
      for (int64_t r = 0; r < 2; ++r) {
        double mean = 0, m2 = 0;
        for (int64_t i = 0; i < len; ++i) mean += x[r * len + i] / static_cast<double>(len);
        for (int64_t i = 0; i < len; ++i) m2 += (x[r * len + i] - mean) * (x[r * len + i] - mean);
        ref[r] = m2 / static_cast<double>(len - correction);  // 0 / 0 = NaN for one element, correction 1
      }
      for (int threads : {1, 2}) {
        ScopedThreads use(threads);
        std::vector<double> y(2);
        var(DType::Float64, x.data(), y.data(), 2, len, correction);
        for (int r = 0; r < 2; ++r) {
          if (std::isnan(ref[r])) {
            EXPECT_TRUE(std::isnan(y[r]));
          } else {
            EXPECT_NEAR(y[r], ref[r], 1e-12 * ref[r]) << "row " << r << ", " << threads << " thread(s)";
          }
        }
        std::vector<float> x32 = cast<float>(x), y32(2);
        var(DType::Float32, x32.data(), y32.data(), 2, len, correction);
        if (!std::isnan(ref[0])) {
          EXPECT_NEAR(y32[0], ref[0], 1e-4 * ref[0]);
        }
      }
    }
  }
  double empty_row_var = 0;
  var(DType::Float64, nullptr, &empty_row_var, 1, 0, 0);
  EXPECT_TRUE(std::isnan(empty_row_var));  // no mean: NaN, as PyTorch
}

// A long row's variance merges its pieces' moments in piece order; the pieces follow the shape,
// so 1 to 7 threads give the same bits (they were one piece per thread).
TEST(VarKernel, SameBitsOnAnyThreadCount) {
  for (int64_t len : {int64_t{50001}, int64_t{1} << 20}) {
    std::vector<double> x = random_values(len, 13, 3.0, 5.0);  // float64: the moments' last bits show
    double want = 0;
    {
      ScopedThreads use(1);
      var(DType::Float64, x.data(), &want, 1, len, 1);
    }
    for (int threads : {2, 3, 4, 7}) {
      ScopedThreads use(threads);
      double y = 0;
      var(DType::Float64, x.data(), &y, 1, len, 1);
      EXPECT_EQ(y, want) << len << " elements, " << threads << " threads";
    }
  }
}

TEST(MaxMinKernel, FirstOccurrenceWinsAndTheFirstNaNIsTheExtreme) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Row 0: a tie for the max (index 1) and the min (index 0); row 1: NaNs at 2 and 4 (2 wins).
  std::vector<double> x = {1, 5, 5, 1, 2, 0, 9, nan, 3, nan};
  std::vector<double> values(2);
  std::vector<int64_t> idx(2);
  max_min(DType::Float64, x.data(), values.data(), idx.data(), 2, 5, /*is_max=*/true);
  EXPECT_EQ(values[0], 5);
  EXPECT_EQ(idx, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(std::isnan(values[1]));
  max_min(DType::Float64, x.data(), values.data(), idx.data(), 2, 5, /*is_max=*/false);
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(idx, (std::vector<int64_t>{0, 2}));
  // Values or indices may be left out.
  std::vector<int32_t> ints = {4, -2, 7, 7};
  int64_t at = -1;
  max_min(DType::Int32, ints.data(), nullptr, &at, 1, 4, true);
  EXPECT_EQ(at, 2);
  int32_t lowest = 0;
  max_min(DType::Int32, ints.data(), &lowest, nullptr, 1, 4, false);
  EXPECT_EQ(lowest, -2);
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { max_min(DType::Float64, x.data(), values.data(), idx.data(), 2, 0, true); }, "max_min: rows must not be empty"));
}

// One long row is cut into pieces on 2 threads: the pieces are merged in order, so the answer is
// the first occurrence either way, including a maximum repeated in both halves.
TEST(MaxMinKernel, OneAndTwoThreadsFindTheSameFirstOccurrence) {
  const int64_t n = 100000;
  std::vector<float> x = cast<float>(random_values(n, 13));
  x[70000] = 2.0f;
  x[30000] = 2.0f;  // the first of two maxima, in the first piece
  x[90000] = -2.0f;
  for (int threads : {1, 2}) {
    ScopedThreads use(threads);
    float v = 0;
    int64_t i = -1;
    max_min(DType::Float32, x.data(), &v, &i, 1, n, true);
    EXPECT_EQ(i, 30000) << threads << " thread(s)";
    max_min(DType::Float32, x.data(), &v, &i, 1, n, false);
    EXPECT_EQ(i, 90000) << threads << " thread(s)";
    EXPECT_EQ(v, -2.0f);
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
