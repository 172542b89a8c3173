// The register-tiled products of kernels/cpu/small_gemm.h against naive loops, for every copy of
// the tiles (small_gemm_isa.h): AVX2, the AVX-512 tiles built for the baseline ISA (which run the
// AVX-512 copy's tile shapes and blocking on any machine), and the real AVX-512 build where the
// CPU has it. The shapes cover partial tiles in m and n, several k blocks and dot-product passes,
// vector tails, bias, accumulation and overlapping output rows.
#include "kernels/cpu/small_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace colony::kernels::cpu {
namespace {

template <typename T>
std::vector<const SmallGemmFns<T>*> every_copy() {
  std::vector<const SmallGemmFns<T>*> copies = {&avx2::small_gemm_fns<T>(), &avx512_emulated::small_gemm_fns<T>()};
  if (detected_cpu_isa() >= CpuIsa::Avx512) copies.push_back(&avx512::small_gemm_fns<T>());
  return copies;
}

template <typename T>
std::vector<T> random_vector(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(gen));
  return v;
}

template <typename T>
double tolerance(int64_t k) {
  return (sizeof(T) == 4 ? 1e-6 : 1e-14) * static_cast<double>(k + 1);
}

struct RowsCase {
  int64_t m, n, k;
  bool col_major_a, accumulate, bias, overlap;  // overlap: C rows 3 elements apart, so they overlap
};

template <typename T>
void check_gemm_rows(const SmallGemmFns<T>& fns, const RowsCase& t, uint32_t seed) {
  SCOPED_TRACE(std::string(fns.isa) + " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) +
               " k=" + std::to_string(t.k) + (t.col_major_a ? " A col-major" : "") + (t.accumulate ? " +=" : "") +
               (t.bias ? " bias" : "") + (t.overlap ? " overlapping" : ""));
  const int64_t ars = t.col_major_a ? 1 : t.k, acs = t.col_major_a ? t.m : 1;
  std::vector<T> a = random_vector<T>(t.m * t.k, seed);
  // B's rows are windows into one buffer, each starting 5 elements after the last and running
  // to the buffer's end for the last row (no slack past it).
  const int64_t b_step = 5;
  std::vector<T> b = random_vector<T>((t.k - 1) * b_step + t.n, seed + 1);
  std::vector<int64_t> b_rows(t.k);
  for (int64_t p = 0; p < t.k; ++p) b_rows[p] = p * b_step;
  std::vector<T> bias = random_vector<T>(t.m, seed + 2);
  const int64_t c_step = t.overlap ? 3 : t.n + 2;
  std::vector<T> c = random_vector<T>((t.m - 1) * c_step + t.n, seed + 3);
  std::vector<int64_t> c_rows(t.m);
  for (int64_t i = 0; i < t.m; ++i) c_rows[i] = i * c_step;

  std::vector<double> want(c.begin(), c.end());
  for (int64_t i = 0; i < t.m; ++i) {  // rows in order, as the contract says
    for (int64_t j = 0; j < t.n; ++j) {
      double s = t.bias && !t.accumulate ? bias[i] : 0.0;  // accumulating ignores the bias
      for (int64_t p = 0; p < t.k; ++p) s += double(a[i * ars + p * acs]) * double(b[b_rows[p] + j]);
      double& out = want[c_rows[i] + j];
      out = t.accumulate ? out + s : s;
    }
  }
  fns.gemm_rows(t.m, t.n, t.k, a.data(), ars, acs, b.data(), b_rows.data(), c.data(), c_rows.data(), t.accumulate,
                t.bias ? bias.data() : nullptr);
  const double tol = tolerance<T>(t.k) * (t.overlap ? t.m : 1);
  for (size_t e = 0; e < c.size(); ++e) {
    ASSERT_NEAR(c[e], want[e], tol * (1 + std::abs(want[e]))) << "element " << e;
  }
}

template <typename T>
void gemm_rows_cases() {
  std::vector<RowsCase> cases;
  uint32_t seed = 10;
  // Heights 1..13 meet every candidate tile's partial last tile (MR up to 12), widths around the
  // vector and tile widths of both ISAs (8, 16, 24, 32, 48, 64 columns), and last tiles of every
  // narrower width (1 to NV - 1 vectors: 65, 84, 100, 120 columns).
  for (int64_t m : {1, 2, 5, 6, 7, 8, 11, 12, 13}) {
    for (int64_t n : {1, 7, 16, 23, 33, 48, 65, 84, 100, 120}) {
      // The last column tile of a wide C recomputes columns of the one before and must store only
      // its own: accumulating shows a column stored twice.
      cases.push_back({m, n, 9, false, false, false, false});
      cases.push_back({m, n, 9, false, true, false, false});
    }
  }
  // k over several panel blocks (96 to 512 rows, depending on the ISA and the tile).
  cases.push_back({6, 130, 600, false, false, true, false});
  cases.push_back({16, 136, 150, false, false, true, false});  // LeNet conv2 forward
  cases.push_back({6, 892, 75, false, false, true, false});    // LeNet conv1 forward
  cases.push_back({150, 196, 16, true, true, false, true});    // LeNet conv2 input gradient (col2im)
  cases.push_back({9, 40, 30, true, true, true, false});
  cases.push_back({5, 20, 0, false, false, true, false});      // k = 0: C = bias
  cases.push_back({5, 20, 0, false, true, false, false});      // k = 0, accumulate: C unchanged
  for (const SmallGemmFns<T>* fns : every_copy<T>()) {
    for (const RowsCase& c : cases) check_gemm_rows(*fns, c, seed++);
  }
}

TEST(SmallGemm, GemmRowsMatchesNaiveLoopsFloat) { gemm_rows_cases<float>(); }
TEST(SmallGemm, GemmRowsMatchesNaiveLoopsDouble) { gemm_rows_cases<double>(); }

template <typename T>
void check_gemm_dot(const SmallGemmFns<T>& fns, int64_t m, int64_t n, int64_t k, uint32_t seed) {
  SCOPED_TRACE(std::string(fns.isa) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " k=" + std::to_string(k));
  // Two products (a caller's two images), A_t and B_t at t * a_stride and t * b_stride.
  const int64_t lda = k + 3, a_stride = m * lda + 5;
  std::vector<T> a = random_vector<T>(2 * a_stride, seed);
  const int64_t b_step = 2, b_stride = (n - 1) * b_step + k + 3;
  std::vector<T> b = random_vector<T>(b_stride + (n - 1) * b_step + k, seed + 1);  // the last row ends the buffer
  std::vector<int64_t> b_rows(n);
  for (int64_t j = 0; j < n; ++j) b_rows[j] = j * b_step;
  // The first product alone, then both as one batch, into the same lanes; then one finish.
  std::vector<T> acc(m * n * fns.dot_lanes, T(0));
  fns.gemm_dot_rows_lanes(m, n, k, a.data(), lda, b.data(), b_rows.data(), acc.data(), DotBatch{});
  fns.gemm_dot_rows_lanes(m, n, k, a.data(), lda, b.data(), b_rows.data(), acc.data(),
                          DotBatch{2, a_stride, b_stride});
  const int64_t ldc = n + 1;
  std::vector<T> c(m * ldc, T(-7));
  fns.gemm_dot_finish(m, n, acc.data(), c.data(), ldc);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s[2] = {0, 0};
      for (int64_t t = 0; t < 2; ++t)
        for (int64_t p = 0; p < k; ++p)
          s[t] += double(a[t * a_stride + i * lda + p]) * double(b[t * b_stride + b_rows[j] + p]);
      const double want = 2 * s[0] + s[1];
      ASSERT_NEAR(c[i * ldc + j], want, 3 * tolerance<T>(k) * (1 + std::abs(s[0]) + std::abs(s[1])))
          << "(" << i << ", " << j << ")";
    }
    ASSERT_EQ(c[i * ldc + n], T(-7)) << "finish wrote past row " << i;
  }
}

template <typename T>
void gemm_dot_cases() {
  uint32_t seed = 100;
  for (const SmallGemmFns<T>* fns : every_copy<T>()) {
    for (int64_t m : {1, 3, 4, 5, 6, 7, 16}) {
      for (int64_t n : {1, 2, 3, 4, 5, 9, 75, 150}) {
        // k: shorter than a vector, masked tails (8 + ...), LeNet's 136 and 892, and over several
        // passes (672 to 1024 pixels each).
        for (int64_t k : {3, 8, 13, 24, 136, 892, 2100}) {
          if (m * n * k > 400000) continue;
          check_gemm_dot(*fns, m, n, k, seed++);
        }
      }
    }
  }
}

// A row's tail is read as the whole vector that ends it, with the lanes already summed masked in
// both operands: an infinity there must stay counted once, an infinity (not the NaN of 0 * inf).
TEST(SmallGemm, GemmDotTailKeepsInfinities) {
  for (const SmallGemmFns<float>* fns : every_copy<float>()) {
    SCOPED_TRACE(fns->isa);
    const int64_t k = 20;  // one or two whole steps, then a tail overlapping pixel 13
    std::vector<float> a(k, 1.0f), b(k, 0.5f);
    b[13] = INFINITY;
    const int64_t row = 0;
    std::vector<float> acc(fns->dot_lanes, 0.0f);
    fns->gemm_dot_rows_lanes(1, 1, k, a.data(), k, b.data(), &row, acc.data(), DotBatch{});
    float c = 0;
    fns->gemm_dot_finish(1, 1, acc.data(), &c, 1);
    EXPECT_EQ(c, INFINITY);
    b[13] = 0.5f;
    a[13] = 3.0f;  // the tail counts pixel 13 once: 19 * 0.5 + 1.5
    std::fill(acc.begin(), acc.end(), 0.0f);
    fns->gemm_dot_rows_lanes(1, 1, k, a.data(), k, b.data(), &row, acc.data(), DotBatch{});
    fns->gemm_dot_finish(1, 1, acc.data(), &c, 1);
    EXPECT_EQ(c, 11.0f);
  }
}

TEST(SmallGemm, GemmDotMatchesNaiveLoopsFloat) { gemm_dot_cases<float>(); }
TEST(SmallGemm, GemmDotMatchesNaiveLoopsDouble) { gemm_dot_cases<double>(); }

TEST(SmallGemm, CopiesDescribeThemselves) {
  EXPECT_STREQ(avx2::small_gemm_fns<float>().isa, "avx2");
  EXPECT_EQ(avx2::small_gemm_fns<float>().dot_lanes, 8);
  EXPECT_EQ(avx2::small_gemm_fns<double>().dot_lanes, 4);
  EXPECT_STREQ(avx512::small_gemm_fns<float>().isa, "avx512");
  EXPECT_EQ(avx512::small_gemm_fns<float>().dot_lanes, 8);  // 16 lanes folded to 8 (small_gemm_tiles.h)
  EXPECT_EQ(avx512_emulated::small_gemm_fns<float>().dot_lanes, 8);
  EXPECT_EQ(avx512_emulated::small_gemm_fns<double>().dot_lanes, 8);
}

TEST(SmallGemm, DispatchesToTheCpusIsaAndObeysTheOverride) {
  // The float tables have no bfloat16 level: an AVX512_BF16 CPU runs the avx512 ones.
  const char* want = active_cpu_isa() >= CpuIsa::Avx512 ? "avx512" : "avx2";
  EXPECT_STREQ(active_small_gemm_fns<float>().isa, want);
  EXPECT_EQ(dot_lanes<float>(), active_small_gemm_fns<float>().dot_lanes);
  {
    ScopedSmallGemmFns use(avx512_emulated::small_gemm_fns<float>(), avx512_emulated::small_gemm_fns<double>());
    EXPECT_STREQ(active_small_gemm_fns<float>().isa, "avx512_emulated");
    EXPECT_EQ(dot_lanes<double>(), 8);
  }
  EXPECT_STREQ(active_small_gemm_fns<float>().isa, want);
}

}  // namespace
}  // namespace colony::kernels::cpu
