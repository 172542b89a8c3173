// The CPU matrix product (kernels/cpu/gemm.cc) on raw buffers against a naive triple loop in
// double, on each of its kernels (Eigen, the register tiles and the packed product): every layout of A and B (a
// transposed operand is a column-major one, never copied), batches with a shared operand, alpha and
// beta, a C wider than the product, edge sizes, and one and two threads.
//
// Also gemm.h's bfloat16 routing to AMX tiles: which products go there (gemm_bf16_on_amx),
// and that gemm's packing of each distinct B, its split of rows over the pool and its batch
// strides (on one thread: each B handed to amx_gemm unpacked, packed there a panel at a time, unless
// the batch shares it) give, bit for bit, what one amx_gemm call per product gives (whose arithmetic
// amx_gemm_test checks), for every AMX copy this CPU runs (the emulated one anywhere). Likewise
// the bfloat16 products on small_gemm_bf16.h's tiles where AMX is off: bit for bit gemm_rows_bf16
// over a row-major B, rounded once. The float32 and float64 paths are tested through raw::mm in
// tests/ops/linalg_ops_test.cc.
#include "kernels/cpu/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/test_util.h"

namespace colony::kernels::cpu {
namespace {

using namespace colony::testing;  // NOLINT(build/namespaces): the references and helpers of the kernel tests

struct GemmCase {
  int64_t batch, m, n, k;
  bool a_col_major, b_col_major, shared_b;
  int64_t ldc;  // >= n
  double alpha, beta;
};

std::string describe(const GemmCase& c) {
  return std::to_string(c.batch) + " x [" + std::to_string(c.m) + ", " + std::to_string(c.k) + "] @ [" +
         std::to_string(c.k) + ", " + std::to_string(c.n) + "]" + (c.a_col_major ? " A col-major" : "") +
         (c.b_col_major ? " B col-major" : "") + (c.shared_b ? " B shared" : "") + " ldc " + std::to_string(c.ldc) +
         " alpha " + std::to_string(c.alpha) + " beta " + std::to_string(c.beta);
}

// Operand buffers as gemm reads them: (i, j) at i * ld + j row-major, i + j * ld column-major.
struct Operands {
  std::vector<double> a, b, c;
  MatrixArg ma, mb;
};

Operands make_operands(const GemmCase& c, uint32_t seed) {
  Operands o;
  o.a = random_values(c.batch * c.m * c.k, seed);
  o.b = random_values((c.shared_b ? 1 : c.batch) * c.k * c.n, seed + 1);
  o.c = random_values(c.batch * c.m * c.ldc, seed + 2);
  o.ma = {nullptr, c.a_col_major ? c.m : c.k, c.a_col_major, c.m * c.k};
  o.mb = {nullptr, c.b_col_major ? c.k : c.n, c.b_col_major, c.shared_b ? 0 : c.k * c.n};
  return o;
}

std::vector<double> naive_gemm(const GemmCase& c, const Operands& o) {
  std::vector<double> out = o.c;
  for (int64_t p = 0; p < c.batch; ++p)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < c.k; ++q) {
          double a = o.a[p * o.ma.batch_stride + (c.a_col_major ? i + q * o.ma.ld : i * o.ma.ld + q)];
          double b = o.b[p * o.mb.batch_stride + (c.b_col_major ? q + j * o.mb.ld : q * o.mb.ld + j)];
          s += a * b;
        }
        double& y = out[p * c.m * c.ldc + i * c.ldc + j];
        y = c.alpha * s + (c.beta == 0 ? 0.0 : c.beta * y);
      }
  return out;
}

template <typename T>
std::vector<double> run_gemm(const GemmCase& c, const Operands& o) {
  const DType dt = sizeof(T) == 8 ? DType::Float64 : DType::Float32;
  std::vector<T> a = cast<T>(o.a), b = cast<T>(o.b), y = cast<T>(o.c);
  MatrixArg ma = o.ma, mb = o.mb;
  ma.data = a.data();
  mb.data = b.data();
  gemm(dt, c.batch, c.m, c.n, c.k, ma, mb, y.data(), c.ldc, c.m * c.ldc, c.alpha, c.beta);
  return cast<double>(y);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << "element " << i;
}

const std::vector<GemmCase>& gemm_cases() {
  static const std::vector<GemmCase> cases = {
      {1, 1, 1, 1, false, false, false, 1, 1.0, 0.0},       // one element
      {1, 7, 5, 3, false, false, false, 5, 1.0, 0.0},       // partial tiles everywhere
      {1, 33, 17, 65, false, true, false, 17, 1.0, 0.0},    // B transposed: a linear layer's forward
      {1, 20, 24, 31, true, false, false, 24, 1.0, 0.0},    // A transposed: a weight gradient
      {1, 9, 40, 12, true, true, false, 40, 1.0, 0.0},      // both transposed
      {3, 16, 10, 8, false, false, true, 10, 1.0, 0.0},     // a batch sharing one B
      {2, 12, 9, 7, false, true, false, 13, 0.5, 1.0},      // accumulate into a wider C
      {1, 70, 130, 50, false, false, false, 130, -2.0, 0.25},  // several row blocks, alpha and beta
      // B transposed with 256 rows or more: B is copied row-major first (gemm.cc's kRepackRows),
      // into C as it is and into a wider C with alpha and beta.
      {1, 300, 37, 21, false, true, false, 37, 1.0, 0.0},
      {1, 257, 19, 44, false, true, false, 23, 0.5, 1.0},
  };
  return cases;
}

constexpr GemmKernel kFloatKernels[] = {GemmKernel::Eigen, GemmKernel::Tiles, GemmKernel::Packed};

const char* kernel_name(GemmKernel kernel) {
  return kernel == GemmKernel::Eigen ? "eigen" : kernel == GemmKernel::Tiles ? "tiles" : "packed";
}

TEST(GemmKernel, EveryLayoutMatchesNaiveOnEachKernel) {
  for (GemmKernel kernel : kFloatKernels) {
    ScopedGemmKernel use(kernel);
    uint32_t seed = 1;
    for (const GemmCase& c : gemm_cases()) {
      SCOPED_TRACE(describe(c) + " " + kernel_name(kernel));
      Operands o = make_operands(c, seed += 3);
      std::vector<double> ref = naive_gemm(c, o);
      expect_close(run_gemm<double>(c, o), ref, 1e-12);
      // float32 operands: the reference on the float32 values, within float32 accumulation.
      Operands o32 = o;
      o32.a = cast<double>(cast<float>(o.a));
      o32.b = cast<double>(cast<float>(o.b));
      o32.c = cast<double>(cast<float>(o.c));
      expect_close(run_gemm<float>(c, o32), naive_gemm(c, o32), 1e-5);
    }
  }
}

// The packed product on every copy of its micro-kernel the tests can force (small_gemm_isa.h: AVX2's
// 6 x 16, the AVX-512 copy's 6 x 64 emulated on any CPU, the real AVX-512 one where the CPU has
// it), through gemm's batches and layouts, with depths past one packed block (kc: 128 or 256) and
// more rows than one block of them (mc), where C is accumulated block after block.
TEST(GemmKernel, PackedKernelOnEveryIsaCopy) {
  std::vector<GemmCase> cases = gemm_cases();
  cases.push_back({1, 600, 70, 300, false, false, false, 70, 1.0, 0.0});
  cases.push_back({1, 301, 45, 290, true, true, false, 50, -1.0, 0.5});
  cases.push_back({2, 97, 130, 260, true, false, true, 131, 2.0, 0.0});
  std::vector<std::pair<const SmallGemmFns<float>*, const SmallGemmFns<double>*>> copies = {
      {&avx2::small_gemm_fns<float>(), &avx2::small_gemm_fns<double>()},
      {&avx512_emulated::small_gemm_fns<float>(), &avx512_emulated::small_gemm_fns<double>()}};
  if (detected_cpu_isa() >= CpuIsa::Avx512) {
    copies.push_back({&avx512::small_gemm_fns<float>(), &avx512::small_gemm_fns<double>()});
  }
  ScopedGemmKernel packed(GemmKernel::Packed);
  for (const auto& [f32, f64] : copies) {
    ScopedSmallGemmFns use(*f32, *f64);
    uint32_t seed = 500;
    for (const GemmCase& c : cases) {
      SCOPED_TRACE(describe(c) + " packed on " + f32->isa);
      Operands o = make_operands(c, seed += 3);
      expect_close(run_gemm<double>(c, o), naive_gemm(c, o), 1e-12);
      Operands o32 = o;
      o32.a = cast<double>(cast<float>(o.a));
      o32.b = cast<double>(cast<float>(o.b));
      o32.c = cast<double>(cast<float>(o.c));
      // Float32 rounding grows with the depth: these sums run up to 300 terms.
      expect_close(run_gemm<float>(c, o32), naive_gemm(c, o32), std::max(1e-5, 1e-7 * c.k * std::abs(c.alpha)));
    }
  }
}

// beta == 0 overwrites C, NaNs included (C is often fresh, uninitialized memory); k == 0 is an
// empty sum, so C becomes beta * C.
TEST(GemmKernel, BetaZeroOverwritesNaNsAndAnEmptySumScalesC) {
  for (GemmKernel kernel : kFloatKernels) {
    SCOPED_TRACE(kernel_name(kernel));
    ScopedGemmKernel use(kernel);
    std::vector<float> a(4 * 3, 1.0f), b(3 * 5, 2.0f);
    std::vector<float> y(4 * 5, std::numeric_limits<float>::quiet_NaN());
    gemm(DType::Float32, 1, 4, 5, 3, {a.data(), 3, false, 0}, {b.data(), 5, false, 0}, y.data(), 5, 0, 1.0, 0.0);
    EXPECT_EQ(y, std::vector<float>(20, 6.0f));
    gemm(DType::Float32, 1, 4, 5, 0, {a.data(), 1, false, 0}, {b.data(), 5, false, 0}, y.data(), 5, 0, 1.0, 0.5);
    EXPECT_EQ(y, std::vector<float>(20, 3.0f));
  }
}

// Rows are split over the threads; each chunk is one product on its rows, so the threads change
// only how rows are grouped, and the results agree to float32 rounding.
TEST(GemmKernel, OneAndTwoThreadsAgree) {
  const GemmCase c{2, 300, 64, 256, false, true, false, 64, 1.0, 0.0};  // 2 x 300 rows: several chunks
  Operands o = make_operands(c, 77);
  o.a = cast<double>(cast<float>(o.a));
  o.b = cast<double>(cast<float>(o.b));
  const std::vector<double> ref = naive_gemm(c, o);
  for (GemmKernel kernel : kFloatKernels) {
    SCOPED_TRACE(kernel_name(kernel));
    ScopedGemmKernel use(kernel);
    std::vector<double> one, two;
    {
      ScopedThreads threads(1);
      one = run_gemm<float>(c, o);
    }
    {
      ScopedThreads threads(2);
      two = run_gemm<float>(c, o);
    }
    expect_close(two, one, 1e-6);
    expect_close(two, ref, 1e-5);
  }
}

// Auto takes the packed product for one product of at least kPackedMinRows rows (kPackedMinRowsBt
// with B transposed, kPackedMinRowsAt with A transposed, kPackedMinRowsBt where the alternative
// is Eigen) and one panel of columns (gemm.cc); the rest as before.
TEST(GemmKernel, AutoPicksThePackedProductForLargeSingleProducts) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    {
      // Under AVX-512 (the emulated copy: the same choice on any CPU), against the tiles.
      ScopedSmallGemmFns avx512(avx512_emulated::small_gemm_fns<float>(), avx512_emulated::small_gemm_fns<double>());
      EXPECT_EQ(gemm_kernel(dt, 256, 64, 1), GemmKernel::Packed);
      EXPECT_EQ(gemm_kernel(dt, 255, 64, 512), GemmKernel::Tiles);
      EXPECT_EQ(gemm_kernel(dt, 128, 64, 512, false, true), GemmKernel::Packed);
      EXPECT_EQ(gemm_kernel(dt, 127, 64, 512, false, true), GemmKernel::Tiles);
      EXPECT_EQ(gemm_kernel(dt, 128, 64, 512, true, true), GemmKernel::Packed);
      EXPECT_EQ(gemm_kernel(dt, 127, 64, 512, true, true), GemmKernel::Tiles);
      EXPECT_EQ(gemm_kernel(dt, 128, 64, 512, true, false), GemmKernel::Packed);
      EXPECT_EQ(gemm_kernel(dt, 127, 64, 512, true, false), GemmKernel::Tiles);
      EXPECT_EQ(gemm_kernel(dt, 1024, 63, 512), GemmKernel::Tiles);
      EXPECT_EQ(gemm_kernel(dt, 1024, 512, 512, false, false, 2), GemmKernel::Tiles);  // batches: not measured
      // Where the tiles stop (past kTilesMaxWidth) the alternative is Eigen: from 128 rows.
      EXPECT_EQ(gemm_kernel(dt, 128, 64, kTilesMaxWidth + 1, true), GemmKernel::Packed);
      EXPECT_EQ(gemm_kernel(dt, 127, kTilesMaxWidth + 1, 64), GemmKernel::Eigen);
      EXPECT_EQ(gemm_kernel(dt, 4096, 2048, 4096), GemmKernel::Packed);
    }
    {
      // Under AVX2, against Eigen.
      ScopedSmallGemmFns avx2(avx2::small_gemm_fns<float>(), avx2::small_gemm_fns<double>());
      EXPECT_EQ(gemm_kernel(dt, 128, 64, 64), GemmKernel::Packed);
      EXPECT_EQ(gemm_kernel(dt, 128, 64, 64, true, false), GemmKernel::Packed);
      EXPECT_EQ(gemm_kernel(dt, 127, 64, 64), GemmKernel::Eigen);
      EXPECT_EQ(gemm_kernel(dt, 1024, 63, 64), GemmKernel::Eigen);
    }
  }
  EXPECT_EQ(gemm_kernel(DType::BFloat16, 1024, 1024, 1024), GemmKernel::Eigen);  // never float kernels
  ScopedGemmKernel tiles(GemmKernel::Tiles);
  EXPECT_EQ(gemm_kernel(DType::Float32, 1024, 1024, 1024), GemmKernel::Tiles);
}

TEST(GemmKernel, EmptyProductsAndUnsupportedTypes) {
  std::vector<double> y = {5.0};
  gemm(DType::Float64, 1, 0, 1, 4, {}, {}, y.data(), 1, 0, 1.0, 0.0);  // m == 0: nothing to write
  gemm(DType::Float64, 0, 1, 1, 4, {}, {}, y.data(), 1, 0, 1.0, 0.0);  // batch == 0
  EXPECT_EQ(y[0], 5.0);
  std::vector<int64_t> ints(4);
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { gemm(DType::Int64, 1, 2, 2, 1, {ints.data(), 1}, {ints.data(), 2}, ints.data(), 2, 0, 1.0, 0.0); },
      "gemm: CPU matrix products support float32 and float64"));
  EXPECT_FALSE(gemm_native_16bit(DType::Float16));
  EXPECT_EQ(gemm_kernel(DType::Float64, 8, kTilesMaxWidth + 1, 8), GemmKernel::Eigen);
}

// GemmBias (a linear layer's forward, C = A B + bias) on each kernel, forced and Auto: bit for bit
// gemm followed by adding the bias (the packed product adds it as it stores C, the others in a pass
// after), into a C wider than the product and full of NaNs (only written), every layout, k == 0
// (C = the bias rows), and a clear error for the types it does not take.
TEST(GemmKernel, GemmBiasIsGemmThenTheBiasBitForBit) {
  std::vector<GemmCase> cases;
  for (const GemmCase& c : gemm_cases()) {
    if (c.batch == 1) cases.push_back({1, c.m, c.n, c.k, c.a_col_major, c.b_col_major, false, c.ldc, 1.0, 0.0});
  }
  cases.push_back({1, 600, 70, 300, false, false, false, 73, 1.0, 0.0});   // k past kc on the packed product
  cases.push_back({1, 301, 130, 390, true, true, false, 130, 1.0, 0.0});   // both transposed, two panels
  cases.push_back({1, 256, 2100, 40, false, true, false, 2100, 1.0, 0.0});  // past nc: several blocks of B
  for (GemmKernel kernel : {GemmKernel::Auto, GemmKernel::Eigen, GemmKernel::Tiles, GemmKernel::Packed}) {
    ScopedGemmKernel use(kernel);
    uint32_t seed = 900;
    for (const GemmCase& c : cases) {
      SCOPED_TRACE(describe(c) + " " + (kernel == GemmKernel::Auto ? "auto" : kernel_name(kernel)));
      Operands o = make_operands(c, seed += 3);
      const std::vector<float> a = cast<float>(o.a), b = cast<float>(o.b), bias = cast<float>(random_values(c.n, seed));
      MatrixArg ma = o.ma, mb = o.mb;
      ma.data = a.data();
      mb.data = b.data();
      std::vector<float> want(c.m * c.ldc, 7.0f), got(c.m * c.ldc, std::numeric_limits<float>::quiet_NaN());
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = c.n; j < c.ldc; ++j) got[i * c.ldc + j] = 7.0f;  // past n: left as it is
      gemm(DType::Float32, 1, c.m, c.n, c.k, ma, mb, want.data(), c.ldc, 0, 1.0, 0.0);
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) want[i * c.ldc + j] += bias[j];
      GemmBias::cpu(DType::Float32, c.m, c.n, c.k, ma, mb, bias.data(), got.data(), c.ldc);
      ASSERT_EQ(got, want);
      // Float64 against the naive sum, so that both cannot share a wrong product.
      const std::vector<double> biasd = cast<double>(bias);
      MatrixArg ma64 = o.ma, mb64 = o.mb;
      ma64.data = o.a.data();
      mb64.data = o.b.data();
      GemmCase plain = c;
      Operands zero = o;
      std::fill(zero.c.begin(), zero.c.end(), 0.0);
      std::vector<double> ref = naive_gemm(plain, zero), got64(c.m * c.ldc, 0.0);
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) ref[i * c.ldc + j] += biasd[j];
      GemmBias::cpu(DType::Float64, c.m, c.n, c.k, ma64, mb64, biasd.data(), got64.data(), c.ldc);
      expect_close(got64, ref, 1e-12);
    }
  }
  const std::vector<float> a(4 * 3, 1.0f), b(3 * 5, 2.0f), bias = {1, 2, 3, 4, 5};
  std::vector<float> y(4 * 5, std::numeric_limits<float>::quiet_NaN());
  GemmBias::cpu(DType::Float32, 4, 5, 0, {a.data(), 1, false, 0}, {b.data(), 5, false, 0}, bias.data(), y.data(), 5);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(std::vector<float>(y.begin() + i * 5, y.begin() + i * 5 + 5), bias);
  std::vector<uint16_t> halves(4);
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] {
        GemmBias::cpu(DType::BFloat16, 2, 2, 1, {halves.data(), 1}, {halves.data(), 2}, halves.data(), halves.data(),
                      2);
      },
      "gemm with bias: the CPU kernel takes float32 and float64, got bfloat16"));
}

}  // namespace
}  // namespace colony::kernels::cpu

// ---------- bfloat16 on AMX ----------

namespace colony::kernels::cpu {
namespace {

// n values in [-1, 1), rounded to bfloat16.
std::vector<BFloat16> random_bf16(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<BFloat16> v;
  while (v.size() < n) v.push_back(BFloat16(std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen)));
  return v;
}
const uint16_t* bits(const BFloat16* p) { return reinterpret_cast<const uint16_t*>(p); }

struct Case {
  int64_t batch, m, n, k;
  bool a_t, b_t, shared_b;
  float alpha, beta;
};

std::string describe(const Case& t) {
  return "batch=" + std::to_string(t.batch) + " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) +
         " k=" + std::to_string(t.k) + (t.a_t ? " A^T" : "") + (t.b_t ? " B^T" : "") + (t.shared_b ? " shared B" : "") +
         " alpha=" + std::to_string(t.alpha) + " beta=" + std::to_string(t.beta);
}

// A case's random operands: each matrix of the batch padded by 3 elements per line and 7 between
// matrices.
struct Bf16Operands {
  explicit Bf16Operands(const Case& t, uint32_t seed)
      : lda((t.a_t ? t.m : t.k) + 3),
        ldb((t.b_t ? t.k : t.n) + 3),
        ldc(t.n + 3),
        a_bs((t.a_t ? t.k : t.m) * lda + 7),
        b_bs(t.shared_b ? 0 : (t.b_t ? t.n : t.k) * ldb + 7),
        c_bs(t.m * ldc + 7),
        a(random_bf16(t.batch * a_bs, seed)),
        b(random_bf16((t.shared_b ? 1 : t.batch) * ((t.b_t ? t.n : t.k) * ldb + 7), seed + 1)),
        c0(random_bf16(t.batch * c_bs, seed + 2)) {}
  int64_t lda, ldb, ldc, a_bs, b_bs, c_bs;
  std::vector<BFloat16> a, b, c0;
};

void check(const Case& t, uint32_t seed) {
  SCOPED_TRACE(describe(t));
  ASSERT_TRUE(gemm_bf16_on_amx(t.m, t.n, t.k));
  const Bf16Operands ops(t, seed);
  const int64_t lda = ops.lda, ldb = ops.ldb, ldc = ops.ldc, a_bs = ops.a_bs, b_bs = ops.b_bs, c_bs = ops.c_bs;
  const std::vector<BFloat16>&a = ops.a, &b = ops.b, &c0 = ops.c0;
  std::vector<BFloat16> got = c0, want = c0;

  MatrixArg ma{a.data(), lda, t.a_t, a_bs}, mb{b.data(), ldb, t.b_t, b_bs};
  gemm(DType::BFloat16, t.batch, t.m, t.n, t.k, ma, mb, got.data(), ldc, c_bs, t.alpha, t.beta);

  std::vector<uint16_t> packed(amx_packed_b_size(t.k, t.n));
  for (int64_t p = 0; p < t.batch; ++p) {
    amx_pack_b(t.k, t.n, bits(b.data() + p * b_bs), t.b_t ? 1 : ldb, t.b_t ? ldb : 1, packed.data());
    AmxGemmArgs args;
    args.m = t.m;
    args.n = t.n;
    args.k = t.k;
    args.a = bits(a.data() + p * a_bs);
    args.a_row_stride = t.a_t ? 1 : lda;
    args.a_col_stride = t.a_t ? lda : 1;
    args.packed_b = packed.data();
    args.c_bf16 = reinterpret_cast<uint16_t*>(want.data() + p * c_bs);
    args.alpha = t.alpha;
    args.beta = t.beta;
    args.ldc = ldc;
    amx_gemm(args);
  }
  int64_t mismatches = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    if (got[e].bits != want[e].bits && mismatches++ < 5) {
      ADD_FAILURE() << "element " << e << ": " << static_cast<float>(got[e]) << ", want "
                    << static_cast<float>(want[e]);
    }
  }
  EXPECT_EQ(mismatches, 0);

  // And near the float64 product (one bfloat16 rounding of C, float32 sums of k products).
  const int64_t p = t.batch - 1;
  for (int64_t i = 0; i < t.m; i += 7) {
    for (int64_t j = 0; j < t.n; j += 5) {
      double sum = 0;
      for (int64_t q = 0; q < t.k; ++q) {
        const BFloat16 x = a[p * a_bs + (t.a_t ? i + q * lda : i * lda + q)];
        const BFloat16 y = b[(t.shared_b ? 0 : p * b_bs) + (t.b_t ? q + j * ldb : q * ldb + j)];
        sum += static_cast<double>(static_cast<float>(x)) * static_cast<float>(y);
      }
      const double expect = t.alpha * sum + t.beta * static_cast<float>(c0[p * c_bs + i * ldc + j]);
      EXPECT_NEAR(static_cast<float>(got[p * c_bs + i * ldc + j]), expect, 4e-3 * std::fabs(expect) + 1e-4 * t.k)
          << "C(" << i << ", " << j << ") of product " << p;
    }
  }
}

class GemmBf16OnAmx : public ::testing::TestWithParam<int> {};

TEST_P(GemmBf16OnAmx, BatchesTransposesAndBetaMatchOneAmxCallPerProduct) {
  const int threads = num_threads();
  set_num_threads(GetParam());
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    SCOPED_TRACE(fns->isa);
    ScopedSmallGemmBf16Fns bf16(&bf16_emulated::small_gemm_bf16_fns());
    ScopedAmxGemmFns use(fns);
    uint32_t seed = 10;
    for (bool a_t : {false, true}) {
      for (bool b_t : {false, true}) {
        check(Case{3, 70, 33, 47, a_t, b_t, false, 1.0f, 0.0f}, seed++);
        check(Case{2, 33, 100, 65, a_t, b_t, true, 0.5f, -1.25f}, seed++);
      }
    }
    // Rows split into chunks that end inside a product; k = 1000: several panels.
    check(Case{5, 130, 40, 31, false, true, false, 1.0f, 1.0f}, seed++);
    check(Case{1, 40, 300, 1000, false, false, false, 1.0f, 0.0f}, seed++);
    // The packing of B split over the pool in pieces that end inside a product (48 column tiles
    // of two Bs, k = 128: pieces of 8 tiles).
    check(Case{2, 64, 384, 128, false, true, false, 1.0f, 0.0f}, seed++);
  }
  set_num_threads(threads);
}

INSTANTIATE_TEST_SUITE_P(Threads, GemmBf16OnAmx, ::testing::Values(1, 3));

// ---------- bfloat16 on the AVX512_BF16 tiles, without AMX ----------
// gemm pair-packs each distinct B once (pack_bf16_b_pairs) for products of 16 rows or more and
// splits the rows over the pool; each row's sums then run as gemm_rows_bf16 runs them over a
// row-major B, and C is scaled in float32 and rounded by a vector loop. So C must be, bit for bit,
// gemm_rows_bf16 over a row-major copy of B followed by BFloat16's own rounding of
// alpha * S + beta * C. Below 16 rows a column-major B takes the dot products (another order of
// the sums), checked near the float64 product only.
void check_small_tiles(const Case& t, uint32_t seed) {
  SCOPED_TRACE("tiles " + describe(t));
  ASSERT_FALSE(gemm_bf16_on_amx(t.m, t.n, t.k));
  const Bf16Operands ops(t, seed);
  const int64_t lda = ops.lda, ldb = ops.ldb, ldc = ops.ldc, a_bs = ops.a_bs, b_bs = ops.b_bs, c_bs = ops.c_bs;
  const std::vector<BFloat16>&a = ops.a, &b = ops.b, &c0 = ops.c0;
  std::vector<BFloat16> got = c0;
  MatrixArg ma{a.data(), lda, t.a_t, a_bs}, mb{b.data(), ldb, t.b_t, b_bs};
  gemm(DType::BFloat16, t.batch, t.m, t.n, t.k, ma, mb, got.data(), ldc, c_bs, t.alpha, t.beta);

  const bool exact = t.m >= 16 || !t.b_t;
  for (int64_t p = 0; p < t.batch; ++p) {
    const BFloat16* ap = a.data() + p * a_bs;
    const BFloat16* bp = b.data() + p * b_bs;
    const int64_t stride = (t.k + 1) / 2;
    std::vector<uint32_t> pairs(t.m * stride);
    pack_bf16_pairs(t.m, t.k, bits(ap), t.a_t ? 1 : lda, t.a_t ? lda : 1, pairs.data());
    std::vector<uint16_t> b_rm(t.k * t.n);
    for (int64_t q = 0; q < t.k; ++q)
      for (int64_t j = 0; j < t.n; ++j) b_rm[q * t.n + j] = bp[t.b_t ? q + j * ldb : q * ldb + j].bits;
    std::vector<int64_t> b_rows(t.k), c_rows(t.m);
    for (int64_t q = 0; q < t.k; ++q) b_rows[q] = q * t.n;
    for (int64_t i = 0; i < t.m; ++i) c_rows[i] = i * t.n;
    std::vector<float> sums(t.m * t.n);
    gemm_rows_bf16(t.m, t.n, t.k, pairs.data(), stride, b_rm.data(), b_rows.data(), sums.data(), c_rows.data(),
                   false, nullptr);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < t.m; ++i) {
      for (int64_t j = 0; j < t.n; ++j) {
        const BFloat16 c_in = c0[p * c_bs + i * ldc + j], c_out = got[p * c_bs + i * ldc + j];
        const float scaled = t.alpha * sums[i * t.n + j];
        const BFloat16 want(t.beta == 0.0f ? scaled : scaled + t.beta * static_cast<float>(c_in));
        if (exact && c_out.bits != want.bits && mismatches++ < 5) {
          ADD_FAILURE() << "C(" << i << ", " << j << ") of product " << p << ": " << static_cast<float>(c_out)
                        << ", want " << static_cast<float>(want);
        }
        double sum = 0;
        for (int64_t q = 0; q < t.k; ++q) {
          sum += static_cast<double>(static_cast<float>(ap[t.a_t ? i + q * lda : i * lda + q])) *
                 static_cast<float>(bp[t.b_t ? q + j * ldb : q * ldb + j]);
        }
        const double expect = t.alpha * sum + t.beta * static_cast<float>(c_in);
        EXPECT_NEAR(static_cast<float>(c_out), expect, 4e-3 * std::fabs(expect) + 1e-4 * t.k)
            << "C(" << i << ", " << j << ") of product " << p;
      }
      // The padding after each row of C is untouched.
      for (int64_t j = t.n; j < ldc && i * ldc + j < c_bs; ++j) {
        ASSERT_EQ(got[p * c_bs + i * ldc + j].bits, c0[p * c_bs + i * ldc + j].bits) << "wrote past row " << i;
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

class GemmBf16OnTiles : public ::testing::TestWithParam<int> {};

TEST_P(GemmBf16OnTiles, LayoutsBatchesAndBetaMatchGemmRowsOverARowMajorB) {
  const int threads = num_threads();
  set_num_threads(GetParam());
  ScopedAmxGemmFns no_amx(nullptr);
  for (const SmallGemmBf16Fns* fns : runnable_bf16_copies()) {
    SCOPED_TRACE(fns->isa);
    ScopedSmallGemmBf16Fns use(fns);
    uint32_t seed = 40;
    for (bool a_t : {false, true}) {
      for (bool b_t : {false, true}) {
        check_small_tiles(Case{3, 70, 33, 47, a_t, b_t, false, 1.0f, 0.0f}, seed++);
        check_small_tiles(Case{2, 33, 100, 65, a_t, b_t, true, 0.5f, -1.25f}, seed++);
        check_small_tiles(Case{2, 9, 40, 31, a_t, b_t, false, 1.0f, 1.0f}, seed++);  // below 16 rows
      }
    }
    // The char GPT's forward: [96, 128] x [128, 384]^T; rows split over the pool inside a product.
    check_small_tiles(Case{1, 96, 384, 128, false, true, false, 1.0f, 0.0f}, seed++);
    check_small_tiles(Case{5, 40, 17, 300, false, true, false, 2.0f, 0.0f}, seed++);
  }
  set_num_threads(threads);
}

INSTANTIATE_TEST_SUITE_P(Threads, GemmBf16OnTiles, ::testing::Values(1, 3));

TEST(GemmBf16, BiasOnTilesIsTheProductPlusTheBiasRoundedOnce) {
  ScopedAmxGemmFns no_amx(nullptr);
  for (const SmallGemmBf16Fns* fns : runnable_bf16_copies()) {
    SCOPED_TRACE(fns->isa);
    ScopedSmallGemmBf16Fns use(fns);
    const int64_t m = 20, n = 24, k = 33, stride = (k + 1) / 2;
    const std::vector<BFloat16> x = random_bf16(m * k, 1), w = random_bf16(n * k, 2), bias = random_bf16(n, 3);
    std::vector<BFloat16> got(m * n);
    // x @ W^T + bias, as a linear layer's forward.
    gemm_bf16_bias(m, n, k, MatrixArg{x.data(), k, false, 0}, MatrixArg{w.data(), k, true, 0}, bias.data(),
                   got.data(), n);
    std::vector<uint32_t> pairs(m * stride);
    pack_bf16_pairs(m, k, bits(x.data()), k, 1, pairs.data());
    std::vector<uint16_t> wt(k * n);  // W^T row-major
    for (int64_t q = 0; q < k; ++q)
      for (int64_t j = 0; j < n; ++j) wt[q * n + j] = w[j * k + q].bits;
    std::vector<int64_t> b_rows(k), c_rows(m);
    for (int64_t q = 0; q < k; ++q) b_rows[q] = q * n;
    for (int64_t i = 0; i < m; ++i) c_rows[i] = i * n;
    std::vector<float> sums(m * n);
    gemm_rows_bf16(m, n, k, pairs.data(), stride, wt.data(), b_rows.data(), sums.data(), c_rows.data(), false,
                   nullptr);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const BFloat16 want(sums[i * n + j] + static_cast<float>(bias[j]));
        ASSERT_EQ(got[i * n + j].bits, want.bits) << "C(" << i << ", " << j << ")";
      }
    }
  }
}

TEST(GemmBf16, AmxOnlyWhereActiveAndTheBf16TilesAre) {
  ScopedSmallGemmBf16Fns bf16(&bf16_emulated::small_gemm_bf16_fns());
  {
    ScopedAmxGemmFns none(nullptr);
    EXPECT_FALSE(gemm_bf16_on_amx(256, 256, 256));
  }
  ScopedAmxGemmFns use(&amx_emulated::amx_gemm_fns());
  EXPECT_TRUE(gemm_bf16_on_amx(256, 256, 256));
  {
    // No bfloat16 tiles means "widen" (gemm_native_16bit false): AMX is not used either.
    ScopedSmallGemmBf16Fns widen(nullptr);
    EXPECT_FALSE(gemm_native_16bit(DType::BFloat16));
    EXPECT_FALSE(gemm_bf16_on_amx(256, 256, 256));
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
