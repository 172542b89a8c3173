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
// a tile step (amx_reference.h) over element p = 2 q + j: depth row v = chunk * vc + q = r * cp + c
// (zero past C) and kernel column 2 kp + j (zero past the kernel's width, for the weight and the
// pixel alike), pixel (oy + r - ph, ox + 2 kp + j - pw) (zero outside the image).
std::vector<BFloat16> channels_reference(const ConvCase& k, const std::vector<BFloat16>& x,
                                         const std::vector<BFloat16>& w, const std::vector<BFloat16>& b) {
  const ConvDims d = dims(k);
  const ConvChannelsDepth depth = conv_channels_depth(k.c, k.kh);
  const int64_t kps = (k.kw + 1) / 2;
  std::vector<BFloat16> y(k.n * k.o * d.ho * d.wo);
  for (int64_t e = 0; e < static_cast<int64_t>(y.size()); ++e) {
    const int64_t ox = e % d.wo, oy = e / d.wo % d.ho, o = e / (d.wo * d.ho) % k.o, n = e / (d.wo * d.ho * k.o);
    float sum = 0.0f;
    for (int64_t kp = 0; kp < kps; ++kp) {
      for (int64_t chunk = 0; chunk < depth.chunks; ++chunk) {
        auto tap = [&](int64_t p, bool weight) -> uint16_t {
          const int64_t v = chunk * depth.vc + p / 2, r = v / depth.cp, c = v % depth.cp, j = 2 * kp + p % 2;
          if (c >= k.c || j >= k.kw) return 0;
          if (weight) return w[((o * k.c + c) * k.kh + r) * k.kw + j].bits;
          const int64_t iy = oy + r - k.padding.h, ix = ox + j - k.padding.w;
          if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) return 0;
          return x[((n * k.c + c) * k.h + iy) * k.w + ix].bits;
        };
        sum = amx_dot(
            2 * depth.vc, [&](int64_t p) { return tap(p, false); }, [&](int64_t p) { return tap(p, true); }, sum);
      }
    }
    y[e] = k.bias ? BFloat16(sum + static_cast<float>(b[o])) : BFloat16(sum);
  }
  return y;
}

// conv_reference.h's cases with stride 1, dilation 1 and one group (LeNet's layers: 15 rows of
// depth in one step, 30 in two; 3x3 with padding; 96 rows of depth and 20 output channels; a 1x1
// kernel: the odd layout only; a 1x1 output; 38-pixel rows: three 16-pixel groups, the last one
// partial), and: 45 rows of depth (three steps of 15) with 33 output channels (three tiles, the
// last of 1), kernel width 8 (four pairs, no odd column), one channel with a rectangular kernel
// and 17 output channels, 17 rows of depth (-> 18 lines: two steps of 9).
const std::vector<ConvCase>& channel_cases() {
  static const std::vector<ConvCase> cases = [] {
    std::vector<ConvCase> c;
    for (const ConvCase& k : conv_cases()) {
      const bool unit = k.stride.h == 1 && k.stride.w == 1 && k.dilation.h == 1 && k.dilation.w == 1;
      if (unit && k.groups == 1) c.push_back(k);
    }
    c.push_back({2, 9, 8, 7, 33, 5, 5, 1, {2, 1}, 1, 1, false});
    c.push_back({1, 5, 9, 12, 7, 2, 8, 1, {0, 3}, 1, 1, true});
    c.push_back({3, 1, 11, 6, 17, 4, 3, 1, {2, 1}, 1, 1, true});
    c.push_back({1, 17, 6, 21, 2, 1, 4, 1, {0, 1}, 1, 1, true});
    return c;
  }();
  return cases;
}

// y of conv2d_forward_channels, x bfloat16 or float32, written over stale values (7) that must go.
template <typename X>
std::vector<BFloat16> run_channels(const ConvCase& k, const std::vector<X>& x, const std::vector<BFloat16>& w,
                                   const std::vector<BFloat16>& b) {
  std::vector<BFloat16> y(k.n * k.o * dims(k).ho * dims(k).wo, BFloat16(7.0f));
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
  for (size_t i = 0; i < channel_cases().size(); ++i) {
    const ConvCase& k = channel_cases()[i];
    ASSERT_TRUE(conv_channels_fit(geometry(k))) << name(k);
    const uint32_t seed = 1900 + 3 * static_cast<uint32_t>(i);
    const std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), seed);
    const std::vector<BFloat16> w = random_bf16(numel(w_shape(k)), seed + 1), b = random_bf16(k.o, seed + 2);
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
    on_every_copy(name(k), [&] { EXPECT_EQ(mismatches(run_channels(k, x, w, b), run_channels(k, rounded, w, b), "y"), 0); });
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
