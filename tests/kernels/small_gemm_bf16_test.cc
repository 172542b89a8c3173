// The bfloat16 tiles of kernels/cpu/small_gemm_bf16.h against naive float64 loops over the same
// bfloat16 values, for every copy: the emulated one (the tiles' logic with vdpbf16ps' arithmetic,
// on any CPU) and the AVX512_BF16 build where the CPU has it. Products of two bfloat16 are exact
// in float32, so the copies differ from the reference by float32 additions only. The shapes cover
// partial tiles in m and n (masked column loads), odd k (the zero high row of the last pair),
// several k blocks, dot tails shorter than a vector, bias, accumulation and overlapping C rows.
#include "kernels/cpu/small_gemm_bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace colony::kernels::cpu {
namespace {

// Random bfloat16 bits in [-1, 1).
std::vector<uint16_t> random_bf16(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (uint16_t& x : v) x = BFloat16(u(gen)).bits;
  return v;
}
double value(uint16_t bits) { return static_cast<float>(BFloat16::from_bits(bits)); }

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

// float32 sums of k products of magnitude <= 1.
double tolerance(int64_t k) { return 1e-6 * static_cast<double>(k + 1); }

struct RowsCase {
  int64_t m, n, k;
  bool accumulate, bias, overlap;  // overlap: C rows 3 elements apart
};

void check_gemm_rows(const SmallGemmBf16Fns& fns, const RowsCase& t, uint32_t seed) {
  SCOPED_TRACE(std::string(fns.isa) + " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) +
               " k=" + std::to_string(t.k) + (t.accumulate ? " +=" : "") + (t.bias ? " bias" : "") +
               (t.overlap ? " overlapping" : ""));
  // A column-major, as the input gradient's transposed weights could be: packing reads it strided.
  std::vector<uint16_t> a = random_bf16(t.m * t.k, seed);
  const int64_t ars = 1, acs = t.m;
  const int64_t stride = (t.k + 1) / 2;
  std::vector<uint32_t> pairs(t.m * stride + 1, 0xdeadbeefu);
  pack_bf16_pairs(t.m, t.k, a.data(), ars, acs, pairs.data());
  ASSERT_EQ(pairs[t.m * stride], 0xdeadbeefu) << "pack_bf16_pairs wrote past m * ((k + 1) / 2) pairs";
  // B's rows are windows into one buffer 5 elements apart; the last runs to the buffer's end.
  const int64_t b_step = 5;
  std::vector<uint16_t> b = random_bf16(t.k > 0 ? (t.k - 1) * b_step + t.n : 0, seed + 1);
  std::vector<int64_t> b_rows(t.k);
  for (int64_t p = 0; p < t.k; ++p) b_rows[p] = p * b_step;
  std::vector<float> bias = random_floats(t.m, seed + 2);
  const int64_t c_step = t.overlap ? 3 : t.n + 2;
  std::vector<float> c = random_floats((t.m - 1) * c_step + t.n, seed + 3);
  std::vector<int64_t> c_rows(t.m);
  for (int64_t i = 0; i < t.m; ++i) c_rows[i] = i * c_step;

  std::vector<double> want(c.begin(), c.end());
  for (int64_t i = 0; i < t.m; ++i) {  // rows in order, as the contract says
    for (int64_t j = 0; j < t.n; ++j) {
      double s = t.bias && !t.accumulate ? bias[i] : 0.0;
      for (int64_t p = 0; p < t.k; ++p) s += value(a[i * ars + p * acs]) * value(b[b_rows[p] + j]);
      double& out = want[c_rows[i] + j];
      out = t.accumulate ? out + s : s;
    }
  }
  fns.gemm_rows(t.m, t.n, t.k, pairs.data(), stride, b.data(), b_rows.data(), c.data(), c_rows.data(), t.accumulate,
                t.bias ? bias.data() : nullptr);
  const double tol = tolerance(t.k) * (t.overlap ? t.m : 1);
  for (size_t e = 0; e < c.size(); ++e) {
    ASSERT_NEAR(c[e], want[e], tol * (1 + std::abs(want[e]))) << "element " << e;
  }
}

// gemm_rows over B packed by pack_bf16_b_pairs gives gemm_rows' bits: the same products summed in
// the same order, only loaded differently. B is packed from a column-major copy (a weight read
// transposed) into pair rows wider than n.
void check_gemm_rows_paired(const SmallGemmBf16Fns& fns, const RowsCase& t, uint32_t seed) {
  SCOPED_TRACE(std::string(fns.isa) + " paired m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) +
               " k=" + std::to_string(t.k) + (t.accumulate ? " +=" : "") + (t.bias ? " bias" : "") +
               (t.overlap ? " overlapping" : ""));
  std::vector<uint16_t> a = random_bf16(t.m * t.k, seed);
  const int64_t stride = (t.k + 1) / 2;
  std::vector<uint32_t> pairs(t.m * stride);
  pack_bf16_pairs(t.m, t.k, a.data(), t.k, 1, pairs.data());
  std::vector<uint16_t> b = random_bf16(t.k * t.n, seed + 1);  // row-major, rows t.n apart
  std::vector<int64_t> b_rows(t.k);
  for (int64_t p = 0; p < t.k; ++p) b_rows[p] = p * t.n;
  std::vector<uint16_t> b_col(t.k * t.n);  // the same B column-major
  for (int64_t p = 0; p < t.k; ++p)
    for (int64_t j = 0; j < t.n; ++j) b_col[j * t.k + p] = b[p * t.n + j];
  const int64_t ldp = t.n + 3;
  std::vector<uint32_t> b_pairs(stride * ldp + 1, 0xdeadbeefu);
  pack_bf16_b_pairs(t.k, t.n, b_col.data(), 1, t.k, b_pairs.data(), ldp);
  ASSERT_EQ(b_pairs[stride * ldp], 0xdeadbeefu) << "pack_bf16_b_pairs wrote past its pair rows";
  std::vector<int64_t> pair_rows(stride);
  for (int64_t q = 0; q < stride; ++q) pair_rows[q] = q * ldp;
  std::vector<float> bias = random_floats(t.m, seed + 2);
  const int64_t c_step = t.overlap ? 3 : t.n + 2;
  std::vector<float> want = random_floats((t.m - 1) * c_step + t.n, seed + 3), got = want;
  std::vector<int64_t> c_rows(t.m);
  for (int64_t i = 0; i < t.m; ++i) c_rows[i] = i * c_step;
  fns.gemm_rows(t.m, t.n, t.k, pairs.data(), stride, b.data(), b_rows.data(), want.data(), c_rows.data(),
                t.accumulate, t.bias ? bias.data() : nullptr);
  const std::vector<float> c_in = got;
  fns.gemm_rows_paired(t.m, t.n, t.k, pairs.data(), stride, 1, b_pairs.data(), pair_rows.data(), got.data(),
                       c_rows.data(), t.accumulate, t.bias ? bias.data() : nullptr);
  for (size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], want[e]) << "element " << e;
  // A's pairs down its columns instead (pack_bf16_b_pairs of Aᵀ, as gemm packs a column-major A):
  // pair q of row i at q * m + i.
  std::vector<uint16_t> a_col(t.m * t.k);
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t p = 0; p < t.k; ++p) a_col[p * t.m + i] = a[i * t.k + p];
  std::vector<uint32_t> pairs_by_column(stride * t.m);
  pack_bf16_b_pairs(t.k, t.m, a_col.data(), t.m, 1, pairs_by_column.data(), t.m);
  got = c_in;
  fns.gemm_rows_paired(t.m, t.n, t.k, pairs_by_column.data(), 1, t.m, b_pairs.data(), pair_rows.data(), got.data(),
                       c_rows.data(), t.accumulate, t.bias ? bias.data() : nullptr);
  for (size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], want[e]) << "element " << e << ", A by columns";
}

TEST(SmallGemmBf16, PackBPairsPairsRowsOfEitherOrder) {
  // B = [[1, 2], [3, 4], [5, 6]] (k = 3, n = 2): pair rows (1 | 3, 2 | 4) and (5, 6), 3 apart.
  const std::vector<uint16_t> b = {1, 2, 3, 4, 5, 6}, b_col = {1, 3, 5, 2, 4, 6};
  const std::vector<uint32_t> want = {1u | 3u << 16, 2u | 4u << 16, 7u, 5u, 6u, 7u};
  std::vector<uint32_t> got(6, 7u);
  pack_bf16_b_pairs(3, 2, b.data(), 2, 1, got.data(), 3);
  EXPECT_EQ(got, want);
  got.assign(6, 7u);
  pack_bf16_b_pairs(3, 2, b_col.data(), 1, 3, got.data(), 3);
  EXPECT_EQ(got, want);
}

TEST(SmallGemmBf16, GemmRowsOverPairedBIsGemmRowsBitForBit) {
  std::vector<RowsCase> cases;
  for (int64_t m : {1, 6, 7, 13}) {
    for (int64_t n : {1, 15, 16, 17, 48, 65, 100}) {
      for (int64_t k : {1, 2, 9}) cases.push_back({m, n, k, false, k == 9, false});
      cases.push_back({m, n, 9, true, false, false});
    }
  }
  cases.push_back({6, 130, 601, false, true, false});  // several k blocks, odd k
  cases.push_back({8, 70, 400, true, false, false});
  cases.push_back({30, 384, 128, false, false, false});  // the char GPT's forward, 30 rows
  cases.push_back({150, 196, 16, true, false, true});
  uint32_t seed = 500;
  for (const SmallGemmBf16Fns* fns : runnable_bf16_copies()) {
    for (const RowsCase& c : cases) check_gemm_rows_paired(*fns, c, seed++);
  }
}

TEST(SmallGemmBf16, PackPairsPutsEvenElementsLow) {
  // A = [[1, 2, 3], [4, 5, 6]] row-major: pairs (1, 2), (3, 0), (4, 5), (6, 0).
  std::vector<uint16_t> a = {1, 2, 3, 4, 5, 6};
  std::vector<uint32_t> pairs(4);
  pack_bf16_pairs(2, 3, a.data(), 3, 1, pairs.data());
  EXPECT_EQ(pairs, (std::vector<uint32_t>{1u | 2u << 16, 3u, 4u | 5u << 16, 6u}));
  // The same matrix stored column-major.
  pairs.assign(4, 7u);
  std::vector<uint16_t> at = {1, 4, 2, 5, 3, 6};
  pack_bf16_pairs(2, 3, at.data(), 1, 2, pairs.data());
  EXPECT_EQ(pairs, (std::vector<uint32_t>{1u | 2u << 16, 3u, 4u | 5u << 16, 6u}));
}

TEST(SmallGemmBf16, GemmRowsMatchesNaiveLoops) {
  std::vector<RowsCase> cases;
  // Heights 1..13 meet every candidate tile's partial last tile (MR 6, 8, 12); widths around the
  // 16-column vectors and the 32-, 48- and 64-column tiles; k odd and even.
  for (int64_t m : {1, 5, 6, 7, 8, 12, 13}) {
    for (int64_t n : {1, 15, 16, 17, 33, 48, 64, 65, 100}) {
      for (int64_t k : {1, 2, 9}) cases.push_back({m, n, k, false, false, false});
      // The last tile of a wide C overlaps the one before and must store only its own columns:
      // accumulating shows a column stored twice.
      cases.push_back({m, n, 9, true, false, false});
    }
  }
  // k over several blocks (192 rows per block for the 64-column tile), odd and even.
  cases.push_back({6, 130, 601, false, true, false});
  cases.push_back({8, 70, 400, true, false, false});
  cases.push_back({16, 136, 150, false, true, false});   // LeNet conv2 forward
  cases.push_back({6, 892, 75, false, true, false});     // LeNet conv1 forward
  cases.push_back({150, 196, 16, true, false, true});    // LeNet conv2 input gradient (scattered rows)
  cases.push_back({5, 20, 0, false, true, false});       // k = 0: C = bias
  cases.push_back({5, 20, 0, true, false, false});       // k = 0, accumulate: C unchanged
  uint32_t seed = 10;
  for (const SmallGemmBf16Fns* fns : runnable_bf16_copies()) {
    for (const RowsCase& c : cases) check_gemm_rows(*fns, c, seed++);
  }
}

void check_gemm_dot(const SmallGemmBf16Fns& fns, int64_t m, int64_t n, int64_t k, uint32_t seed) {
  SCOPED_TRACE(std::string(fns.isa) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " k=" + std::to_string(k));
  // Two products (a caller's two images), A_t and B_t at t * a_stride and t * b_stride (odd, so
  // the second one's pairs straddle words differently).
  const int64_t lda = k + 3, a_stride = m * lda + 5;
  std::vector<uint16_t> a = random_bf16(2 * a_stride, seed);
  const int64_t b_step = 3;  // odd: B's rows start at odd elements, pairs straddle 32-bit words
  const int64_t b_stride = (n - 1) * b_step + k + 3;
  std::vector<uint16_t> b = random_bf16(b_stride + (n - 1) * b_step + k, seed + 1);  // the last row ends the buffer
  std::vector<int64_t> b_rows(n);
  for (int64_t j = 0; j < n; ++j) b_rows[j] = j * b_step;
  // The first product alone, then both as one batch, into the same lanes; then one finish.
  std::vector<float> acc(m * n * fns.dot_lanes, 0.0f);
  fns.gemm_dot_rows_lanes(m, n, k, a.data(), lda, b.data(), b_rows.data(), acc.data(), DotBatch{});
  fns.gemm_dot_rows_lanes(m, n, k, a.data(), lda, b.data(), b_rows.data(), acc.data(),
                          DotBatch{2, a_stride, b_stride});
  const int64_t ldc = n + 1;
  std::vector<float> c(m * ldc, -7.0f);
  fns.gemm_dot_finish(m, n, acc.data(), c.data(), ldc);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s[2] = {0, 0};
      for (int64_t t = 0; t < 2; ++t)
        for (int64_t p = 0; p < k; ++p)
          s[t] += value(a[t * a_stride + i * lda + p]) * value(b[t * b_stride + b_rows[j] + p]);
      ASSERT_NEAR(c[i * ldc + j], 2 * s[0] + s[1], 3 * tolerance(k) * (1 + std::abs(s[0]) + std::abs(s[1])))
          << "(" << i << ", " << j << ")";
    }
    ASSERT_EQ(c[i * ldc + n], -7.0f) << "finish wrote past row " << i;
  }
}

TEST(SmallGemmBf16, GemmDotMatchesNaiveLoops) {
  uint32_t seed = 100;
  for (const SmallGemmBf16Fns* fns : runnable_bf16_copies()) {
    for (int64_t m : {1, 3, 4, 5, 6, 7, 16}) {
      for (int64_t n : {1, 2, 3, 4, 5, 9, 75}) {
        // k: one element, an odd tail, exactly a vector (32), LeNet's 136 and 892, and over
        // several passes (1536 to 1728 elements each).
        for (int64_t k : {1, 13, 32, 33, 136, 892, 3500}) {
          if (m * n * k > 300000) continue;
          check_gemm_dot(*fns, m, n, k, seed++);
        }
      }
    }
  }
}

// The emulated copy's arithmetic is vdpbf16ps': per float32 lane, += the odd element's product,
// then += the even one's, each rounded. A dot product of 34 elements puts elements 0, 1, 32 and 33
// in lane 0; with products 1, 0, 2^-24 and 2^-24 the lane holds 1 after the first step, and 1 +
// 2^-24 rounds to 1 twice, where adding a step's two products first (or accumulating in float64)
// would give 1 + 2^-23.
TEST(SmallGemmBf16, EmulationAddsEachProductInTheInstructionsOrder) {
  const SmallGemmBf16Fns& fns = bf16_emulated::small_gemm_bf16_fns();
  const uint16_t one = BFloat16(1.0f).bits, tiny = BFloat16(std::ldexp(1.0f, -24)).bits;
  std::vector<uint16_t> a(34, 0), b(34, 0);
  a[0] = b[0] = one;
  a[32] = a[33] = tiny;
  b[32] = b[33] = one;
  std::vector<int64_t> b_rows = {0};
  std::vector<float> acc(fns.dot_lanes, 0.0f);
  fns.gemm_dot_rows_lanes(1, 1, 34, a.data(), 34, b.data(), b_rows.data(), acc.data(), DotBatch{});
  EXPECT_EQ(acc[0], 1.0f) << acc[0] - 1.0f;
  for (int64_t l = 1; l < fns.dot_lanes; ++l) EXPECT_EQ(acc[l], 0.0f) << "lane " << l;
}

TEST(SmallGemmBf16, CopiesDescribeThemselvesAndDispatchFollowsTheCpu) {
  EXPECT_STREQ(bf16_emulated::small_gemm_bf16_fns().isa, "bf16_emulated");
  EXPECT_STREQ(avx512_bf16::small_gemm_bf16_fns().isa, "avx512_bf16");
  EXPECT_EQ(avx512_bf16::small_gemm_bf16_fns().dot_lanes, 16);
  // Native bfloat16 products exactly where AVX512_BF16 is active.
  EXPECT_EQ(has_bf16_small_gemm(), active_cpu_isa() >= CpuIsa::Avx512Bf16);
  {
    ScopedSmallGemmBf16Fns use(&bf16_emulated::small_gemm_bf16_fns());
    EXPECT_TRUE(has_bf16_small_gemm());
    EXPECT_EQ(dot_lanes_bf16(), 16);
    {
      ScopedSmallGemmBf16Fns none(nullptr);
      EXPECT_FALSE(has_bf16_small_gemm());
      EXPECT_THROW(dot_lanes_bf16(), std::logic_error);
    }
    EXPECT_TRUE(has_bf16_small_gemm());
  }
  EXPECT_EQ(has_bf16_small_gemm(), active_cpu_isa() >= CpuIsa::Avx512Bf16);
}

}  // namespace
}  // namespace colony::kernels::cpu
