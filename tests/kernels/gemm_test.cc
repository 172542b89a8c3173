// kernels/cpu/gemm.h's bfloat16 routing to AMX tiles: which products go there (gemm_bf16_on_amx),
// and that gemm's packing of each distinct B, its split of rows over the pool and its batch
// strides give, bit for bit, what one amx_gemm call per product gives (whose arithmetic
// amx_gemm_test checks), for every AMX copy this CPU runs (the emulated one anywhere). The
// float32 and float64 paths are tested through raw::mm in tests/tensor/linalg_ops_test.cc.
#include "kernels/cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/small_gemm_isa.h"

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

void check(const Case& t, uint32_t seed) {
  SCOPED_TRACE("batch=" + std::to_string(t.batch) + " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) +
               " k=" + std::to_string(t.k) + (t.a_t ? " A^T" : "") + (t.b_t ? " B^T" : "") +
               (t.shared_b ? " shared B" : "") + " alpha=" + std::to_string(t.alpha) +
               " beta=" + std::to_string(t.beta));
  ASSERT_TRUE(gemm_bf16_on_amx(t.m, t.n, t.k));
  // Each matrix of the batch padded by 3 elements per line and 7 between matrices.
  const int64_t lda = (t.a_t ? t.m : t.k) + 3, ldb = (t.b_t ? t.k : t.n) + 3, ldc = t.n + 3;
  const int64_t a_bs = (t.a_t ? t.k : t.m) * lda + 7, b_bs = t.shared_b ? 0 : (t.b_t ? t.n : t.k) * ldb + 7;
  const int64_t c_bs = t.m * ldc + 7;
  const std::vector<BFloat16> a = random_bf16(t.batch * a_bs, seed);
  const std::vector<BFloat16> b = random_bf16((t.shared_b ? 1 : t.batch) * ((t.b_t ? t.n : t.k) * ldb + 7), seed + 1);
  const std::vector<BFloat16> c0 = random_bf16(t.batch * c_bs, seed + 2);
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
  }
  set_num_threads(threads);
}

INSTANTIATE_TEST_SUITE_P(Threads, GemmBf16OnAmx, ::testing::Values(1, 3));

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
