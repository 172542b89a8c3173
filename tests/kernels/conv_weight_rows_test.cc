// The bfloat16 weight gradient with the image copy read by strided tile loads
// (kernels/cpu/conv_weight_rows.h): bit for bit against a reference in the tiles' order on every
// copy this CPU runs (the emulated one anywhere: the strided A rows, grad_y's tiles, odd output
// widths, rows longer than 32 pixels, more than 16 rows of (kernel row, channel), more than 16
// output channels, more than 5 kernel columns, several images per call; the hardware where AMX is
// usable), that reference close to the float64 weight gradient, no pixel outside the output
// multiplied, and Auto's routing.
#include "kernels/cpu/conv_weight_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/conv.h"
#include "tests/kernels/amx_reference.h"
#include "tests/kernels/conv_reference.h"
#include "tests/kernels/kernel_testing.h"

namespace colony::kernels::cpu {
namespace {

using namespace colony::testing;  // NOLINT(build/namespaces): the references and helpers of the kernel tests

// An output row in the fewest chunks of at most 32 pixels, of equal even length.
struct Chunks {
  int64_t count = 0, pixels = 0;
};
Chunks chunks_for(int64_t wo) {
  Chunks c;
  c.count = (wo + 31) / 32;
  c.pixels = ((wo + c.count - 1) / c.count + 1) / 2 * 2;
  return c;
}

// start[o][c][r][kw] + S, S the float32 sum over images [n0, n1), output rows h and chunks, each a
// tile step (amx_reference.h) over the chunk's pixels: x at (h + r - ph, ox + kw - pw) (zero
// outside the image) times grad_y at (h, ox), ox = chunk * pixels + p, both zero from Wo on.
std::vector<float> rows_reference(const ConvCase& k, const std::vector<BFloat16>& x, const std::vector<BFloat16>& gy,
                                  int64_t n0, int64_t n1, const std::vector<float>& start) {
  const ConvDims d = dims(k);
  const Chunks ch = chunks_for(d.wo);
  std::vector<float> gw = start;
  for (int64_t o = 0; o < k.o; ++o) {
    for (int64_t c = 0; c < k.c; ++c) {
      for (int64_t r = 0; r < k.kh; ++r) {
        for (int64_t kw = 0; kw < k.kw; ++kw) {
          float sum = 0.0f;
          for (int64_t n = n0; n < n1; ++n) {
            for (int64_t h = 0; h < d.ho; ++h) {
              for (int64_t chunk = 0; chunk < ch.count; ++chunk) {
                auto xs = [&](int64_t p) -> uint16_t {
                  const int64_t ox = chunk * ch.pixels + p, iy = h + r - k.padding.h, ix = ox + kw - k.padding.w;
                  if (ox >= d.wo || iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) return 0;
                  return x[((n * k.c + c) * k.h + iy) * k.w + ix].bits;
                };
                auto gys = [&](int64_t p) -> uint16_t {
                  const int64_t ox = chunk * ch.pixels + p;
                  return ox < d.wo ? gy[((n * k.o + o) * d.ho + h) * d.wo + ox].bits : uint16_t{0};
                };
                sum = amx_dot(ch.pixels, xs, gys, sum);
              }
            }
          }
          float& out = gw[((o * k.c + c) * k.kh + r) * k.kw + kw];
          out += sum;
        }
      }
    }
  }
  return gw;
}

// Stride 1, dilation 1, one group: LeNet's layers (conv2: 30 rows of (r, c), two row tiles of 15),
// padding (an even Wo read in place), odd output widths (a copy per kernel column), a row of 64
// pixels (two chunks of 32 in place) and of 38 (two of 20, the last two pixels zero), 20 and 33
// output channels (two and three column tiles), kernel widths 7 (groups of 5 and 2 kernel columns)
// and 1, 17 rows of (r, c) (two row tiles of 9), 10 images (calls of 8 and 2), images of 270 KB
// of copies and tiles each (calls of 3 and 1).
const std::vector<ConvCase>& rows_cases() {
  static const std::vector<ConvCase> cases = {
      {2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},        // LeNet conv1
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true},       // LeNet conv2
      {2, 4, 7, 8, 5, 3, 3, 1, 1, 1, 1, true},          // padding 1, Wo 8
      {2, 4, 7, 9, 5, 3, 3, 1, {1, 2}, 1, 1, false},    // Wo 11 (odd)
      {1, 2, 5, 66, 3, 3, 3, 1, 0, 1, 1, true},         // Wo 64: two chunks of 32
      {2, 2, 4, 40, 7, 3, 3, 1, 0, 1, 1, true},         // Wo 38: two chunks of 20
      {1, 3, 9, 10, 20, 3, 3, 1, 1, 1, 1, true},        // 20 output channels
      {2, 5, 8, 12, 33, 2, 7, 1, {0, 3}, 1, 1, false},  // 33 output channels, kernel width 7
      {2, 8, 5, 5, 4, 1, 1, 1, 0, 1, 1, true},          // 1x1
      {10, 1, 11, 6, 3, 17, 3, 1, {4, 1}, 1, 1, true},  // 17 rows of (r, c), 10 images
      {4, 16, 64, 64, 16, 3, 3, 1, 1, 1, 1, false},     // 3 images per call
  };
  return cases;
}

std::vector<float> random_start(int64_t n, uint32_t seed) {
  std::vector<float> v;
  for (BFloat16 e : random_bf16(n, seed)) v.push_back(static_cast<float>(e));
  return v;
}

TEST(ConvWeightRows, EqualsTheTilesOrderReferenceOnEveryCopy) {
  uint32_t seed = 500;
  for (const ConvCase& k : rows_cases()) {
    const Conv2dGeometry g = geometry(k);
    ASSERT_TRUE(conv_weight_rows_fit(g)) << name(k);
    const ConvDims d = dims(k);
    const std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), seed++);
    const std::vector<BFloat16> gy = random_bf16(k.n * k.o * d.ho * d.wo, seed++);
    const std::vector<float> zero(numel(w_shape(k)), 0.0f), start = random_start(numel(w_shape(k)), seed++);
    const std::vector<float> want = rows_reference(k, x, gy, 0, k.n, zero);
    // The reference is the weight gradient, up to float32 sums of bfloat16 products.
    const NaiveGrads naive = naive_conv_backward(k, cast<double>(gy), cast<double>(x), cast<double>(zero));
    std::string where;
    EXPECT_TRUE(close(cast<double>(want), naive.gw, 1e-4, &where)) << name(k) << " " << where;
    // A range of images added to a gradient already holding values.
    const int64_t n0 = k.n > 1 ? 1 : 0;
    const std::vector<float> want_range = rows_reference(k, x, gy, n0, k.n, start);
    for (const ConvWeightRowsFns* fns : runnable_conv_weight_rows_copies()) {
      SCOPED_TRACE(name(k) + " " + fns->isa);
      ScopedConvWeightRowsFns use(fns);
      std::vector<float> gw = zero;
      conv_weight_rows_accumulate(g, gy.data(), x.data(), 0, k.n, gw.data());
      int64_t bad = 0;
      for (size_t e = 0; e < want.size(); ++e) {
        if (gw[e] != want[e] && bad++ < 3) ADD_FAILURE() << "gw[" << e << "] = " << gw[e] << ", want " << want[e];
      }
      gw = start;
      conv_weight_rows_accumulate(g, gy.data(), x.data(), n0, k.n, gw.data());
      for (size_t e = 0; e < want.size(); ++e) {
        if (gw[e] != want_range[e] && bad++ < 6) {
          ADD_FAILURE() << "images [" << n0 << ", " << k.n << "): gw[" << e << "] = " << gw[e] << ", want "
                        << want_range[e];
        }
      }
      EXPECT_EQ(bad, 0);
    }
  }
}

// An infinite input reaches exactly the weights whose windows hold it: no pixel past an output
// row's end is multiplied (a zero of grad_y times infinity would be NaN), with an odd output width
// (a copy per kernel column) and an even one (read in place).
TEST(ConvWeightRows, AnInfiniteInputReachesOnlyTheWeightsThatSeeIt) {
  for (const ConvCase& k : {ConvCase{1, 2, 9, 9, 3, 3, 3, 1, 0, 1, 1, false},    // Wo 7
                            ConvCase{1, 2, 9, 10, 3, 3, 3, 1, 0, 1, 1, false}}) {  // Wo 8
    const ConvDims d = dims(k);
    std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), 61);
    const std::vector<BFloat16> gy = random_bf16(k.n * k.o * d.ho * d.wo, 62);
    // Column 7 of row 4: with Wo 7, kernel columns 0 and 1 would read it as the pad pixel.
    const int64_t iy = 4, ix = 7;
    for (int64_t c = 0; c < k.c; ++c) x[(c * k.h + iy) * k.w + ix] = BFloat16(std::numeric_limits<float>::infinity());
    for (const ConvWeightRowsFns* fns : runnable_conv_weight_rows_copies()) {
      SCOPED_TRACE(name(k) + " " + fns->isa);
      ScopedConvWeightRowsFns use(fns);
      std::vector<float> gw(numel(w_shape(k)), 0.0f);
      conv_weight_rows_accumulate(geometry(k), gy.data(), x.data(), 0, k.n, gw.data());
      int64_t wrong = 0;
      for (int64_t o = 0; o < k.o; ++o) {
        for (int64_t c = 0; c < k.c; ++c) {
          for (int64_t r = 0; r < k.kh; ++r) {
            for (int64_t kw = 0; kw < k.kw; ++kw) {
              // Output (iy - r, ix - kw) reads the infinity through this weight.
              const bool sees = iy - r >= 0 && iy - r < d.ho && ix - kw >= 0 && ix - kw < d.wo;
              const float v = gw[((o * k.c + c) * k.kh + r) * k.kw + kw];
              if (std::isfinite(v) == sees && wrong++ < 3) {
                ADD_FAILURE() << "o " << o << " c " << c << " (" << r << ", " << kw << ") = " << v
                              << (sees ? ", want non-finite" : "");
              }
            }
          }
        }
      }
      EXPECT_EQ(wrong, 0);
    }
  }
}

// Auto routes a bfloat16 weight gradient that conv_weight_rows_fit takes here where the product runs
// (the emulated copy stands for AMX): grad_w is the reference's sums rounded once (one thread: one
// part), grad_b backward_widened's (the float32 kernel's on widened grad_y, rounded); two threads
// sum two parts (equal up to that float32 addition). Strides, and no copy, stay off it.
TEST(ConvWeightRows, AutosRoutingThroughConv2dBackward) {
  const ConvCase k{3, 3, 12, 12, 6, 5, 5, 1, 0, 1, 1, true};
  const Conv2dGeometry g = geometry(k);
  const ConvDims d = dims(k);
  const std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), 71), gy = random_bf16(k.n * k.o * d.ho * d.wo, 72);
  const std::vector<float> sums = rows_reference(k, x, gy, 0, k.n, std::vector<float>(numel(w_shape(k)), 0.0f));
  std::vector<BFloat16> want_w;
  for (float v : sums) want_w.push_back(BFloat16(v));
  std::vector<float> gy32, x32, gw32(numel(w_shape(k))), gb32(k.o);
  for (BFloat16 v : gy) gy32.push_back(static_cast<float>(v));
  for (BFloat16 v : x) x32.push_back(static_cast<float>(v));
  conv2d_backward(DType::Float32, g, gy32.data(), x32.data(), nullptr, nullptr, gw32.data(), gb32.data(),
                  ConvAlgorithm::Direct);
  std::vector<BFloat16> want_b;
  for (float v : gb32) want_b.push_back(BFloat16(v));

  ScopedAmxGemmFns amx(&amx_emulated::amx_gemm_fns());
  {
    ScopedConvWeightRowsFns none(nullptr);
    EXPECT_FALSE(conv2d_bf16_weight_rows(g));
  }
  ScopedConvWeightRowsFns use(&conv_weight_rows_emulated::conv_weight_rows_fns());
  EXPECT_TRUE(conv2d_bf16_weight_rows(g));
  ConvCase wide = k;
  wide.o = 16;
  EXPECT_TRUE(conv2d_bf16_weight_rows(geometry(wide)));
  ConvCase strided = k;
  strided.stride = {2, 2};
  EXPECT_FALSE(conv2d_bf16_weight_rows(geometry(strided)));
  std::vector<BFloat16> gw(want_w.size(), BFloat16(7.0f)), gb(k.o, BFloat16(7.0f));
  {
    ScopedThreads one(1);
    conv2d_backward(DType::BFloat16, g, gy.data(), x.data(), nullptr, nullptr, gw.data(), gb.data());
  }
  EXPECT_EQ(mismatches(gw, want_w, "grad_w"), 0);
  EXPECT_EQ(mismatches(gb, want_b, "grad_b"), 0);
  std::vector<BFloat16> gw2(want_w.size()), gb2(k.o);
  {
    ScopedThreads two(2);
    conv2d_backward(DType::BFloat16, g, gy.data(), x.data(), nullptr, nullptr, gw2.data(), gb2.data());
  }
  std::string where;
  EXPECT_TRUE(close(cast<double>(gw2), cast<double>(gw), 2e-2, &where)) << where;
  EXPECT_TRUE(close(cast<double>(gb2), cast<double>(gb), 2e-2, &where)) << where;
  // The bias gradient alone.
  std::vector<BFloat16> gb_alone(k.o);
  {
    ScopedThreads one(1);
    conv2d_backward(DType::BFloat16, g, gy.data(), x.data(), nullptr, nullptr, nullptr, gb_alone.data());
  }
  EXPECT_EQ(mismatches(gb_alone, want_b, "grad_b alone"), 0);
}

TEST(ConvWeightRows, RefusesShapesItDoesNotTake) {
  ScopedConvWeightRowsFns use(&conv_weight_rows_emulated::conv_weight_rows_fns());
  ConvCase strided{1, 2, 8, 8, 3, 3, 3, {2, 1}, 0, 1, 1, false};
  ConvCase dilated{1, 2, 8, 8, 3, 3, 3, 1, 0, {1, 2}, 1, false};
  ConvCase grouped{1, 4, 8, 8, 4, 3, 3, 1, 0, 1, 2, false};
  std::vector<BFloat16> x(4 * 64), gy(4 * 64);
  std::vector<float> gw(64);
  for (const ConvCase& k : {strided, dilated, grouped}) {
    EXPECT_FALSE(conv_weight_rows_fit(geometry(k))) << name(k);
    EXPECT_THROW(conv_weight_rows_accumulate(geometry(k), gy.data(), x.data(), 0, 1, gw.data()), std::invalid_argument)
        << name(k);
  }
  ScopedConvWeightRowsFns none(nullptr);
  const ConvCase ok{1, 2, 8, 8, 3, 3, 3, 1, 0, 1, 1, false};
  EXPECT_THROW(conv_weight_rows_accumulate(geometry(ok), gy.data(), x.data(), 0, 1, gw.data()), std::invalid_argument);
}

}  // namespace
}  // namespace colony::kernels::cpu
