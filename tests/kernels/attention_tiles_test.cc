// kernels/cpu/attention_tiles.h: the products of attention's whole-head kernels. Every copy this CPU
// runs (over amx_gemm's emulated tiles anywhere; the native tiles and the copy over amx_gemm's
// hardware tiles where AMX is usable) against float64, on A read in place and transposed, several
// blocks of rows and columns with a last half block, depths from 0 to the deepest, accumulation
// into C, and B starting at a later step of a deeper packed matrix. The native tiles must equal the
// emulated ones bit for bit (they run the same tdpbf16ps steps in the same order).
#include "kernels/cpu/attention_tiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/cpu_isa.h"

namespace colony::kernels::cpu {
namespace {

struct Case {
  int64_t m, n, k;
  bool transposed, accumulate;
  int64_t skip_steps;  // B packed from a matrix this many 32-deep steps deeper, the product starting after them
  std::string name() const {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
           (transposed ? " A^T" : "") + (accumulate ? " +=" : "") + " skip=" + std::to_string(skip_steps);
  }
};

uint16_t bf16_bits(float x) {
  const BFloat16 b(x);
  uint16_t bits;
  std::memcpy(&bits, &b, sizeof(bits));
  return bits;
}
double widen(uint16_t bits) {
  const uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

struct Run {
  std::vector<float> c;
  std::vector<double> want, bound;  // float64 product (plus C's start) and the error allowed per entry
};

// The case's product on `tiles`, with inputs from fixed seeds (the same for every copy).
Run run(const AttentionTileFns& tiles, const Case& t) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  const int64_t pad = 5;  // A's rows (or X's) longer than the product reads
  const int64_t lda = (t.transposed ? t.m : t.k) + pad;
  const int64_t x_rows = t.transposed ? t.k : t.m;
  std::vector<uint16_t> a(x_rows * lda + 16);
  for (uint16_t& x : a) x = bf16_bits(u(gen));
  const int64_t kb = t.k + 32 * t.skip_steps;  // B's depth as packed
  std::vector<uint16_t> b(kb * t.n);
  for (uint16_t& x : b) x = bf16_bits(u(gen));
  std::vector<uint16_t> packed(amx_packed_b_size(kb, t.n));
  amx_pack_b(kb, t.n, b.data(), t.n, 1, packed.data());
  const int64_t ldc = t.n + 3;
  Run r;
  r.c.assign(t.m * ldc, 0.0f);
  for (float& x : r.c) x = t.accumulate ? u(gen) : std::nanf("");  // not accumulating: C is written whole
  r.want.assign(t.m * t.n, 0.0);
  r.bound.assign(t.m * t.n, 0.0);
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.n; ++j) {
      double sum = t.accumulate ? r.c[i * ldc + j] : 0.0, mag = std::abs(sum);
      for (int64_t p = 0; p < t.k; ++p) {
        const double x = widen(t.transposed ? a[p * lda + i] : a[i * lda + p]);
        const double y = widen(b[(32 * t.skip_steps + p) * t.n + j]);
        sum += x * y;
        mag += std::abs(x * y);
      }
      r.want[i * t.n + j] = sum;
      r.bound[i * t.n + j] = 2e-6 * (t.k + 2) * mag + 1e-30;  // float32 sums: ~k roundings of 6e-8
    }
  }
  AttentionTileProduct p;
  p.m = t.m;
  p.n = t.n;
  p.k = t.k;
  p.a = a.data();
  p.lda = lda;
  p.a_transposed = t.transposed;
  p.packed_b = packed.data() + 512 * t.skip_steps;
  p.b_steps = kb > 0 ? (kb + 31) / 32 : 0;
  p.c = r.c.data();
  p.ldc = ldc;
  p.accumulate = t.accumulate;
  tiles.begin();
  tiles.product(p);
  tiles.end();
  // Columns past n (ldc > n) untouched: their start stays (NaN or the random C).
  return r;
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  for (int64_t m : {16, 32, 48, 80}) {
    for (int64_t n : {16, 32, 48}) {
      for (int64_t k : {0, 32, 96, 256}) {
        for (bool tr : {false, true}) cs.push_back({m, n, k, tr, k == 96, k == 32 ? 2 : 0});
      }
    }
  }
  cs.push_back({32, 80, 64, true, true, 1});
  cs.push_back({64, 64, 256, false, true, 0});
  return cs;
}

void check_copy(const AttentionTileFns& tiles, const char* what, std::vector<std::vector<float>>* results) {
  for (const Case& t : cases()) {
    SCOPED_TRACE(std::string(what) + " " + tiles.isa + " " + t.name());
    const Run r = run(tiles, t);
    const int64_t ldc = t.n + 3;
    for (int64_t i = 0; i < t.m; ++i) {
      for (int64_t j = 0; j < t.n; ++j) {
        ASSERT_NEAR(r.c[i * ldc + j], r.want[i * t.n + j], r.bound[i * t.n + j]) << "at " << i << ", " << j;
      }
      if (!t.accumulate) {
        for (int64_t j = t.n; j < ldc; ++j) {
          ASSERT_TRUE(std::isnan(r.c[i * ldc + j])) << "written past n at " << i << ", " << j;
        }
      }
    }
    results->push_back(r.c);
  }
}

TEST(AttentionTiles, EveryCopyMatchesFloat64AndTheEmulatedTilesBitForBit) {
  std::vector<std::vector<float>> emulated, other;
  {
    ScopedAmxGemmFns use(&amx_emulated::amx_gemm_fns());
    const AttentionTileFns& tiles = active_attention_tile_fns();
    EXPECT_STREQ(tiles.isa, "amx_gemm");
    check_copy(tiles, "emulated", &emulated);
  }
  if (!amx_usable()) {
    std::printf("AMX is not usable here (%s): the native tiles are not tested\n", amx_unusable_reason());
    return;
  }
  ScopedAmxGemmFns use(&amx_bf16::amx_gemm_fns());
  const AttentionTileFns& native = active_attention_tile_fns();
  EXPECT_STREQ(native.isa, "amx");
  check_copy(native, "native", &other);
  check_copy(attention_tile_fns_over_amx_gemm(), "hardware amx_gemm", &other);
  ASSERT_EQ(other.size(), 2 * emulated.size());
  for (size_t c = 0; c < emulated.size(); ++c) {
    SCOPED_TRACE(cases()[c].name());
    for (size_t e = 0; e < emulated[c].size(); ++e) {
      if (std::isnan(emulated[c][e])) continue;
      ASSERT_EQ(other[c][e], emulated[c][e]) << "native, element " << e;
      ASSERT_EQ(other[emulated.size() + c][e], emulated[c][e]) << "over hardware amx_gemm, element " << e;
    }
  }
}

TEST(AttentionTiles, RefusesWithoutAmx) {
  ScopedAmxGemmFns none(nullptr);
  EXPECT_THROW(active_attention_tile_fns(), std::logic_error);
}

}  // namespace
}  // namespace colony::kernels::cpu
