// Attention's float32 row loops under bfloat16 (kernels/cpu/attention_rows.h), each ISA's copy
// (AVX2 always, AVX-512 where the CPU has it), against float64 references, with lengths that leave
// every tail size of both vector widths; and the two copies against each other lane for lane.
#include "kernels/cpu/attention_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/cpu_isa.h"

namespace colony::kernels::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
const int64_t kLengths[] = {0, 1, 5, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 256};

std::vector<const AttentionRowFns*> every_copy() {
  std::vector<const AttentionRowFns*> copies = {&avx2::attention_row_fns()};
  if (detected_cpu_isa() >= CpuIsa::Avx512) {
    copies.push_back(&avx512::attention_row_fns());
  } else {
    std::printf("this CPU has no AVX-512: testing the avx2 copy only\n");
  }
  return copies;
}

// Scores as attention's are: a spread of a few units, some masked to -inf (every third, and all of
// them past a causal cut at 3/4 of the row), and a few far below the rest.
std::vector<float> scores(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  std::vector<float> s(n);
  for (int64_t c = 0; c < n; ++c) s[c] = (c % 3 == 2 || c >= n - n / 4) && n > 2 ? kNegInf : u(gen);
  // Two finite scores far below the others (e^x under FLT_MIN: exactly 0) and one just above.
  if (n > 7) {
    s[0] = -90.0f;
    s[3] = -87.5f;
    s[4] = -80.0f;
  }
  return s;
}

TEST(AttentionRows, RowMaxIsTheLargestScore) {
  for (const AttentionRowFns* f : every_copy()) {
    for (int64_t n : kLengths) {
      for (uint32_t seed = 0; seed < 4; ++seed) {
        std::vector<float> s = scores(n, seed);
        if (n > 0) s[(seed * 7) % n] = 9.5f;  // the maximum in every lane position, tail included
        float want = -3.0f;
        for (float x : s) want = std::max(want, x);
        EXPECT_EQ(f->row_max(s.data(), n, -3.0f), want) << f->isa << " n=" << n << " seed=" << seed;
        EXPECT_EQ(f->row_max(s.data(), n, 20.0f), 20.0f) << f->isa << " n=" << n;  // the running max kept
      }
    }
    const std::vector<float> all_masked(37, kNegInf);
    EXPECT_EQ(f->row_max(all_masked.data(), 37, kNegInf), kNegInf) << f->isa;
  }
}

TEST(AttentionRows, ExpRowMatchesFloat64AndSumsItsResults) {
  for (const AttentionRowFns* f : every_copy()) {
    for (int64_t n : kLengths) {
      std::vector<float> s = scores(n, 11 + static_cast<uint32_t>(n));
      // A guard past the row: the masked tail must not be written.
      std::vector<float> row(s);
      row.push_back(123.0f);
      const float shift = 2.5f;
      const float sum = f->exp_row(row.data(), n, shift);
      double want_sum = 0.0;
      for (int64_t c = 0; c < n; ++c) {
        // exp of the float32 difference, as the kernel takes it (the subtraction's rounding is
        // attention's, not the exponential's).
        const float x = s[c] - shift;
        const double want = std::exp(static_cast<double>(x));
        want_sum += want;
        if (x < -87.33f) {
          EXPECT_EQ(row[c], 0.0f) << f->isa << " n=" << n << " c=" << c;
        } else {
          // vec_math.h's exp is within about 1 ulp of e^x; 2 allowed.
          EXPECT_NEAR(row[c], want, 2 * want * FLT_EPSILON) << f->isa << " n=" << n << " c=" << c;
        }
      }
      EXPECT_EQ(row[n], 123.0f) << f->isa << " n=" << n;
      EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum + 1e-30) << f->isa << " n=" << n;
    }
    // A row masked whole (shift 0, as online_softmax_row_amx gives it): zeros, sum 0.
    std::vector<float> masked(21, kNegInf);
    EXPECT_EQ(f->exp_row(masked.data(), 21, 0.0f), 0.0f) << f->isa;
    for (float x : masked) EXPECT_EQ(x, 0.0f) << f->isa;
  }
}

TEST(AttentionRows, ScoreGradRowIsPTimesDpMinusD) {
  for (const AttentionRowFns* f : every_copy()) {
    for (int64_t n : kLengths) {
      std::mt19937 gen(static_cast<uint32_t>(n));
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      std::vector<float> p(n), dp(n + 1);
      for (int64_t c = 0; c < n; ++c) {
        p[c] = std::fabs(u(gen));
        dp[c] = u(gen);
      }
      dp[n] = 77.0f;  // guard
      const std::vector<float> dp0(dp);
      const float d = 0.375f;
      f->score_grad_row(p.data(), dp.data(), n, d);
      for (int64_t c = 0; c < n; ++c) {
        const float want = p[c] * (dp0[c] - d);  // two roundings, as the vectors do them
        EXPECT_EQ(dp[c], want) << f->isa << " n=" << n << " c=" << c;
      }
      EXPECT_EQ(dp[n], 77.0f) << f->isa << " n=" << n;
    }
  }
}

// Rounding to bfloat16 bits: BFloat16(float)'s bits for ties both ways, NaN, infinities,
// denormals and rounding up to infinity, at every tail length.
TEST(AttentionRows, RoundRowMatchesBFloat16) {
  std::vector<float> special = {0.0f, -0.0f, 1.0f, 1.00390625f /* tie, even below */, 1.01171875f /* tie, odd below */,
                                -1.00390625f, std::numeric_limits<float>::infinity(), kNegInf,
                                std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::denorm_min(), 1e-40f, FLT_MAX, -FLT_MAX, 3.0e38f};
  uint32_t snan_bits = 0x7f800001u;  // a signalling NaN whose payload is all in the low half
  float snan;
  std::memcpy(&snan, &snan_bits, sizeof(snan));
  special.push_back(snan);
  std::mt19937 gen(3);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (const AttentionRowFns* f : every_copy()) {
    for (int64_t n : kLengths) {
      std::vector<float> src(n);
      for (int64_t c = 0; c < n; ++c) {
        const uint32_t b = any_bits(gen);
        std::memcpy(&src[c], &b, sizeof(b));
        if (c % 4 == 1) src[c] = special[(c / 4) % special.size()];
      }
      std::vector<uint16_t> dst(n + 1, 0xbeef);  // a guard past the row
      f->round_row(src.data(), n, dst.data());
      for (int64_t c = 0; c < n; ++c) {
        EXPECT_EQ(dst[c], BFloat16(src[c]).bits) << f->isa << " n=" << n << " c=" << c << " x=" << src[c];
      }
      EXPECT_EQ(dst[n], 0xbeef) << f->isa << " n=" << n;
    }
  }
}

// Both widths run vec_math.h's exp operation for operation: the same weights bit for bit.
TEST(AttentionRows, CopiesAgreeLaneForLane) {
  const std::vector<const AttentionRowFns*> copies = every_copy();
  if (copies.size() < 2) GTEST_SKIP() << "one copy on this CPU";
  for (int64_t n : kLengths) {
    std::vector<float> a = scores(n, 5), b = a;
    copies[0]->exp_row(a.data(), n, -1.25f);
    copies[1]->exp_row(b.data(), n, -1.25f);
    for (int64_t c = 0; c < n; ++c) EXPECT_EQ(a[c], b[c]) << "n=" << n << " c=" << c;
  }
}

// The whole-head forward's row: scale (a power of two, so that x is exact whether or not the
// compiler fuses the mask's addition) and mask in one pass, then the weights as exp_row gives them
// under the row's max, rounded as round_row rounds them, zeros to the width; the sum unrounded.
TEST(AttentionRows, SoftmaxRowIsScaleMaskMaxExpAndRound) {
  for (const AttentionRowFns* f : every_copy()) {
    for (int64_t n : kLengths) {
      for (bool masked : {false, true}) {
        SCOPED_TRACE(std::string(f->isa) + " n=" + std::to_string(n) + (masked ? " masked" : ""));
        const std::vector<float> s0 = scores(n, 21 + static_cast<uint32_t>(n));
        std::vector<float> mask(n);
        std::mt19937 gen(static_cast<uint32_t>(n));
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int64_t c = 0; c < n; ++c) mask[c] = c % 5 == 4 ? kNegInf : u(gen);
        const float scale = 0.125f;
        std::vector<float> x(n);
        float want_max = kNegInf;
        for (int64_t c = 0; c < n; ++c) {
          x[c] = s0[c] * scale + (masked ? mask[c] : 0.0f);
          want_max = std::max(want_max, x[c]);
        }
        std::vector<float> w(x);
        const float want_sum = f->exp_row(w.data(), n, want_max == kNegInf ? 0.0f : want_max);
        std::vector<uint16_t> want_p(n);
        f->round_row(w.data(), n, want_p.data());

        const int64_t width = (n + 31) / 32 * 32 + (n % 2 == 0 ? 32 : 0);
        std::vector<float> s(s0);
        std::vector<uint16_t> p(width + 1, 0xbeef);  // stale bits up to the width, a guard past it
        float got_max = 1.0f;
        const float sum = f->softmax_row(s.data(), n, width, scale, masked ? mask.data() : nullptr, p.data(), &got_max);
        EXPECT_EQ(got_max, want_max);
        EXPECT_EQ(sum, want_sum);  // the same lanes summed in the same order
        for (int64_t c = 0; c < n; ++c) {
          EXPECT_EQ(s[c], s0[c]) << "s changed at " << c;
          EXPECT_EQ(p[c], want_p[c]) << "p at " << c;
        }
        for (int64_t c = n; c < width; ++c) EXPECT_EQ(p[c], 0) << "p past n at " << c;
        EXPECT_EQ(p[width], 0xbeef);
      }
    }
    // Every score -inf: no weights, sum 0, max -inf.
    std::vector<float> all(37, kNegInf);
    std::vector<uint16_t> p(64, 0xbeef);
    float mx = 0.0f;
    EXPECT_EQ(f->softmax_row(all.data(), 37, 64, 0.5f, nullptr, p.data(), &mx), 0.0f) << f->isa;
    EXPECT_EQ(mx, kNegInf) << f->isa;
    for (uint16_t b : p) EXPECT_EQ(b, 0) << f->isa;
  }
}

// The whole-head backward's row: P = exp(scale s + mask - lse) and dS = P (dP - D), as exp_row and
// score_grad_row give them, both rounded; a row with lse = -inf (every key masked) gives zeros.
TEST(AttentionRows, SoftmaxGradRowIsExpThenScoreGradThenRound) {
  for (const AttentionRowFns* f : every_copy()) {
    for (int64_t n : kLengths) {
      for (bool masked : {false, true}) {
        SCOPED_TRACE(std::string(f->isa) + " n=" + std::to_string(n) + (masked ? " masked" : ""));
        const std::vector<float> s = scores(n, 31 + static_cast<uint32_t>(n));
        std::mt19937 gen(static_cast<uint32_t>(n) + 100);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> mask(n), dp(n);
        for (int64_t c = 0; c < n; ++c) {
          mask[c] = c % 7 == 6 ? kNegInf : u(gen);
          dp[c] = u(gen);
        }
        const float scale = 0.25f, lse = 1.75f, d = -0.3125f;
        std::vector<float> w(n), ds(dp);
        for (int64_t c = 0; c < n; ++c) w[c] = s[c] * scale + (masked ? mask[c] : 0.0f);
        f->exp_row(w.data(), n, lse);
        f->score_grad_row(w.data(), ds.data(), n, d);
        std::vector<uint16_t> want_p(n), want_ds(n);
        f->round_row(w.data(), n, want_p.data());
        f->round_row(ds.data(), n, want_ds.data());

        const int64_t width = (n + 31) / 32 * 32;
        std::vector<uint16_t> p(width + 1, 0xbeef), g(width + 1, 0xbeef);
        f->softmax_grad_row(s.data(), dp.data(), n, width, scale, masked ? mask.data() : nullptr, lse, d, p.data(),
                            g.data());
        for (int64_t c = 0; c < n; ++c) {
          EXPECT_EQ(p[c], want_p[c]) << "p at " << c;
          EXPECT_EQ(g[c], want_ds[c]) << "ds at " << c;
        }
        for (int64_t c = n; c < width; ++c) {
          EXPECT_EQ(p[c], 0) << "p past n at " << c;
          EXPECT_EQ(g[c], 0) << "ds past n at " << c;
        }
        EXPECT_EQ(p[width], 0xbeef);
        EXPECT_EQ(g[width], 0xbeef);
        // Fully masked (lse = -inf): zeros over the whole width.
        f->softmax_grad_row(s.data(), dp.data(), n, width, scale, nullptr, kNegInf, d, p.data(), g.data());
        for (int64_t c = 0; c < width; ++c) {
          EXPECT_EQ(p[c], 0) << "masked row, p at " << c;
          EXPECT_EQ(g[c], 0) << "masked row, ds at " << c;
        }
      }
    }
  }
}

TEST(AttentionRows, ScaleRoundRowAndDotBf16Row) {
  for (const AttentionRowFns* f : every_copy()) {
    for (int64_t n : kLengths) {
      SCOPED_TRACE(std::string(f->isa) + " n=" + std::to_string(n));
      std::mt19937 gen(static_cast<uint32_t>(n) + 200);
      std::uniform_real_distribution<float> u(-3.0f, 3.0f);
      std::vector<float> v(n);
      std::vector<uint16_t> a(n), b(n);
      double want_dot = 0.0, mag = 0.0;
      for (int64_t c = 0; c < n; ++c) {
        v[c] = u(gen);
        a[c] = BFloat16(u(gen)).bits;
        b[c] = BFloat16(u(gen)).bits;
        const double x = static_cast<float>(BFloat16::from_bits(a[c])), y = static_cast<float>(BFloat16::from_bits(b[c]));
        want_dot += x * y;
        mag += std::abs(x * y);
      }
      const float factor = 0.3f;
      std::vector<uint16_t> dst(n + 1, 0xbeef);
      f->scale_round_row(v.data(), n, factor, dst.data());
      for (int64_t c = 0; c < n; ++c) EXPECT_EQ(dst[c], BFloat16(v[c] * factor).bits) << "at " << c;
      EXPECT_EQ(dst[n], 0xbeef);
      EXPECT_NEAR(f->dot_bf16_row(a.data(), b.data(), n), want_dot, 1e-5 * mag + 1e-30);
    }
  }
}

TEST(AttentionRows, ActiveCopyFollowsTheIsa) {
  EXPECT_STREQ(active_attention_row_fns().isa, active_cpu_isa() >= CpuIsa::Avx512 ? "avx512" : "avx2");
}

}  // namespace
}  // namespace colony::kernels::cpu
