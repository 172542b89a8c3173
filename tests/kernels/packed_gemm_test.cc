// packed_gemm.h's blocked product against a naive double loop, on every copy of its micro-kernel
// (small_gemm_isa.h): AVX2 (6 x 16 floats), the AVX-512 copy built for the baseline ISA (6 x 64,
// its blocking, on any machine) and the real AVX-512 build where the CPU has it. The shapes cross
// every block edge: partial row tiles and panels, k past one packed block (kc), m past one block of
// rows (mc) and n past one packed block of B (nc), in every layout of A and B, with alpha and beta,
// a C wider than the product, and the thread count changing no bit of the result; and the bias
// epilogue.
#include "kernels/cpu/packed_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/test_util.h"

namespace colony::kernels::cpu {
namespace {

using colony::testing::ScopedThreads;

struct Copy {
  const char* name;
  const SmallGemmFns<float>* f32;
  const SmallGemmFns<double>* f64;
};

std::vector<Copy> every_copy() {
  std::vector<Copy> copies = {{"avx2", &avx2::small_gemm_fns<float>(), &avx2::small_gemm_fns<double>()},
                              {"avx512_emulated", &avx512_emulated::small_gemm_fns<float>(),
                               &avx512_emulated::small_gemm_fns<double>()}};
  if (detected_cpu_isa() >= CpuIsa::Avx512) {
    copies.push_back({"avx512", &avx512::small_gemm_fns<float>(), &avx512::small_gemm_fns<double>()});
  }
  return copies;
}

// Float32 values in [-1, 1), so that one reference serves both types.
std::vector<double> float_values(int64_t n, uint32_t seed) {
  using colony::testing::cast;
  return cast<double>(cast<float>(colony::testing::random_values(n, seed)));
}

struct Shape {
  int64_t m, n, k;
};

// A [m, k] (row-major, or column-major when a_t), B [k, n] likewise, C [m, ldc].
struct Problem {
  Shape s;
  bool a_t, b_t;
  int64_t ldc;
  std::vector<double> a, b, c;
  int64_t ars() const { return a_t ? 1 : s.k; }
  int64_t acs() const { return a_t ? s.m : 1; }
  int64_t brs() const { return b_t ? 1 : s.n; }
  int64_t bcs() const { return b_t ? s.k : 1; }
};

Problem make_problem(Shape s, bool a_t, bool b_t, int64_t ldc, uint32_t seed) {
  return Problem{s, a_t, b_t, ldc, float_values(s.m * s.k, seed), float_values(s.k * s.n, seed + 1),
                 float_values(s.m * ldc, seed + 2)};
}

std::vector<double> naive(const Problem& p, double alpha, double beta) {
  std::vector<double> out = p.c;
  for (int64_t i = 0; i < p.s.m; ++i)
    for (int64_t j = 0; j < p.s.n; ++j) {
      double sum = 0;
      for (int64_t q = 0; q < p.s.k; ++q) sum += p.a[i * p.ars() + q * p.acs()] * p.b[q * p.brs() + j * p.bcs()];
      double& y = out[i * p.ldc + j];
      y = alpha * sum + (beta == 0 ? 0.0 : beta * y);
    }
  return out;
}

template <typename T>
std::vector<double> run(const Problem& p, double alpha, double beta) {
  using colony::testing::cast;
  const std::vector<T> a = cast<T>(p.a), b = cast<T>(p.b);
  std::vector<T> c = cast<T>(p.c);
  packed_gemm<T>(p.s.m, p.s.n, p.s.k, a.data(), p.ars(), p.acs(), b.data(), p.brs(), p.bcs(), c.data(), p.ldc,
                 static_cast<T>(alpha), static_cast<T>(beta));
  return cast<double>(c);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << "element " << i;
  }
}

TEST(PackedGemm, EveryCopyLayoutAndBlockEdgeMatchesNaive) {
  // kc is 384 (AVX-512, A row-major, or column-major in a product at least 384 wide), 128
  // (AVX-512, a narrower column-major A) or 256 (AVX2); mc and nc follow (256 KiB of A's rows,
  // 1 MiB of B): mc 84 to 512 rows, nc 320 to 2048 columns.
  const std::vector<Shape> shapes = {
      {1, 1, 1},      // one element: a tile of one row, a panel of one column
      {5, 3, 7},      // everything partial
      {13, 70, 9},    // a whole and a partial panel, a partial row tile
      {37, 129, 400},  // k past kc (384 for AVX-512 with a row-major A, else 128 or 256)
      {600, 20, 140},  // m past mc: several blocks of rows per chunk
      {7, 2100, 150},  // n past nc: several packed blocks of B
      {9, 2100, 397},  // both, k's last block short and not a multiple of 8: each block packed on its own
      {37, 260, 129},  // wide enough that a column-major A is packed into row tiles (kPackARowsMinWidth)
      {180, 400, 390},  // column-major A 384 deep, packed: past mc (168 rows) and one block of k
  };
  uint32_t seed = 1;
  for (const Copy& copy : every_copy()) {
    ScopedSmallGemmFns use(*copy.f32, *copy.f64);
    for (const Shape& s : shapes) {
      for (bool a_t : {false, true}) {
        for (bool b_t : {false, true}) {
          // C as wide as the product, and wider (columns past n must stay as they were).
          for (int64_t extra : {0, 3}) {
            const Problem p = make_problem(s, a_t, b_t, s.n + extra, seed += 3);
            for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-1.5, 0.5}}) {
              SCOPED_TRACE(std::string(copy.name) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                           " k=" + std::to_string(s.k) + (a_t ? " A^T" : "") + (b_t ? " B^T" : "") +
                           " ldc=" + std::to_string(p.ldc) + " alpha=" + std::to_string(alpha) +
                           " beta=" + std::to_string(beta));
              const std::vector<double> want = naive(p, alpha, beta);
              expect_close(run<float>(p, alpha, beta), want, 2e-6 * static_cast<double>(s.k));
              expect_close(run<double>(p, alpha, beta), want, 1e-14 * static_cast<double>(s.k));
            }
          }
        }
      }
    }
  }
}

// A column-major A packed into row tiles under several blocks of columns is packed once, during the
// first, and its tiles kept for the others (packed_gemm.cc's kKeptABytes): at (180, 700, 390) under
// AVX-512 past mc (168 rows), one block of k (384) and nc (320 columns beside a kept A), so the
// later blocks of columns read tiles of every row block and depth; float64's narrower panels keep A
// there too. Under AVX2 (nc 1,024) the product runs as one block of columns. Only A^T: a row-major
// A is read in place.
TEST(PackedGemm, KeptPackedATilesServeEveryBlockOfColumns) {
  const Shape s{180, 700, 390};
  uint32_t seed = 7;
  for (const Copy& copy : every_copy()) {
    ScopedSmallGemmFns use(*copy.f32, *copy.f64);
    for (bool b_t : {false, true}) {
      const Problem p = make_problem(s, true, b_t, s.n + 3, seed += 3);
      for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-1.5, 0.5}}) {
        SCOPED_TRACE(std::string(copy.name) + (b_t ? " B^T" : "") + " alpha=" + std::to_string(alpha));
        const std::vector<double> want = naive(p, alpha, beta);
        expect_close(run<float>(p, alpha, beta), want, 2e-6 * static_cast<double>(s.k));
        expect_close(run<double>(p, alpha, beta), want, 1e-14 * static_cast<double>(s.k));
      }
    }
  }
}

// Views inside larger buffers (leading dimensions past the extents: a slice of a wider matrix, or
// its transpose), so the packing reads rows and columns lda / ldb apart rather than k or n; with
// k and n cut into blocks of equal size (under AVX-512 with a row-major A, 1,928 deep is five
// blocks of 328 and one of 288, 1,990 wide three of 512 columns and one of 454), k not a multiple
// of the 8-step groups B's columns are transposed in.
TEST(PackedGemm, StridedViewsAndBalancedBlocksMatchNaive) {
  const std::vector<Shape> shapes = {{7, 70, 1928}, {5, 1990, 13}, {40, 200, 1003}};
  uint32_t seed = 500;
  for (const Copy& copy : every_copy()) {
    ScopedSmallGemmFns use(*copy.f32, *copy.f64);
    for (const Shape& s : shapes) {
      // The four layouts: bit 0, A column-major (a transposed view); bit 1, B.
      for (int layout = 0; layout < 4; ++layout) {
        const bool a_t = (layout & 1) != 0, b_t = (layout & 2) != 0;
        SCOPED_TRACE(std::string(copy.name) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                     " k=" + std::to_string(s.k) + (a_t ? " A^T" : "") + (b_t ? " B^T" : ""));
        // A [m, k] stored in a buffer with leading dimension lda = its inner extent + 5, B
        // likewise + 11; the padding holds NaNs, which must never be read.
        const int64_t a_outer = a_t ? s.k : s.m, a_inner = a_t ? s.m : s.k;
        const int64_t b_outer = b_t ? s.n : s.k, b_inner = b_t ? s.k : s.n;
        const int64_t lda = a_inner + 5, ldb = b_inner + 11;
        const std::vector<double> av = float_values(a_outer * a_inner, seed += 2);
        const std::vector<double> bv = float_values(b_outer * b_inner, seed + 1);
        std::vector<float> a(static_cast<size_t>(a_outer * lda), std::numeric_limits<float>::quiet_NaN());
        std::vector<float> b(static_cast<size_t>(b_outer * ldb), std::numeric_limits<float>::quiet_NaN());
        for (int64_t o = 0; o < a_outer; ++o)
          for (int64_t i = 0; i < a_inner; ++i) a[o * lda + i] = static_cast<float>(av[o * a_inner + i]);
        for (int64_t o = 0; o < b_outer; ++o)
          for (int64_t i = 0; i < b_inner; ++i) b[o * ldb + i] = static_cast<float>(bv[o * b_inner + i]);
        const int64_t ars = a_t ? 1 : lda, acs = a_t ? lda : 1, brs = b_t ? 1 : ldb, bcs = b_t ? ldb : 1;
        std::vector<float> c(static_cast<size_t>(s.m * s.n), std::numeric_limits<float>::quiet_NaN());
        packed_gemm<float>(s.m, s.n, s.k, a.data(), ars, acs, b.data(), brs, bcs, c.data(), s.n, 1.0f, 0.0f);
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t j = 0; j < s.n; ++j) {
            double want = 0;
            for (int64_t q = 0; q < s.k; ++q)
              want += static_cast<double>(a[i * ars + q * acs]) * static_cast<double>(b[q * brs + j * bcs]);
            ASSERT_NEAR(c[i * s.n + j], want, 2e-6 * static_cast<double>(s.k) * (1.0 + std::abs(want)))
                << "C(" << i << ", " << j << ")";
          }
      }
    }
  }
}

// The pool splits a product taller than wide by groups of rows (each thread packing all of B), else
// by groups of whole panels of columns, or by rows under one packed B where the panels do not
// share out evenly; each element's sum runs in the same order whatever the split. Each shape's
// split on each copy is checked, so that all three run: AVX-512 panels are 64 floats (32 doubles)
// wide, AVX2's 16 (8); both copies' row tiles are 6 rows.
TEST(PackedGemm, ThreadCountChangesNoBit) {
  struct Case {
    Shape s;
    int threads;
    int64_t row_groups;                   // packed_gemm_row_groups<float>
    int64_t groups_avx2, groups_avx512;  // packed_gemm_column_groups<float>
  };
  const std::vector<Case> cases = {
      // Taller than wide: rows, 51 row tiles cut 25 / 26 (the second group's last tile partial).
      {{301, 200, 300}, 2, 2, 1, 1},
      // 3 threads, 117 row tiles of which the last is partial: 39 per group.
      {{700, 64, 50}, 3, 3, 1, 1},
      // Taller than wide but under 256K multiply-adds per thread: no split at all.
      {{100, 20, 16}, 2, 1, 1, 1},
      // Wider than tall: 16 AVX2 panels and 4 AVX-512 panels: columns.
      {{200, 256, 300}, 2, 1, 2, 2},
      // 19 AVX2 panels (odd, but 9 and 10 per group): columns; 5 AVX-512 panels (odd, under 8 per
      // thread): rows under one packed B.
      {{200, 301, 300}, 2, 1, 2, 1},
      // 132 AVX2 panels (66 per group, 1,056 columns, past AVX2's nc of 1,024); 33 AVX-512 panels
      // (odd, but 16 and 17 per group: 1,024 and 1,076 columns, past nc = 640 where A is row-major);
      // k past every kc, its last block short.
      {{20, 2100, 397}, 2, 1, 2, 2},
      // 5 AVX-512 panels: rows; 20 AVX2 panels: columns.
      {{130, 320, 20}, 2, 1, 2, 1},
      // 11 AVX-512 panels (odd, under 8 per thread: rows under one packed B) past nc = 640, so a
      // column-major A's row tiles are packed by the pool's threads and kept for the second block of
      // columns; 44 AVX2 panels: columns.
      {{200, 700, 390}, 2, 1, 2, 1},
      // 3 threads: 44 AVX2 panels each, 11 AVX-512 panels each.
      {{20, 2100, 397}, 3, 1, 3, 3},
      // Too little work to split (under 256K multiply-adds per thread): one group, one chunk of rows.
      {{64, 128, 16}, 2, 1, 1, 1},
  };
  for (const Copy& copy : every_copy()) {
    SCOPED_TRACE(copy.name);
    ScopedSmallGemmFns use(*copy.f32, *copy.f64);
    const bool avx2 = std::string(copy.name) == "avx2";
    for (const Case& c : cases) {
      SCOPED_TRACE("m=" + std::to_string(c.s.m) + " n=" + std::to_string(c.s.n) + " k=" + std::to_string(c.s.k) +
                   " threads=" + std::to_string(c.threads));
      for (bool a_t : {false, true}) {
        for (bool b_t : {false, true}) {
          const Problem p = make_problem(c.s, a_t, b_t, c.s.n + 1, 40);
          std::vector<double> one, many;
          {
            ScopedThreads threads(1);
            EXPECT_EQ(packed_gemm_row_groups<float>(c.s.m, c.s.n, c.s.k), 1);
            EXPECT_EQ(packed_gemm_column_groups<float>(c.s.m, c.s.n, c.s.k), 1);
            one = run<float>(p, 1.0, 0.0);
          }
          {
            ScopedThreads threads(c.threads);
            EXPECT_EQ(packed_gemm_row_groups<float>(c.s.m, c.s.n, c.s.k), c.row_groups);
            EXPECT_EQ(packed_gemm_column_groups<float>(c.s.m, c.s.n, c.s.k), avx2 ? c.groups_avx2 : c.groups_avx512);
            many = run<float>(p, 1.0, 0.0);
            expect_close(run<double>(p, -1.5, 0.5), naive(p, -1.5, 0.5), 1e-14 * static_cast<double>(c.s.k));
          }
          EXPECT_EQ(one, many);
          expect_close(many, naive(p, 1.0, 0.0), 2e-6 * static_cast<double>(c.s.k));
        }
      }
    }
  }
}

// A weight gradient's product (A column-major) whose k falls in two blocks 384 deep (both ISAs'
// depth for the halves) runs in k halves on 2 threads at alpha 1, the second half's partial
// product added to C afterwards: bit for bit the 1-thread product, with beta and a bias, on every
// copy (k = 500: blocks of 256 and 244; k = 768, the GPT's: two of 384); partial row tiles and
// panels, a C wider than the product, B in both layouts, a product wide enough to pack A (n >=
// 192) and one that packs it whatever its groups' width (n >= 384). A row-major A, a k of one
// block or of three, and a C over the 1 MiB limit keep the row or column groups, as does another
// alpha (its result checked against the naive sum).
TEST(PackedGemm, KHalvesOnTwoThreadsChangeNoBit) {
  const std::vector<Shape> halves = {{130, 70, 500}, {512, 128, 500}, {200, 250, 500},
                                     {37, 400, 500},  {7, 3, 500},     {96, 128, 768}};
  for (const Copy& copy : every_copy()) {
    SCOPED_TRACE(copy.name);
    ScopedSmallGemmFns use(*copy.f32, *copy.f64);
    {
      ScopedThreads threads(2);
      EXPECT_FALSE(packed_gemm_k_halves<float>(512, 128, 500, 1, 1.0f));     // A row-major
      EXPECT_FALSE(packed_gemm_k_halves<float>(512, 128, 384, 512, 1.0f));   // one block
      EXPECT_TRUE(packed_gemm_k_halves<float>(512, 128, 385, 512, 1.0f));    // two
      EXPECT_FALSE(packed_gemm_k_halves<float>(512, 128, 776, 512, 1.0f));   // three blocks
      EXPECT_FALSE(packed_gemm_k_halves<float>(600, 600, 500, 600, 1.0f));   // C of 1.4 MB
      EXPECT_FALSE(packed_gemm_k_halves<float>(512, 128, 500, 512, -1.25f)); // alpha
      EXPECT_TRUE(packed_gemm_k_halves<double>(256, 512, 500, 256, 1.0));    // 1 MiB of C
    }
    {
      ScopedThreads threads(1);
      EXPECT_FALSE(packed_gemm_k_halves<float>(512, 128, 500, 512, 1.0f));
    }
    for (const Shape& s : halves) {
      for (bool b_t : {false, true}) {
        SCOPED_TRACE("m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
                     (b_t ? " B^T" : ""));
        const Problem p = make_problem(s, /*a_t=*/true, b_t, s.n + 5, 70);
        using colony::testing::cast;
        const std::vector<float> a = cast<float>(p.a), b = cast<float>(p.b), bias = cast<float>(float_values(s.n, 71));
        for (double beta : {0.0, 0.75}) {
          for (const float* bias_or_null : {static_cast<const float*>(nullptr), bias.data()}) {
            std::vector<float> one = cast<float>(p.c), two = one;
            {
              ScopedThreads threads(1);
              packed_gemm<float>(s.m, s.n, s.k, a.data(), p.ars(), p.acs(), b.data(), p.brs(), p.bcs(), one.data(),
                                 p.ldc, 1.0f, static_cast<float>(beta), bias_or_null);
            }
            {
              ScopedThreads threads(2);
              ASSERT_TRUE(packed_gemm_k_halves<float>(s.m, s.n, s.k, p.acs(), 1.0f));
              packed_gemm<float>(s.m, s.n, s.k, a.data(), p.ars(), p.acs(), b.data(), p.brs(), p.bcs(), two.data(),
                                 p.ldc, 1.0f, static_cast<float>(beta), bias_or_null);
            }
            ASSERT_EQ(one, two) << "beta=" << beta << (bias_or_null ? " bias" : "");
            std::vector<double> want = naive(p, 1.0, beta);
            if (bias_or_null != nullptr)
              for (int64_t i = 0; i < s.m; ++i)
                for (int64_t j = 0; j < s.n; ++j) want[i * p.ldc + j] += bias[j];
            expect_close(cast<double>(two), want, 2e-6 * static_cast<double>(s.k));
          }
        }
        ScopedThreads threads(2);
        expect_close(run<double>(p, 1.0, 0.25), naive(p, 1.0, 0.25), 1e-14 * static_cast<double>(s.k));
        expect_close(run<float>(p, -1.25, 0.5), naive(p, -1.25, 0.5), 2e-6 * static_cast<double>(s.k));
      }
    }
  }
}

// beta == 0 overwrites C, NaNs included; k == 0 is an empty sum, so C becomes beta * C.
TEST(PackedGemm, BetaZeroOverwritesNaNsAndAnEmptySumScalesC) {
  for (const Copy& copy : every_copy()) {
    SCOPED_TRACE(copy.name);
    ScopedSmallGemmFns use(*copy.f32, *copy.f64);
    std::vector<float> a(7 * 3, 1.0f), b(3 * 70, 2.0f);
    std::vector<float> y(7 * 70, std::numeric_limits<float>::quiet_NaN());
    packed_gemm<float>(7, 70, 3, a.data(), 3, 1, b.data(), 70, 1, y.data(), 70, 1.0f, 0.0f);
    EXPECT_EQ(y, std::vector<float>(7 * 70, 6.0f));
    packed_gemm<float>(7, 70, 0, a.data(), 1, 1, b.data(), 70, 1, y.data(), 70, 1.0f, 0.5f);
    EXPECT_EQ(y, std::vector<float>(7 * 70, 3.0f));
    packed_gemm<float>(7, 70, 0, a.data(), 1, 1, b.data(), 70, 1, y.data(), 70, 1.0f, 0.0f);
    EXPECT_EQ(y, std::vector<float>(7 * 70, 0.0f));
  }
}

// The bias epilogue (a linear layer's forward): C = A B + bias, the bias added as the last block of
// k is stored, is bit for bit the product followed by adding the bias, on every copy, layout and
// block edge (k past kc, so earlier blocks must not add it; partial panels, whose columns past n
// must not be written; column groups on 2 threads, each with its own columns of the bias), with
// beta too; and with k == 0, C = beta C + bias.
TEST(PackedGemm, BiasEpilogueIsTheProductThenTheBiasBitForBit) {
  const std::vector<Shape> shapes = {{5, 3, 7}, {13, 70, 9}, {37, 129, 400}, {9, 2100, 397}, {301, 200, 300}};
  for (const Copy& copy : every_copy()) {
    ScopedSmallGemmFns use(*copy.f32, *copy.f64);
    for (int threads : {1, 2}) {
      ScopedThreads pool(threads);
      for (const Shape& s : shapes) {
        for (bool a_t : {false, true}) {
          for (bool b_t : {false, true}) {
            const Problem p = make_problem(s, a_t, b_t, s.n + 3, 90);
            const std::vector<double> bias = float_values(s.n, 91);
            for (double beta : {0.0, 0.5}) {
              SCOPED_TRACE(std::string(copy.name) + " threads=" + std::to_string(threads) + " m=" +
                           std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
                           (a_t ? " A^T" : "") + (b_t ? " B^T" : "") + " beta=" + std::to_string(beta));
              using colony::testing::cast;
              const std::vector<float> a = cast<float>(p.a), b = cast<float>(p.b), bf = cast<float>(bias);
              std::vector<float> fused = cast<float>(p.c), want = fused;
              packed_gemm<float>(s.m, s.n, s.k, a.data(), p.ars(), p.acs(), b.data(), p.brs(), p.bcs(), fused.data(),
                                 p.ldc, 1.0f, static_cast<float>(beta), bf.data());
              packed_gemm<float>(s.m, s.n, s.k, a.data(), p.ars(), p.acs(), b.data(), p.brs(), p.bcs(), want.data(),
                                 p.ldc, 1.0f, static_cast<float>(beta));
              for (int64_t i = 0; i < s.m; ++i)
                for (int64_t j = 0; j < s.n; ++j) want[i * p.ldc + j] += bf[j];
              ASSERT_EQ(fused, want);
              // And against the naive sum in double (float64 operands), so the two cannot agree
              // on a wrong product.
              const std::vector<double> ad = p.a, bd = p.b;
              std::vector<double> got = p.c, ref = naive(p, 1.0, beta);
              for (int64_t i = 0; i < s.m; ++i)
                for (int64_t j = 0; j < s.n; ++j) ref[i * p.ldc + j] += bias[j];
              packed_gemm<double>(s.m, s.n, s.k, ad.data(), p.ars(), p.acs(), bd.data(), p.brs(), p.bcs(), got.data(),
                                  p.ldc, 1.0, beta, bias.data());
              expect_close(got, ref, 1e-14 * static_cast<double>(s.k));
            }
          }
        }
      }
    }
    std::vector<float> a(3), b(3 * 70), bias(70), y(7 * 70, 2.0f);
    for (int64_t j = 0; j < 70; ++j) bias[j] = static_cast<float>(j);
    packed_gemm<float>(7, 70, 0, a.data(), 1, 1, b.data(), 70, 1, y.data(), 70, 1.0f, 0.5f, bias.data());
    for (int64_t j = 0; j < 70; ++j) EXPECT_EQ(y[6 * 70 + j], 1.0f + static_cast<float>(j));
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
