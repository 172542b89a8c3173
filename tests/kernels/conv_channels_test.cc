// The bfloat16 forward with the output channels on the AMX tiles' rows and the im2col read by
// strided tile loads from a pair layout (kernels/cpu/conv_channels.h): bit for bit against a
// reference in the tiles' rounding order on every copy this CPU runs (the emulated one anywhere:
// the layouts' addresses, odd kernel widths, the groups at a row's end, more than 16 rows of depth,
// more than 16 output channels; the hardware where AMX is usable), close to the float64
// convolution of the rounded operands, no pad partner multiplying a neighbour pixel, a float32 x
// rounded as the layouts are built, and the refusals.
#include "kernels/cpu/conv_channels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
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

// y[n][o][oy][ox] = round(S + bias[o]), S the float32 sum over the steps (kp, chunk) in order, each
// a tile step (amx_reference.h) over element e = 2 q + j: depth row v = chunk * vc + q = r * cp + c
// (zero past C) and kernel column 2 kp + j (zero past the kernel's width, for the weight and the
// pixel alike), pixel (oy + r - ph, ox + 2 kp + j - pw) (zero outside the image).
std::vector<BFloat16> channels_reference(const ConvCase& k, const std::vector<BFloat16>& x,
                                         const std::vector<BFloat16>& w, const std::vector<BFloat16>& b) {
  const ConvDims d = dims(k);
  const ConvChannelsDepth depth = conv_channels_depth(k.c, k.kh);
  const int64_t kps = (k.kw + 1) / 2;
  std::vector<BFloat16> y(k.n * k.o * d.ho * d.wo);
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t o = 0; o < k.o; ++o) {
      for (int64_t oy = 0; oy < d.ho; ++oy) {
        for (int64_t ox = 0; ox < d.wo; ++ox) {
          float sum = 0.0f;
          for (int64_t kp = 0; kp < kps; ++kp) {
            for (int64_t chunk = 0; chunk < depth.chunks; ++chunk) {
              auto tap = [&](int64_t e, bool weight) -> uint16_t {
                const int64_t v = chunk * depth.vc + e / 2, r = v / depth.cp, c = v % depth.cp, j = 2 * kp + e % 2;
                if (c >= k.c || j >= k.kw) return 0;
                if (weight) return w[((o * k.c + c) * k.kh + r) * k.kw + j].bits;
                const int64_t iy = oy + r - k.padding.h, ix = ox + j - k.padding.w;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) return 0;
                return x[((n * k.c + c) * k.h + iy) * k.w + ix].bits;
              };
              sum = amx_dot(
                  2 * depth.vc, [&](int64_t e) { return tap(e, false); }, [&](int64_t e) { return tap(e, true); },
                  sum);
            }
          }
          y[((n * k.o + o) * d.ho + oy) * d.wo + ox] =
              k.bias ? BFloat16(sum + static_cast<float>(b[o])) : BFloat16(sum);
        }
      }
    }
  }
  return y;
}

// Stride 1, dilation 1, one group: LeNet's layers (15 rows of depth in one step; 30 in two), odd
// and even kernel widths (1, 2, 3, 5, 8), padding, 45 rows of depth (three steps of 15), 17 (-> 18
// lines: two of 9), output channels over one tile (20, 33), output rows of 1 to 38 pixels (one to
// three 16-pixel groups, the last one partial), blocks of 4 units and a last of 1 to 3, a 1x1
// output, rectangular kernels and images.
const std::vector<ConvCase>& channel_cases() {
  static const std::vector<ConvCase> cases = {
      {2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},       // LeNet conv1
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true},      // LeNet conv2
      {2, 4, 7, 9, 5, 3, 3, 1, 1, 1, 1, true},         // 3x3, padding 1
      {1, 32, 6, 6, 20, 3, 3, 1, 1, 1, 1, true},       // 96 rows of depth, two output tiles
      {2, 9, 8, 7, 33, 5, 5, 1, {2, 1}, 1, 1, false},  // 45 rows: three steps, three output tiles
      {1, 5, 9, 12, 7, 2, 8, 1, {0, 3}, 1, 1, true},   // kernel width 8: four pairs, no odd column
      {2, 8, 5, 5, 4, 1, 1, 1, 0, 1, 1, true},         // 1x1: the odd layout only
      {2, 2, 5, 5, 3, 5, 5, 1, 0, 1, 1, true},         // kernel = input: 1x1 output
      {1, 2, 40, 40, 3, 3, 3, 1, 0, 1, 1, false},      // 38-pixel rows: three groups, the last partial
      {3, 1, 11, 6, 17, 4, 3, 1, {2, 1}, 1, 1, true},  // one channel, rectangular
      {1, 17, 6, 21, 2, 1, 4, 1, {0, 1}, 1, 1, true},  // 17 rows of depth -> 18 lines, two steps of 9
  };
  return cases;
}

std::vector<BFloat16> run_channels(const ConvCase& k, const std::vector<BFloat16>& x, const std::vector<BFloat16>& w,
                                   const std::vector<BFloat16>& b) {
  const ConvDims d = dims(k);
  std::vector<BFloat16> y(k.n * k.o * d.ho * d.wo, BFloat16(7.0f));  // stale values must go
  conv2d_forward_channels(geometry(k), x.data(), w.data(), k.bias ? b.data() : nullptr, y.data());
  return y;
}

// Runs `body` once on each copy of the product this CPU runs (the emulated one, and the hardware's
// where AMX is usable), that copy in use.
template <typename Body>
void on_every_copy(const std::string& what, const Body& body) {
  for (const ConvChannelsFns* fns : runnable_conv_channels_copies()) {
    SCOPED_TRACE(what + " on " + fns->isa);
    ScopedConvChannelsFns use(fns);
    body();
  }
}

TEST(ConvChannels, DepthStepsAreTheFewestThenTheFewestZeroLines) {
  auto expect = [](int64_t c, int64_t kh, int64_t cp, int64_t chunks, int64_t vc) {
    const ConvChannelsDepth d = conv_channels_depth(c, kh);
    EXPECT_EQ(d.cp, cp) << c << " x " << kh;
    EXPECT_EQ(d.chunks, chunks) << c << " x " << kh;
    EXPECT_EQ(d.vc, vc) << c << " x " << kh;
  };
  expect(3, 5, 3, 1, 15);  // LeNet conv1
  expect(6, 5, 6, 2, 15);  // LeNet conv2
  expect(8, 2, 8, 1, 16);
  expect(17, 1, 18, 2, 9);
  expect(9, 5, 9, 3, 15);
  expect(32, 3, 32, 6, 16);
}

TEST(ConvChannels, EqualsTheTilesOrderReferenceOnEveryCopy) {
  uint32_t seed = 1900;
  for (const ConvCase& k : channel_cases()) {
    ASSERT_TRUE(conv_channels_fit(geometry(k))) << name(k);
    const std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), seed++), w = random_bf16(numel(w_shape(k)), seed++);
    const std::vector<BFloat16> b = random_bf16(k.o, seed++);
    const std::vector<BFloat16> want = channels_reference(k, x, w, b);
    // The reference is the float64 convolution of the rounded operands, up to bfloat16 rounding.
    const std::vector<double> exact = naive_conv(k, cast<double>(x), cast<double>(w), cast<double>(b));
    std::string where;
    EXPECT_TRUE(close(cast<double>(want), exact, 3e-2, &where)) << name(k) << " " << where;
    on_every_copy(name(k), [&] {
      for (int threads : {1, 2}) {
        ScopedThreads t(threads);
        EXPECT_EQ(mismatches(run_channels(k, x, w, b), want, "y"), 0) << threads << " thread(s)";
      }
    });
  }
}

// An infinite input reaches exactly the outputs whose windows hold it: the last column of an odd
// kernel width is paired with zeros (the odd layout), not with the next pixel, so no zero weight
// multiplies an infinity (0 * inf = NaN). The infinite pixel sits one column right of some
// windows' ends, where the pair layout's partner would be it; and at an image border.
TEST(ConvChannels, AnInfiniteInputReachesOnlyTheWindowsThatHoldIt) {
  for (const ConvCase& k : {ConvCase{1, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, false},
                            ConvCase{1, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, false},
                            ConvCase{1, 2, 9, 20, 3, 3, 3, 1, 1, 1, 1, true}}) {
    const ConvDims d = dims(k);
    for (int64_t ix : {int64_t{7}, k.w - 1, int64_t{0}}) {
      std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), 41), w = random_bf16(numel(w_shape(k)), 42);
      const std::vector<BFloat16> b = random_bf16(k.o, 43);
      const int64_t iy = 6;
      for (int64_t c = 0; c < k.c; ++c) x[(c * k.h + iy) * k.w + ix] = BFloat16(std::numeric_limits<float>::infinity());
      on_every_copy(name(k) + ", column " + std::to_string(ix), [&] {
        const std::vector<BFloat16> y = run_channels(k, x, w, b);
        int64_t wrong = 0;
        for (int64_t e = 0; e < static_cast<int64_t>(y.size()); ++e) {
          const int64_t ox = e % d.wo, oy = e / d.wo % d.ho;
          const int64_t r = iy + k.padding.h - oy, j = ix + k.padding.w - ox;
          const bool in_window = r >= 0 && r < k.kh && j >= 0 && j < k.kw;
          if (std::isfinite(static_cast<float>(y[e])) == in_window && wrong++ < 3) {
            ADD_FAILURE() << "y[" << e << "] = " << static_cast<float>(y[e]) << (in_window ? ", want non-finite" : "");
          }
        }
        EXPECT_EQ(wrong, 0);
      });
    }
  }
}

// A float32 x is rounded as the layouts are built: bit for bit the bfloat16 call on x rounded first
// (BFloat16's rounding), on every case and copy, with values that round up, down and to even at a
// tie, a NaN (kept quiet), infinities, -0 and a denormal among them; the infinities and the NaN
// reach only the windows that hold them, as in the bfloat16 call.
TEST(ConvChannels, FloatInputIsTheBfloat16CallOnTheRoundedInput) {
  auto from_bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  };
  const float specials[] = {from_bits(0x3f808000u),  // a tie: rounds to even (down)
                            from_bits(0x3f818000u),  // a tie: rounds to even (up)
                            from_bits(0x3f808001u),  // just above a tie: up
                            from_bits(0x7fa00000u),  // a signalling NaN: quieted
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            -0.0f, from_bits(0x00000123u)};  // a denormal
  uint32_t seed = 2600;
  for (const ConvCase& k : channel_cases()) {
    std::vector<float> x = cast<float>(random_values(numel(x_shape(k)), seed++));
    // A few specials, away from most windows so that most outputs stay finite and compared by value.
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); ++i) x[(i * 7919) % x.size()] = specials[i];
    const std::vector<BFloat16> w = random_bf16(numel(w_shape(k)), seed++), b = random_bf16(k.o, seed++);
    std::vector<BFloat16> rounded;
    for (float v : x) rounded.push_back(BFloat16(v));
    on_every_copy(name(k), [&] {
      const std::vector<BFloat16> want = run_channels(k, rounded, w, b);
      std::vector<BFloat16> y(want.size(), BFloat16(7.0f));
      conv2d_forward_channels(geometry(k), x.data(), w.data(), k.bias ? b.data() : nullptr, y.data());
      EXPECT_EQ(mismatches(y, want, "y"), 0);
    });
  }
}

TEST(ConvChannels, RefusesWhatItDoesNotRun) {
  const ConvCase k{1, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true};
  for (auto change : {+[](ConvCase& c) { c.stride = {2, 1}; }, +[](ConvCase& c) { c.dilation = {1, 2}; },
                      +[](ConvCase& c) { c.groups = 2; }}) {
    ConvCase bad = k;
    change(bad);
    EXPECT_FALSE(conv_channels_fit(geometry(bad))) << name(bad);
  }
  std::vector<BFloat16> buf(numel(x_shape(k)) * 4);
  ScopedConvChannelsFns none(nullptr);
  EXPECT_EQ(active_conv_channels_fns(), nullptr);
  try {
    conv2d_forward_channels(geometry(k), buf.data(), buf.data(), buf.data(), buf.data());
    ADD_FAILURE() << "no copy of the product, yet it ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("AMX-BF16 active"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
