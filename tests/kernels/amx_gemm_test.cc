// kernels/cpu/amx_gemm.h against a per-output reference of tdpbf16ps' arithmetic (amx_gemm.h: per
// 32-deep step, the even and the odd positions' exact products summed apart in float32, then
// C + (E + O), denormals flushed), bit for bit, for every copy this CPU runs: the emulated one (the
// tiles' packing, blocking and edge tiles over scalar arithmetic, on any CPU) and, where AMX is
// usable, the hardware. The reference loops over outputs, not tiles, so it shares no blocking with
// the code under test. Shapes: m, n, k of 1, 15, 16, 17, 31, 33 and 64 + odd (partial tiles in
// every dimension, odd k's half pair), row- and column-major operands, leading dimensions wider
// than the matrix, float32 accumulation and bfloat16 output with alpha and beta, several panels of
// B, B packed first or panel by panel inside amx_gemm (AmxGemmArgs::b), and denormal-range
// operands.
#include "kernels/cpu/amx_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/cpu_isa.h"
#include "tests/kernels/amx_reference.h"

namespace colony::kernels::cpu {
namespace {

float value(uint16_t bits) { return static_cast<float>(BFloat16::from_bits(bits)); }
uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Random bfloat16 bits: uniform in [-1, 1) times 2^scale.
std::vector<uint16_t> random_bf16(size_t n, uint32_t seed, int scale = 0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (uint16_t& x : v) x = BFloat16(std::ldexp(u(gen), scale)).bits;
  return v;
}

struct Case {
  int64_t m, n, k;
  bool a_col_major = false, b_col_major = false;
  int64_t pad = 0;  // extra elements per row (or column) of A, B and C
  bool bf16_out = false, accumulate = false;
  float alpha = 1.0f, beta = 0.0f;
  int scale = 0;
  bool b_unpacked = false;  // B given as it is (AmxGemmArgs::b), packed a panel at a time inside
  bool bias = false;        // with bf16_out and beta = 0: a bias row (AmxGemmArgs::bias)
  std::string name() const {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
           (a_col_major ? " A^T" : "") + (b_col_major ? " B^T" : "") + (pad ? " padded" : "") +
           (bf16_out ? " bf16 alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) : " f32") +
           (accumulate ? " +=" : "") + (scale ? " 2^" + std::to_string(scale) : "") + (b_unpacked ? " B unpacked" : "") + (bias ? " bias" : "");
  }
};

// C(i, j) as the hardware computes it, one output at a time.
float reference_sum(const Case& t, const std::vector<uint16_t>& a, int64_t ars, int64_t acs,
                    const std::vector<uint16_t>& b, int64_t brs, int64_t bcs, int64_t i, int64_t j, float c0) {
  return testing::amx_dot(
      t.k, [&](int64_t p) { return a[i * ars + p * acs]; }, [&](int64_t p) { return b[p * brs + j * bcs]; }, c0);
}

void check(const AmxGemmFns& fns, const Case& t, uint32_t seed) {
  SCOPED_TRACE(std::string(fns.isa) + " " + t.name());
  ScopedAmxGemmFns use(&fns);
  const int64_t lda = (t.a_col_major ? t.m : t.k) + t.pad, ldb = (t.b_col_major ? t.k : t.n) + t.pad;
  const int64_t ldc = t.n + t.pad;
  const std::vector<uint16_t> a = random_bf16((t.a_col_major ? t.k : t.m) * lda, seed, t.scale);
  const std::vector<uint16_t> b = random_bf16((t.b_col_major ? t.n : t.k) * ldb, seed + 1, t.scale);
  const int64_t ars = t.a_col_major ? 1 : lda, acs = t.a_col_major ? lda : 1;
  const int64_t brs = t.b_col_major ? 1 : ldb, bcs = t.b_col_major ? ldb : 1;
  std::vector<uint16_t> packed(amx_packed_b_size(t.k, t.n) + 1, 0xbeef);
  amx_pack_b(t.k, t.n, b.data(), brs, bcs, packed.data());
  EXPECT_EQ(packed.back(), 0xbeef) << "packing wrote past amx_packed_b_size";

  AmxGemmArgs args;
  args.m = t.m;
  args.n = t.n;
  args.k = t.k;
  // A on a 64-byte boundary, as tensors are, so that a row-major A whose rows start on cache lines
  // can be read in place (amx_gemm_tiles.h): the reference reads `a`.
  std::vector<uint16_t> a_store(a.size() + 32);
  uint16_t* a_aligned = a_store.data() + ((64 - reinterpret_cast<uintptr_t>(a_store.data()) % 64) % 64) / 2;
  std::copy(a.begin(), a.end(), a_aligned);
  args.a = a_aligned;
  args.a_row_stride = ars;
  args.a_col_stride = acs;
  if (t.b_unpacked) {
    args.b = b.data();
    args.b_row_stride = brs;
    args.b_col_stride = bcs;
  } else {
    args.packed_b = packed.data();
  }
  args.ldc = ldc;
  const std::vector<uint16_t> c_init = random_bf16(t.m * ldc, seed + 2);
  std::vector<float> c_f32(t.m * ldc);
  for (size_t e = 0; e < c_f32.size(); ++e) c_f32[e] = value(c_init[e]);
  std::vector<uint16_t> c_bf16 = c_init;
  // The bias row: random values, then the ends of the range: the largest finite bfloat16, a
  // signalling NaN (quieted on the way out) and a denormal (kept where the sum is 0: a rounding
  // that reads denormals as zero, as vcvtneps2bf16 does, would give 0).
  std::vector<uint16_t> bias = random_bf16(t.n, seed + 3);
  if (t.n > 2) {
    bias[0] = 0x7f7f;
    bias[1] = 0x7fa0;  // a signalling NaN, quieted
    bias[2] = 0x0003;  // a denormal
  }
  if (t.bf16_out) {
    args.c_bf16 = c_bf16.data();
    args.alpha = t.alpha;
    args.beta = t.beta;
    if (t.bias) args.bias = bias.data();
  } else {
    args.c_f32 = c_f32.data();
    args.accumulate = t.accumulate;
  }
  amx_gemm(args);

  int64_t mismatches = 0;
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const int64_t e = i * ldc + j;
      if (j >= t.n) {  // the padding between rows is left alone
        if (t.bf16_out ? c_bf16[e] != c_init[e] : float_bits(c_f32[e]) != float_bits(value(c_init[e]))) ++mismatches;
        continue;
      }
      const float start = t.accumulate ? value(c_init[e]) : 0.0f;
      const float sum = reference_sum(t, a, ars, acs, b, brs, bcs, i, j, start);
      if (t.bf16_out) {
        const float want_f = t.bias           ? t.alpha * sum + value(bias[j])
                             : t.beta == 0.0f ? t.alpha * sum
                                              : t.alpha * sum + t.beta * value(c_init[e]);
        const uint16_t want = BFloat16(want_f).bits;
        if (c_bf16[e] != want && mismatches++ < 5) {
          ADD_FAILURE() << "C(" << i << ", " << j << ") = " << value(c_bf16[e]) << ", want " << value(want);
        }
      } else if (float_bits(c_f32[e]) != float_bits(sum) && mismatches++ < 5) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << c_f32[e] << ", want " << sum;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(AmxGemm, PackedTilesHoldVnniPairsPaddedWithZeros) {
  // B 3 x 17 (k = 3: one half-empty pair; n = 17: a second column tile of one column).
  const int64_t k = 3, n = 17;
  std::vector<uint16_t> b(k * n);
  for (int64_t e = 0; e < k * n; ++e) b[e] = static_cast<uint16_t>(e + 1);
  ASSERT_EQ(amx_packed_b_size(k, n), 2 * 512);
  std::vector<uint16_t> packed(amx_packed_b_size(k, n), 0xffff);
  amx_pack_b(k, n, b.data(), n, 1, packed.data());
  EXPECT_EQ(packed[0], b[0 * n + 0]);        // B(0, 0)
  EXPECT_EQ(packed[1], b[1 * n + 0]);        // B(1, 0): the pair's high half
  EXPECT_EQ(packed[2 * 5], b[0 * n + 5]);    // B(0, 5)
  EXPECT_EQ(packed[32 + 2 * 5], b[2 * n + 5]);  // row 1 of the tile: B(2, 5), then B(3, 5) = 0
  EXPECT_EQ(packed[32 + 2 * 5 + 1], 0);
  EXPECT_EQ(packed[512], b[16]);             // column tile 1 starts with B(0, 16)
  EXPECT_EQ(packed[512 + 2], 0);             // column 17 is past n
  int64_t nonzero = 0;
  for (uint16_t x : packed) nonzero += x != 0;
  EXPECT_EQ(nonzero, k * n);
}

TEST(AmxGemm, EdgeTilesInEveryDimensionMatchTheReference) {
  const int64_t sizes[] = {1, 15, 16, 17, 31, 33, 67};
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    uint32_t seed = 1;
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t k : sizes) check(*fns, Case{m, n, k}, seed++);
  }
}

TEST(AmxGemm, TransposedOperandsPaddingAndOutputsMatchTheReference) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    uint32_t seed = 500;
    for (bool a_t : {false, true}) {
      for (bool b_t : {false, true}) {
        for (int64_t pad : {0, 5}) {
          Case t{33, 47, 65, a_t, b_t, pad};
          check(*fns, t, seed++);
          t.accumulate = true;
          check(*fns, t, seed++);
          t.accumulate = false;
          t.bf16_out = true;
          check(*fns, t, seed++);
          t.alpha = 0.5f;
          t.beta = -1.5f;
          check(*fns, t, seed++);
          t.beta = 0.0f;
          t.bias = true;
          check(*fns, t, seed++);
          t.alpha = 1.0f;
          check(*fns, t, seed++);
        }
      }
    }
  }
}

// k = 1000 (32 steps): two depth blocks of 16 steps (kAmxBlockSteps), the partial sums kept in
// float32 between them; a panel holds 24 column tiles (amx_gemm_tiles.h's kPanelBytes), so n = 420
// (27 tiles) takes two panels, the second with an odd tile, and the second panel reads the A
// packed by the first; m = 70 ends in a partial block of 6 rows.
TEST(AmxGemm, SeveralPanelsOfBMatchTheReference) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    check(*fns, Case{70, 300, 1000}, 900);
    check(*fns, Case{70, 420, 1000}, 901);
  }
}

// B unpacked (AmxGemmArgs::b): each panel packed into scratch just before use gives the same bits.
// n = 420 at k = 1000 is two panels of 24 and 3 tiles (the last odd, its last tile partial), in
// both B layouts; then k = 1057 (three depth blocks, a partial last step) and one partial tile,
// with every operand layout, padding, accumulation and bfloat16 output with alpha and beta.
TEST(AmxGemm, BPackedPanelByPanelMatchesTheReference) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    uint32_t seed = 1300;
    for (bool b_t : {false, true}) {
      Case panels{70, 420, 1000, false, b_t, 3};
      panels.b_unpacked = true;
      check(*fns, panels, seed++);
      for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{37, 50, 1057}, {17, 15, 33}}) {
        for (bool a_t : {false, true}) {
          Case t{m, n, k, a_t, b_t, 3};
          t.b_unpacked = true;
          check(*fns, t, seed++);
          t.accumulate = true;
          check(*fns, t, seed++);
          t.accumulate = false;
          t.bf16_out = true;
          t.alpha = 0.5f;
          t.beta = -1.5f;
          check(*fns, t, seed++);
        }
      }
    }
  }
}

// Depth blocks with every operand form: k = 1057 is 34 steps, three blocks of 12, 12 and 10 (the
// last partial step zero-padded); A^T and B^T, accumulation into C, bfloat16 output with alpha and
// beta (rounded once, after the last block).
TEST(AmxGemm, DepthBlocksMatchTheReference) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    uint32_t seed = 950;
    for (bool a_t : {false, true}) {
      for (bool b_t : {false, true}) {
        Case t{37, 50, 1057, a_t, b_t, 3};
        check(*fns, t, seed++);
        t.accumulate = true;
        check(*fns, t, seed++);
        t.accumulate = false;
        t.bf16_out = true;
        check(*fns, t, seed++);
        t.alpha = 0.5f;
        t.beta = -1.5f;
        check(*fns, t, seed++);
        t.alpha = 1.0f;
        t.beta = 0.0f;
        t.bias = true;
        check(*fns, t, seed++);
      }
    }
  }
}

// A read in place (row-major, rows starting on cache lines, spread over L1's sets) in whole 32-row
// blocks of whole steps, the rest packed: m = 70 ends in a packed block of 6 rows; k = 128 (rows
// 256 bytes apart) and k = 640 with 32 columns of padding (two depth blocks of 10 steps, rows
// 1,344 bytes apart) are read in place; k = 1024 (2 KB apart) is packed.
TEST(AmxGemm, AReadInPlaceOrPackedMatchesTheReference) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    check(*fns, Case{70, 40, 128}, 1200);
    Case t{70, 50, 640, false, false, 32};
    check(*fns, t, 1201);
    t.bf16_out = true;
    check(*fns, t, 1202);
    check(*fns, Case{64, 50, 1024}, 1203);
  }
}

// The convolutions' packings (conv.cc) give amx_pack_b's tiles of the explicit matrix: rows or
// columns starting anywhere in one buffer, overlapping as a convolution's windows do, for partial
// column tiles, partial and odd last steps and whole ones. The buffer ends where the last row
// (column) does, so a read past it is a heap overflow under ASan.
TEST(AmxGemm, PackingFromRowOrColumnOffsetsEqualsPackingTheMatrix) {
  for (const auto& [k, n] : {std::pair<int64_t, int64_t>{75, 892}, {150, 136}, {7, 33}, {64, 48}, {33, 15}}) {
    SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n));
    // Rows: B(p, j) = buf[rows[p] + j], rows 3 apart (overlapping), the last ending the buffer.
    std::vector<int64_t> rows(k);
    for (int64_t p = 0; p < k; ++p) rows[p] = 3 * ((p * 7) % k);
    std::vector<uint16_t> buf = random_bf16(3 * (k - 1) + n, 50 + static_cast<uint32_t>(k));
    std::vector<uint16_t> b(k * n);
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) b[p * n + j] = buf[rows[p] + j];
    std::vector<uint16_t> want(amx_packed_b_size(k, n), 1), got(amx_packed_b_size(k, n), 2);
    amx_pack_b(k, n, b.data(), n, 1, want.data());
    amx_pack_b_rows(k, n, buf.data(), rows.data(), got.data());
    EXPECT_EQ(got, want) << "rows";
    // Columns: B(p, j) = buf[cols[j] + p].
    std::vector<int64_t> cols(n);
    for (int64_t j = 0; j < n; ++j) cols[j] = 5 * ((j * 11) % n);
    buf = random_bf16(5 * (n - 1) + k, 60 + static_cast<uint32_t>(n));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) b[p * n + j] = buf[cols[j] + p];
    std::fill(got.begin(), got.end(), uint16_t{2});
    amx_pack_b(k, n, b.data(), n, 1, want.data());
    amx_pack_b_cols(k, n, buf.data(), cols.data(), got.data());
    EXPECT_EQ(got, want) << "columns";
  }
}

// Operands near 2^-63: products and sums fall in float32's denormal range, where tdpbf16ps reads
// denormal inputs as zero and flushes its results (the reference's flush), unlike float32 FMAs.
// Large ones (2^40) check that nothing is scaled or saturated.
TEST(AmxGemm, DenormalAndLargeRangesFollowTheInstruction) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    check(*fns, Case{17, 33, 70, false, false, 0, false, false, 1.0f, 0.0f, -62}, 1000);
    check(*fns, Case{17, 33, 70, false, false, 0, false, true, 1.0f, 0.0f, -64}, 1001);
    check(*fns, Case{17, 33, 70, false, false, 0, false, false, 1.0f, 0.0f, 40}, 1002);
    Case bias{17, 33, 70, false, false, 0, true, false, 1.0f, 0.0f, -64};  // sums flushed to 0: C = bias
    bias.bias = true;
    check(*fns, bias, 1003);
  }
}

TEST(AmxGemm, EmptyProductsWriteZerosOrLeaveC) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    check(*fns, Case{5, 20, 0}, 1100);
    Case acc{5, 20, 0};
    acc.accumulate = true;
    check(*fns, acc, 1101);
  }
}

TEST(AmxGemm, CopiesDescribeThemselvesAndDispatchFollowsTheCpu) {
  EXPECT_STREQ(amx_emulated::amx_gemm_fns().isa, "amx_emulated");
  EXPECT_STREQ(amx_bf16::amx_gemm_fns().isa, "amx");
  EXPECT_EQ(has_amx_gemm(), active_cpu_isa() >= CpuIsa::AmxBf16);
  EXPECT_EQ(runnable_amx_copies().size(), detected_cpu_isa() >= CpuIsa::AmxBf16 ? 2u : 1u);
  {
    ScopedAmxGemmFns none(nullptr);
    EXPECT_FALSE(has_amx_gemm());
    AmxGemmArgs args;
    try {
      amx_gemm(args);
      ADD_FAILURE() << "amx_gemm ran without a copy";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("has_amx_gemm"), std::string::npos) << e.what();
    }
  }
  ScopedAmxGemmFns use(&amx_emulated::amx_gemm_fns());
  EXPECT_TRUE(has_amx_gemm());
  AmxGemmArgs both;
  float f = 0;
  uint16_t h = 0;
  both.c_f32 = &f;
  both.c_bf16 = &h;
  EXPECT_THROW(amx_gemm(both), std::invalid_argument);
  // B given both packed and unpacked, or not at all.
  AmxGemmArgs b_twice;
  b_twice.c_f32 = &f;
  b_twice.packed_b = &h;
  b_twice.b = &h;
  EXPECT_THROW(amx_gemm(b_twice), std::invalid_argument);
  AmxGemmArgs no_b;
  no_b.c_f32 = &f;
  EXPECT_THROW(amx_gemm(no_b), std::invalid_argument);
  // A bias row with a float32 output, or with beta != 0 (C read and a bias both).
  for (const bool f32_out : {true, false}) {
    AmxGemmArgs with_bias;
    if (f32_out) {
      with_bias.c_f32 = &f;
    } else {
      with_bias.c_bf16 = &h;
      with_bias.beta = 1.0f;
    }
    with_bias.packed_b = with_bias.bias = &h;
    EXPECT_THROW(amx_gemm(with_bias), std::invalid_argument) << (f32_out ? "float32 output" : "beta = 1");
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
