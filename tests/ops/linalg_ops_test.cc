// Matrix products (ops/linalg_ops.cc) against a naive triple loop in double written here:
// transposed and sliced operands, batches (broadcast ones included), torch.matmul's rank rules,
// addmm_'s beta/alpha, degenerate sizes and the error messages.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "ops/raw_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using testing::values;

Tensor randn(const Shape& shape, uint64_t seed, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(dtype), &gen);
}

// [.., m, k] x [.., k, n] for 2-D or 3-D operands with equal batch sizes.
Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  bool batched = a.dim() == 3;
  int64_t batch = batched ? a.size(0) : 1;
  int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  std::vector<double> va = values(a), vb = values(b), out(batch * m * n, 0.0);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) s += va[(p * m + i) * k + l] * vb[(p * k + l) * n + j];
        out[(p * m + i) * n + j] = s;
      }
  Shape shape = batched ? Shape{batch, m, n} : Shape{m, n};
  return raw::from_vector(out, shape, TensorOptions(kFloat64));
}

TEST(Mm, HandValues) {
  Tensor a = raw::tensor({{1, 2, 3}, {4, 5, 6}});
  Tensor b = raw::tensor({{7, 8}, {9, 10}, {11, 12}});
  Tensor c = raw::mm(a, b);
  EXPECT_EQ(c.sizes(), Shape({2, 2}));
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_EQ(values(c), std::vector<double>({58, 64, 139, 154}));
}

TEST(Mm, ShapesAndThreadCountsMatchNaive) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {1, 7, 5}, {6, 1, 4}, {5, 8, 1},
                                                               {33, 17, 29}, {130, 70, 90}, {300, 64, 200}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
      Tensor a = randn({m, k}, 1), b = randn({k, n}, 2);
      EXPECT_TRUE(all_close(raw::mm(a, b), naive_matmul(a, b), 1e-4, 1e-4));
    }
  }
}

TEST(Mm, TransposedAndSlicedOperands) {
  Tensor a = randn({9, 6}, 3), b = randn({11, 9}, 4);
  Tensor at = raw::transpose(a, 0, 1);  // [6, 9], column-major: used without a copy
  Tensor bt = raw::transpose(b, 0, 1);  // [9, 11]
  Tensor want = naive_matmul(raw::contiguous(at), raw::contiguous(bt));
  EXPECT_TRUE(all_close(raw::mm(at, bt), want, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(raw::mm(raw::contiguous(at), bt), want, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(raw::mm(at, raw::contiguous(bt)), want, 1e-4, 1e-4));
  // Every other column: the column stride is 2, which BLAS cannot take, so it is copied.
  Tensor wide = randn({6, 18}, 5);
  Tensor every_other = raw::slice(wide, 1, 0, 18, 2);  // [6, 9]
  EXPECT_TRUE(all_close(raw::mm(every_other, bt), naive_matmul(raw::contiguous(every_other), raw::contiguous(bt)),
                        1e-4, 1e-4));
  // A row slice of a wider matrix: row-major with leading dimension 18.
  Tensor narrow = raw::narrow(wide, 1, 3, 9);
  EXPECT_TRUE(all_close(raw::mm(narrow, bt), naive_matmul(raw::contiguous(narrow), raw::contiguous(bt)), 1e-4, 1e-4));
}

TEST(Mm, Float64AndEmptyInnerDimension) {
  Tensor a = randn({5, 4}, 6, kFloat64), b = randn({4, 3}, 7, kFloat64);
  Tensor c = raw::mm(a, b);
  EXPECT_EQ(c.dtype(), kFloat64);
  EXPECT_TRUE(all_close(c, naive_matmul(a, b), 1e-12, 1e-12));
  Tensor z = raw::mm(raw::zeros({3, 0}), raw::zeros({0, 2}));
  EXPECT_EQ(z.sizes(), Shape({3, 2}));
  EXPECT_EQ(values(z), std::vector<double>(6, 0.0));
  EXPECT_EQ(raw::mm(raw::zeros({0, 4}), raw::zeros({4, 2})).sizes(), Shape({0, 2}));
}

TEST(Mm, Errors) {
  EXPECT_TRUE(throws_with([] { raw::mm(raw::zeros({2, 3}), raw::zeros({4, 5})); },
                          "mm: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)"));
  EXPECT_TRUE(throws_with([] { raw::mm(raw::zeros({2, 3}), raw::zeros({3})); }, "mm: expected 2-D tensors"));
  EXPECT_TRUE(throws_with([] { raw::mm(raw::zeros({2, 3}), raw::zeros({3, 2}, TensorOptions(kFloat64))); },
                          "mm: expected both tensors to have the same dtype, got float32 and float64"));
  EXPECT_TRUE(throws_with([] { raw::mm(raw::zeros({2, 3}, TensorOptions(kInt64)), raw::zeros({3, 2}, TensorOptions(kInt64))); },
                          "mm: expected floating point tensors, got int64"));
}

// gemm's float kernels (kernels/cpu/gemm.h), forced in turn: Eigen, the register tiles and the
// packed product this CPU runs, and their AVX-512 copies emulated on any CPU. Row- and
// column-major operands (A^T, B^T: gemm_rows or the dot products, A copied to rows), rows split
// over threads, dot products in several row blocks (300 x 200), a depth past the Auto limit,
// alpha and beta, batches.
TEST(Mm, EigenAndTileKernelsMatchNaive) {
  using namespace kernels::cpu;
  struct Kernel {
    const char* name;
    GemmKernel kernel;
    bool emulated_avx512;
  };
  for (const Kernel& kernel : {Kernel{"eigen", GemmKernel::Eigen, false}, Kernel{"tiles", GemmKernel::Tiles, false},
                               Kernel{"avx512 tiles (emulated)", GemmKernel::Tiles, true},
                               Kernel{"packed", GemmKernel::Packed, false},
                               Kernel{"avx512 packed (emulated)", GemmKernel::Packed, true}}) {
    SCOPED_TRACE(kernel.name);
    ScopedGemmKernel use(kernel.kernel);
    std::optional<ScopedSmallGemmFns> emulated;
    if (kernel.emulated_avx512) {
      emulated.emplace(avx512_emulated::small_gemm_fns<float>(), avx512_emulated::small_gemm_fns<double>());
    }
    EXPECT_EQ(gemm_kernel(DType::Float32, 8, 8, 8), kernel.kernel);
    uint64_t seed = 200;
    for (int threads : {1, 2}) {
      colony::set_num_threads(threads);
      for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{
               {1, 1, 1}, {32, 400, 120}, {33, 17, 29}, {300, 64, 200}, {5, 1100, 3}, {7, 3, 70}}) {
        for (bool a_t : {false, true}) {
          for (bool b_t : {false, true}) {
            SCOPED_TRACE("threads=" + std::to_string(threads) + " m=" + std::to_string(m) + " k=" +
                         std::to_string(k) + " n=" + std::to_string(n) + (a_t ? " A^T" : "") + (b_t ? " B^T" : ""));
            Tensor a = a_t ? raw::transpose(randn({k, m}, seed++), 0, 1) : randn({m, k}, seed++);
            Tensor b = b_t ? raw::transpose(randn({n, k}, seed++), 0, 1) : randn({k, n}, seed++);
            const Tensor want = naive_matmul(raw::contiguous(a), raw::contiguous(b));
            EXPECT_TRUE(all_close(raw::mm(a, b), want, 1e-4, 1e-4));
            // beta = 0.5, alpha = -1.5 through scratch; beta = 0 over NaNs.
            Tensor acc = randn({m, n}, seed++);
            Tensor scaled = raw::add(raw::mul(raw::to(acc, kCPU, kFloat64), 0.5), raw::mul(want, -1.5));
            raw::addmm_(acc, a, b, 0.5, -1.5);
            EXPECT_TRUE(all_close(acc, scaled, 1e-4, 1e-4));
            Tensor junk = raw::full({m, n}, std::numeric_limits<double>::quiet_NaN());
            raw::addmm_(junk, a, b, 0.0, 2.0);
            EXPECT_TRUE(all_close(junk, raw::mul(want, 2.0), 1e-4, 1e-4));
          }
        }
      }
    }
    Tensor a64 = randn({17, 30}, 90, kFloat64), b64 = raw::transpose(randn({9, 30}, 91, kFloat64), 0, 1);
    EXPECT_TRUE(all_close(raw::mm(a64, b64), naive_matmul(a64, raw::contiguous(b64)), 1e-12, 1e-12));
    Tensor a3 = randn({4, 5, 6}, 92);
    Tensor shared = raw::expand(raw::unsqueeze(randn({6, 3}, 93), 0), {4, 6, 3});
    EXPECT_TRUE(all_close(raw::bmm(a3, shared), naive_matmul(a3, raw::contiguous(shared)), 1e-4, 1e-4));
    Tensor b3 = raw::transpose(randn({4, 3, 6}, 94), 1, 2);
    EXPECT_TRUE(all_close(raw::bmm(a3, b3), naive_matmul(a3, raw::contiguous(b3)), 1e-4, 1e-4));
  }
  colony::set_num_threads(2);
}

// The kernel Auto picks: the tiles only under AVX-512 and for B up to kTilesMaxWidth.
TEST(Mm, AutoPicksTheTilesUnderAvx512) {
  using namespace kernels::cpu;
  const bool avx512 = active_cpu_isa() >= CpuIsa::Avx512;
  EXPECT_EQ(gemm_kernel(DType::Float32, 32, 120, 400), avx512 ? GemmKernel::Tiles : GemmKernel::Eigen);
  EXPECT_EQ(gemm_kernel(DType::Float64, 32, kTilesMaxWidth, kTilesMaxWidth), avx512 ? GemmKernel::Tiles : GemmKernel::Eigen);
  EXPECT_EQ(gemm_kernel(DType::Float32, 32, kTilesMaxWidth + 1, 8), GemmKernel::Eigen);
  EXPECT_EQ(gemm_kernel(DType::Float32, 32, 8, kTilesMaxWidth + 1), GemmKernel::Eigen);
  ScopedSmallGemmFns emulated(avx512_emulated::small_gemm_fns<float>(), avx512_emulated::small_gemm_fns<double>());
  EXPECT_EQ(gemm_kernel(DType::Float32, 32, 120, 400), GemmKernel::Tiles);
}

// float16/bfloat16 on the CPU without bfloat16 tiles: the float32 product of the rounded
// operands, rounded once.
TEST(Mm, LowPrecisionOnCpuAccumulatesInFloat32) {
  kernels::cpu::ScopedSmallGemmBf16Fns widen(nullptr);  // bit for bit needs the float32 kernels' order
  Tensor a = randn({17, 300}, 41), b = randn({300, 9}, 42), acc = randn({17, 9}, 43);
  for (DType low : {kFloat16, kBFloat16}) {
    Tensor al = raw::to(a, kCPU, low), bl = raw::to(b, kCPU, low);
    Tensor want = raw::to(raw::mm(raw::to(al, kCPU, kFloat32), raw::to(bl, kCPU, kFloat32)), kCPU, low);
    Tensor got = raw::mm(al, bl);
    EXPECT_EQ(got.dtype(), low);
    EXPECT_TRUE(all_close(got, want, 0, 0));  // one rounding: bit for bit
    Tensor bt = raw::transpose(raw::to(randn({4, 9, 300}, 44), kCPU, low), 1, 2);
    Tensor a3 = raw::to(randn({4, 17, 300}, 45), kCPU, low);
    EXPECT_TRUE(all_close(raw::bmm(a3, bt), raw::to(naive_matmul(a3, raw::contiguous(bt)), kCPU, low), 1e-2, 1e-2));
    Tensor out = raw::to(acc, kCPU, low);
    raw::addmm_(out, al, bl, 0.5, -1.5);
    Tensor want_acc = raw::add(raw::mul(raw::to(raw::to(acc, kCPU, low), kCPU, kFloat32), 0.5),
                               raw::mul(raw::to(want, kCPU, kFloat32), -1.5));
    EXPECT_EQ(out.dtype(), low);
    EXPECT_TRUE(all_close(out, want_acc, 2e-2, 2e-2));
  }
}

// bfloat16 on small_gemm_bf16.h's tiles (the emulated copy, and the AVX512_BF16 one where the CPU
// has it), for each operand row- or column-major as a linear layer's forward (B^T) and backward
// (A^T) make them: the float64 product of the bfloat16 values within one bfloat16 rounding
// (2^-9 relative) plus float32 accumulation.
TEST(Mm, Bfloat16RunsNativelyOnTheBf16Tiles) {
  using namespace kernels::cpu;
  for (const SmallGemmBf16Fns* t : runnable_bf16_copies()) {
    SCOPED_TRACE(t->isa);
    ScopedSmallGemmBf16Fns use(t);
    ASSERT_TRUE(gemm_native_16bit(DType::BFloat16));
    EXPECT_FALSE(gemm_native_16bit(DType::Float16));
    uint64_t seed = 60;
    // 70 x 300 with B^T: the dot products in several blocks of rows.
    for (auto [m, k, n] : {std::array<int64_t, 3>{17, 300, 9}, {32, 400, 120}, {5, 7, 70}, {1, 1, 1}, {70, 30, 300}}) {
      for (bool a_t : {false, true}) {
        for (bool b_t : {false, true}) {
          SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n) +
                       (a_t ? " A^T" : "") + (b_t ? " B^T" : ""));
          auto bf16 = [](const Tensor& t) { return raw::to(t, kCPU, kBFloat16); };
          // Transposed views of contiguous matrices: the product sees them column-major.
          Tensor a = a_t ? raw::transpose(bf16(randn({k, m}, seed++)), 0, 1) : bf16(randn({m, k}, seed++));
          Tensor b = b_t ? raw::transpose(bf16(randn({n, k}, seed++)), 0, 1) : bf16(randn({k, n}, seed++));
          ASSERT_EQ(a.is_contiguous(), !a_t || m == 1 || k == 1);
          Tensor got = raw::mm(a, b);
          EXPECT_EQ(got.dtype(), kBFloat16);
          EXPECT_TRUE(all_close(got, naive_matmul(raw::contiguous(a), raw::contiguous(b)), 4e-3, 1e-3));
        }
      }
    }
    Tensor a3 = raw::to(randn({4, 17, 40}, 70), kCPU, kBFloat16);
    Tensor b3 = raw::transpose(raw::to(randn({4, 9, 40}, 71), kCPU, kBFloat16), 1, 2);
    EXPECT_TRUE(all_close(raw::bmm(a3, b3), naive_matmul(a3, raw::contiguous(b3)), 4e-3, 1e-3));
    Tensor a2 = raw::to(randn({17, 30}, 72), kCPU, kBFloat16), b2 = raw::to(randn({30, 9}, 73), kCPU, kBFloat16);
    Tensor acc = raw::to(randn({17, 9}, 74), kCPU, kBFloat16);
    Tensor want = raw::add(raw::mul(raw::to(acc, kCPU, kFloat32), 0.5), raw::mul(naive_matmul(a2, b2), -1.5));
    raw::addmm_(acc, a2, b2, 0.5, -1.5);
    EXPECT_EQ(acc.dtype(), kBFloat16);
    EXPECT_TRUE(all_close(acc, want, 4e-3, 2e-3));
  }
}

TEST(Bmm, MatchesNaiveWithTransposesAndSharedMatrix) {
  Tensor a = randn({4, 5, 6}, 8), b = randn({4, 6, 3}, 9);
  EXPECT_TRUE(all_close(raw::bmm(a, b), naive_matmul(a, b), 1e-4, 1e-4));
  Tensor bt = raw::transpose(randn({4, 3, 6}, 10), 1, 2);  // [4, 6, 3] column-major matrices
  EXPECT_TRUE(all_close(raw::bmm(a, bt), naive_matmul(a, raw::contiguous(bt)), 1e-4, 1e-4));
  // One matrix expanded over the batch: batch stride 0.
  Tensor shared = raw::expand(raw::unsqueeze(randn({6, 3}, 11), 0), {4, 6, 3});
  EXPECT_TRUE(all_close(raw::bmm(a, shared), naive_matmul(a, raw::contiguous(shared)), 1e-4, 1e-4));
  EXPECT_TRUE(throws_with([&] { raw::bmm(a, randn({3, 6, 3}, 1)); }, "bmm: batch sizes differ: [4, 5, 6] and [3, 6, 3]"));
  EXPECT_TRUE(throws_with([&] { raw::bmm(a, randn({4, 5, 3}, 1)); }, "bmm: shapes [4, 5, 6] and [4, 5, 3] cannot be multiplied (6 != 5)"));
}

TEST(Matmul, RankRules) {
  Tensor v3 = raw::tensor({1, 2, 3}), w3 = raw::tensor({4, 5, 6});
  Tensor dot = raw::matmul(v3, w3);
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_EQ(dot.item<double>(), 32);
  Tensor m = raw::tensor({{1, 0, 2}, {0, 3, 0}});  // [2, 3]
  Tensor mv = raw::matmul(m, v3);
  EXPECT_EQ(mv.sizes(), Shape({2}));
  EXPECT_EQ(values(mv), std::vector<double>({7, 6}));
  Tensor vm = raw::matmul(raw::tensor({1, 2}), m);
  EXPECT_EQ(vm.sizes(), Shape({3}));
  EXPECT_EQ(values(vm), std::vector<double>({1, 6, 2}));
}

TEST(Matmul, BatchedAndBroadcast) {
  Tensor a = randn({2, 3, 4, 5}, 12), b2 = randn({5, 6}, 13);
  // [2, 3, 4, 5] @ [5, 6]: all 24 rows in one GEMM.
  Tensor c = raw::matmul(a, b2);
  EXPECT_EQ(c.sizes(), Shape({2, 3, 4, 6}));
  EXPECT_TRUE(all_close(raw::reshape(c, {24, 6}), naive_matmul(raw::reshape(a, {24, 5}), b2), 1e-4, 1e-4));
  // [2, 1, 4, 5] @ [3, 5, 6] -> [2, 3, 4, 6]
  Tensor a1 = randn({2, 1, 4, 5}, 14), b3 = randn({3, 5, 6}, 15);
  Tensor d = raw::matmul(a1, b3);
  EXPECT_EQ(d.sizes(), Shape({2, 3, 4, 6}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      Tensor want = naive_matmul(raw::select(raw::select(a1, 0, i), 0, 0), raw::select(b3, 0, j));
      EXPECT_TRUE(all_close(raw::select(raw::select(d, 0, i), 0, j), want, 1e-4, 1e-4));
    }
  // Vectors on either side of a batch.
  Tensor v = randn({5}, 16);
  Tensor av = raw::matmul(a, v);
  EXPECT_EQ(av.sizes(), Shape({2, 3, 4}));
  EXPECT_TRUE(all_close(raw::reshape(av, {24, 1}), naive_matmul(raw::reshape(a, {24, 5}), raw::reshape(v, {5, 1})),
                        1e-4, 1e-4));
  Tensor u = randn({4}, 17);
  Tensor ua = raw::matmul(u, a);
  EXPECT_EQ(ua.sizes(), Shape({2, 3, 5}));
  Tensor first = naive_matmul(raw::reshape(u, {1, 4}), raw::select(raw::select(a, 0, 1), 0, 2));
  EXPECT_TRUE(all_close(raw::reshape(raw::select(raw::select(ua, 0, 1), 0, 2), {1, 5}), first, 1e-4, 1e-4));
}

TEST(Matmul, Errors) {
  EXPECT_TRUE(throws_with([] { raw::matmul(raw::zeros({2, 3}), raw::zeros({4, 5})); },
                          "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)"));
  EXPECT_TRUE(throws_with([] { raw::matmul(raw::zeros({3}), raw::zeros({4})); }, "(3 != 4)"));
  EXPECT_TRUE(throws_with([] { raw::matmul(raw::scalar_tensor(1), raw::zeros({4})); }, "at least 1 dimension"));
  EXPECT_TRUE(throws_with([] { raw::matmul(raw::zeros({2, 2, 3}), raw::zeros({3, 3, 1})); }, "cannot be broadcast"));
}

TEST(Addmm, BetaAlphaAndOverwrite) {
  Tensor a = randn({4, 3}, 18), b = randn({3, 5}, 19);
  Tensor out = randn({4, 5}, 20);
  std::vector<double> before = values(out), ab = values(naive_matmul(a, b));
  uint32_t version = out.version();
  raw::addmm_(out, a, b, 0.5, 2.0);
  EXPECT_GT(out.version(), version);
  std::vector<double> got = values(out);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], 0.5 * before[i] + 2.0 * ab[i], 1e-4);
  // beta = 0 ignores what out held, NaNs included.
  Tensor junk = raw::full({4, 5}, std::numeric_limits<double>::quiet_NaN());
  raw::addmm_(junk, a, b, 0.0, 1.0);
  EXPECT_TRUE(all_close(junk, naive_matmul(a, b), 1e-4, 1e-4));
  // Transposed operands through addmm_ too.
  Tensor acc = raw::zeros({3, 3});
  raw::addmm_(acc, raw::transpose(a, 0, 1), a, 1.0, 1.0);
  EXPECT_TRUE(all_close(acc, naive_matmul(raw::contiguous(raw::transpose(a, 0, 1)), a), 1e-4, 1e-4));
  // out aliasing an operand reads the operand's old values.
  Tensor sq = randn({3, 3}, 21);
  Tensor want = naive_matmul(sq, sq);
  raw::addmm_(sq, sq, raw::clone(sq), 0.0, 1.0);
  EXPECT_TRUE(all_close(sq, want, 1e-4, 1e-4));
  EXPECT_TRUE(throws_with([&] { Tensor o = raw::zeros({4, 4}); raw::addmm_(o, a, b, 1, 1); },
                          "addmm_: out has shape [4, 4], expected [4, 5]"));
}

// addmm(bias, a, b): the bias row added to every row. bfloat16 gives bit for bit what addmm_ with
// beta = 1 over the bias rows gives (round(a b + bias), rounded once, the same float32 sums) on
// every bfloat16 path: AMX (the hardware and the emulated copy), the AVX512_BF16 tiles (AMX off),
// and, for sizes under a tile, the tiles again; float32 against the float64 product.
TEST(Addmm, BiasRowAddedBeforeTheOneRounding) {
  using namespace kernels::cpu;
  Tensor a = randn({37, 40}, 80), bt = randn({50, 40}, 81), bias = randn({50}, 82);
  Tensor b = raw::transpose(bt, 0, 1);  // a linear layer's Wᵀ: column-major
  Tensor want32 = raw::add(naive_matmul(a, raw::contiguous(b)), raw::to(bias, kCPU, kFloat64));
  EXPECT_TRUE(all_close(raw::addmm(bias, a, b), want32, 1e-4, 1e-4));
  if (gemm_native_16bit(DType::BFloat16)) {
    std::vector<const AmxGemmFns*> amx = runnable_amx_copies();
    amx.push_back(nullptr);  // no AMX: the AVX512_BF16 tiles
    for (const AmxGemmFns* fns : amx) {
      SCOPED_TRACE(fns != nullptr ? fns->isa : "no amx");
      ScopedAmxGemmFns use(fns);
      for (auto [m, k, n] : {std::array<int64_t, 3>{37, 40, 50}, {5, 7, 9}, {64, 128, 96}}) {
        SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n));
        Tensor a16 = raw::to(randn({m, k}, 83), kCPU, kBFloat16);
        Tensor b16 = raw::transpose(raw::to(randn({n, k}, 84), kCPU, kBFloat16), 0, 1);
        Tensor bias16 = raw::to(randn({n}, 85), kCPU, kBFloat16);
        Tensor want = raw::contiguous(raw::expand(bias16, {m, n}));
        raw::addmm_(want, a16, b16, 1.0, 1.0);
        Tensor got = raw::addmm(bias16, a16, b16);
        ASSERT_EQ(got.dtype(), kBFloat16);
        EXPECT_TRUE(all_close(got, want, 0, 0));
        // Row-major B, and a bias that is a strided view (read from a contiguous copy).
        Tensor b_rows = raw::contiguous(b16);
        Tensor wide = raw::to(randn({n, 2}, 86), kCPU, kBFloat16);
        Tensor strided_bias = raw::select(wide, 1, 0);
        want = raw::contiguous(raw::expand(strided_bias, {m, n}));
        raw::addmm_(want, a16, b_rows, 1.0, 1.0);
        EXPECT_TRUE(all_close(raw::addmm(strided_bias, a16, b_rows), want, 0, 0));
      }
    }
  }
  EXPECT_TRUE(throws_with([&] { raw::addmm(raw::zeros({4}), a, b); },
                          "addmm: expected a 1-D bias of the product's 50 columns, got [4]"));
  EXPECT_TRUE(throws_with([&] { raw::addmm(raw::zeros({1, 50}), a, b); }, "expected a 1-D bias"));
  EXPECT_TRUE(throws_with([&] { raw::addmm(raw::zeros({50}, TensorOptions(kFloat64)), a, b); }, "addmm: bias is float64 on cpu, expected float32"));
}

// addmm(bias, a, b): the bias row added to every row of the product, bit for bit mm followed by
// the add in float32 and float64 (on the packed product, which adds it as it stores, and below its
// thresholds), 16-bit types rounded once, and the errors.
TEST(Addmm, BiasRowIsMmThenAddBitForBit) {
  for (DType dt : {kFloat32, kFloat64}) {
    // [300, 130] x [130, 200]^T: the packed product (a linear layer's forward); [20, 30] x [30, 9]: the tiles.
    for (auto [m, k, n] : {std::array<int64_t, 3>{300, 130, 200}, std::array<int64_t, 3>{20, 30, 9}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " m=" + std::to_string(m));
      Tensor x = randn({m, k}, 50, dt), w = randn({n, k}, 51, dt), bias = randn({n}, 52, dt);
      Tensor got = raw::addmm(bias, x, raw::transpose(w, 0, 1));
      Tensor want = raw::mm(x, raw::transpose(w, 0, 1));
      raw::binary_(raw::BinaryOp::Add, want, bias);
      EXPECT_EQ(values(got), values(want));
      std::vector<double> ref = values(naive_matmul(x, raw::contiguous(raw::transpose(w, 0, 1))));
      const std::vector<double> b = values(bias), g = values(got);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) ASSERT_NEAR(g[i * n + j], ref[i * n + j] + b[j], 1e-4) << i << ", " << j;
    }
  }
  // An empty inner dimension: the bias rows.
  Tensor rows = raw::addmm(raw::from_vector(std::vector<float>{1.0f, 2.0f}, {2}), raw::zeros({3, 0}), raw::zeros({0, 2}));
  EXPECT_EQ(values(rows), (std::vector<double>{1, 2, 1, 2, 1, 2}));
  // bfloat16: round(a b + bias) once (a = b = 1 + 2^-7, bias = 2^-8 gives 1.0234375; the rounded
  // product plus the bias would give 1.015625).
  const double e = 1.0 + 1.0 / 128;
  Tensor a16 = raw::to(raw::full({1, 1}, e), kCPU, kBFloat16), bias16 = raw::to(raw::full({1}, 1.0 / 256), kCPU, kBFloat16);
  EXPECT_EQ(values(raw::addmm(bias16, a16, a16)), (std::vector<double>{1.0234375}));
  EXPECT_TRUE(throws_with([] { raw::addmm(raw::zeros({4}), raw::zeros({2, 3}), raw::zeros({3, 5})); },
                          "addmm: expected a 1-D bias of the product's 5 columns, got [4]"));
  EXPECT_TRUE(throws_with([] { raw::addmm(raw::zeros({5}, TensorOptions(kFloat64)), raw::zeros({2, 3}),
                                          raw::zeros({3, 5})); },
                          "addmm: bias is float64 on cpu, expected float32 on cpu as the matrices"));
}

// ---------- CUDA against CPU ----------

TEST(Matmul, MmBmmMatmul_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  auto gpu = [&](const Tensor& t) { return raw::to(t, dev, t.dtype()); };
  Tensor a = randn({65, 40}, 30), b = randn({40, 33}, 31);
  EXPECT_TRUE(all_close(raw::mm(gpu(a), gpu(b)), raw::mm(a, b), 1e-4, 1e-4));
  // Transposed views reach cuBLAS as column-major operands (op T), in every combination.
  Tensor ar = randn({40, 65}, 32), br = randn({33, 40}, 33);
  Tensor art = raw::transpose(ar, 0, 1), brt = raw::transpose(br, 0, 1);
  Tensor gart = raw::transpose(gpu(ar), 0, 1), gbrt = raw::transpose(gpu(br), 0, 1);
  EXPECT_TRUE(all_close(raw::mm(gart, gbrt), raw::mm(art, brt), 1e-4, 1e-4));
  EXPECT_TRUE(all_close(raw::mm(gart, gpu(b)), raw::mm(art, b), 1e-4, 1e-4));
  EXPECT_TRUE(all_close(raw::mm(gpu(a), gbrt), raw::mm(a, brt), 1e-4, 1e-4));
  Tensor x = randn({3, 7, 9}, 34), y = randn({3, 9, 5}, 35);
  EXPECT_TRUE(all_close(raw::bmm(gpu(x), gpu(y)), raw::bmm(x, y), 1e-4, 1e-4));
  Tensor p = randn({2, 1, 4, 5}, 36), q = randn({3, 5, 6}, 37);
  EXPECT_TRUE(all_close(raw::matmul(gpu(p), gpu(q)), raw::matmul(p, q), 1e-4, 1e-4));
  Tensor acc = randn({65, 33}, 38), acc_gpu = gpu(acc);
  raw::addmm_(acc, a, b, 0.5, -1.5);
  raw::addmm_(acc_gpu, gpu(a), gpu(b), 0.5, -1.5);
  EXPECT_TRUE(all_close(acc_gpu, acc, 1e-4, 1e-4));
  // float16/bfloat16 accumulate in float: compare with the float32 product of the rounded inputs.
  for (DType low : {kFloat16, kBFloat16}) {
    Tensor al = raw::to(a, kCPU, low), bl = raw::to(b, kCPU, low);
    Tensor want = raw::mm(raw::to(al, kCPU, kFloat32), raw::to(bl, kCPU, kFloat32));
    Tensor got = raw::mm(gpu(al), gpu(bl));
    EXPECT_EQ(got.dtype(), low);
    EXPECT_TRUE(all_close(got, want, low == kFloat16 ? 2e-3 : 1e-2, 1e-2));
  }
  Tensor d = randn({20, 30}, 39, kFloat64), e = randn({30, 10}, 40, kFloat64);
  EXPECT_TRUE(all_close(raw::mm(gpu(d), gpu(e)), raw::mm(d, e), 1e-12, 1e-12));
  // addmm with a bias row (GemmBias::cuda: the bias copied into the rows, then beta = 1).
  Tensor bias = randn({33}, 41);
  EXPECT_TRUE(all_close(raw::addmm(gpu(bias), gpu(a), gbrt), raw::addmm(bias, a, brt), 1e-4, 1e-4));
  Tensor bias64 = randn({10}, 42, kFloat64);
  EXPECT_TRUE(all_close(raw::addmm(gpu(bias64), gpu(d), gpu(e)), raw::addmm(bias64, d, e), 1e-12, 1e-12));
}

}  // namespace
}  // namespace colony
