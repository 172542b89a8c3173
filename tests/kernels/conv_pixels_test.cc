// The bfloat16 forward and input gradient with the output pixels on the AMX tiles' rows
// (kernels/cpu/conv_pixels.h): bit for bit against a reference in the tiles' rounding order on every
// copy this CPU runs (the emulated one anywhere: the steps' offsets, the weights' tiles, the
// channels-last image and the edge rows; the hardware where AMX is usable), no step reading a
// neighbour pixel, Auto's choice and the refusals.
#include "kernels/cpu/conv_pixels.h"

#include <gtest/gtest.h>

#include <cmath>
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

// The steps conv_pixels.h describes: each kernel row's run of kw pixels x cp channels (C and zero
// channels up to cp) cut into `chunks` steps of `depth`, the fewest steps, then the fewest zero
// channels, with depth even and at most 32.
struct Steps {
  int64_t cp = 0, chunks = 0, depth = 0;
};
Steps steps_for(int64_t c, int64_t kw) {
  for (int64_t chunks = (kw * c + 31) / 32;; ++chunks)
    for (int64_t cp = c; cp < c + 2 * chunks; ++cp)
      if ((kw * cp) % (2 * chunks) == 0 && kw * cp / chunks <= 32) return {cp, chunks, kw * cp / chunks};
}

// y[n][o][oy][ox] = round(S + bias[o]), S the float32 sum of the steps in order, each a tile step
// (amx_reference.h) over element e of step (i, chunk): run position r = chunk * depth + e, the
// input channel r % cp (zero past C) of pixel (oy + i - ph, ox + r / cp - pw) (zero outside the
// image) times the weight of that channel and tap.
std::vector<BFloat16> pixels_reference(const ConvCase& k, const std::vector<BFloat16>& x,
                                       const std::vector<BFloat16>& w, const std::vector<BFloat16>& b) {
  const ConvDims d = dims(k);
  const Steps s = steps_for(k.c, k.kw);
  std::vector<BFloat16> y(k.n * k.o * d.ho * d.wo);
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t o = 0; o < k.o; ++o) {
      for (int64_t oy = 0; oy < d.ho; ++oy) {
        for (int64_t ox = 0; ox < d.wo; ++ox) {
          float sum = 0.0f;
          for (int64_t i = 0; i < k.kh; ++i) {
            for (int64_t chunk = 0; chunk < s.chunks; ++chunk) {
              auto tap = [&](int64_t e, bool weight) -> uint16_t {
                const int64_t r = chunk * s.depth + e, c = r % s.cp, j = r / s.cp;
                if (c >= k.c) return 0;
                if (weight) return w[((o * k.c + c) * k.kh + i) * k.kw + j].bits;
                const int64_t iy = oy + i - k.padding.h, ix = ox + j - k.padding.w;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) return 0;
                return x[((n * k.c + c) * k.h + iy) * k.w + ix].bits;
              };
              sum = amx_dot(
                  s.depth, [&](int64_t e) { return tap(e, false); }, [&](int64_t e) { return tap(e, true); }, sum);
            }
          }
          y[((n * k.o + o) * d.ho + oy) * d.wo + ox] = BFloat16(sum + (k.bias ? static_cast<float>(b[o]) : 0.0f));
        }
      }
    }
  }
  return y;
}

// Stride 1, dilation 1, one group: LeNet's layers, padding, runs of one step (20 and 30 deep with
// 3 -> 4 and 6 channels), of several (96: three of 32; 45: 9 -> 12 channels, two of 30; 40: two of
// 20), output channels over one tile (20, 33), a 1x1 kernel, a 1x1 output, rectangular kernels and
// images, 1,520 grid positions (95 row tiles: blocks of 4 and a last of 3).
const std::vector<ConvCase>& pixel_cases() {
  static const std::vector<ConvCase> cases = {
      {2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},    // LeNet conv1
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true},   // LeNet conv2
      {2, 4, 7, 9, 5, 3, 3, 1, 1, 1, 1, true},      // 3x3, padding 1
      {1, 32, 6, 6, 20, 3, 3, 1, 1, 1, 1, true},    // three steps per kernel row, two output tiles
      {2, 9, 8, 7, 33, 5, 5, 1, {2, 1}, 1, 1, false},  // 9 -> 12 channels, three output tiles
      {1, 5, 9, 12, 7, 2, 8, 1, {0, 3}, 1, 1, true},   // kernel width 8: two steps of 20
      {2, 8, 5, 5, 4, 1, 1, 1, 0, 1, 1, true},      // 1x1
      {2, 2, 5, 5, 3, 5, 5, 1, 0, 1, 1, true},      // kernel = input: 1x1 output
      {1, 2, 40, 40, 3, 3, 3, 1, 0, 1, 1, false},   // 1,520 grid positions
      {3, 1, 11, 6, 17, 4, 3, 1, {2, 1}, 1, 1, true},  // one channel (-> 2), rectangular
  };
  return cases;
}

std::vector<BFloat16> run_pixels(const ConvCase& k, const std::vector<BFloat16>& x, const std::vector<BFloat16>& w,
                                 const std::vector<BFloat16>& b) {
  const ConvDims d = dims(k);
  std::vector<BFloat16> y(k.n * k.o * d.ho * d.wo, BFloat16(7.0f));  // stale values must go
  conv2d_forward_pixels(geometry(k), x.data(), w.data(), k.bias ? b.data() : nullptr, y.data());
  return y;
}

TEST(ConvPixels, EqualsTheTilesOrderReferenceOnEveryCopy) {
  uint32_t seed = 900;
  for (const ConvCase& k : pixel_cases()) {
    ASSERT_TRUE(conv_pixels_fit(geometry(k))) << name(k);
    const std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), seed++), w = random_bf16(numel(w_shape(k)), seed++);
    const std::vector<BFloat16> b = random_bf16(k.o, seed++);
    const std::vector<BFloat16> want = pixels_reference(k, x, w, b);
    // The reference is the convolution, up to bfloat16 rounding.
    std::string where;
    EXPECT_TRUE(close(cast<double>(want), naive_conv(k, cast<double>(x), cast<double>(w), cast<double>(b)), 3e-2,
                      &where))
        << name(k) << " " << where;
    for (const ConvPixelsFns* fns : runnable_conv_pixels_copies()) {
      SCOPED_TRACE(name(k) + " " + fns->isa);
      ScopedConvPixelsFns use(fns);
      for (int threads : {1, 2}) {
        ScopedThreads t(threads);
        EXPECT_EQ(mismatches(run_pixels(k, x, w, b), want, "y"), 0) << threads << " thread(s)";
      }
    }
  }
}

// The input gradient as the transposed convolution on the same product: bit for bit the reference
// above applied to grad_y padded by kernel - 1 - padding with the weights flipped and their channel
// axes swapped (built here from the definition), and close to the naive backward.
TEST(ConvPixels, InputGradientIsTheTransposedConvolution) {
  uint32_t seed = 1200;
  for (const ConvCase& k : pixel_cases()) {
    if (!conv_pixels_input_fit(geometry(k))) {
      EXPECT_TRUE(k.padding.h > k.kh - 1 || k.padding.w > k.kw - 1) << name(k);
      continue;
    }
    const ConvDims d = dims(k);
    const std::vector<BFloat16> w = random_bf16(numel(w_shape(k)), seed++);
    const std::vector<BFloat16> gy = random_bf16(k.n * k.o * d.ho * d.wo, seed++);
    ConvCase t{k.n, k.o, d.ho, d.wo, k.c, k.kh, k.kw, 1, {k.kh - 1 - k.padding.h, k.kw - 1 - k.padding.w}, 1, 1, false};
    std::vector<BFloat16> flipped(w.size());
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t c = 0; c < k.c; ++c)
        for (int64_t i = 0; i < k.kh; ++i)
          for (int64_t j = 0; j < k.kw; ++j)
            flipped[((c * k.o + o) * k.kh + i) * k.kw + j] = w[((o * k.c + c) * k.kh + k.kh - 1 - i) * k.kw + k.kw - 1 - j];
    const std::vector<BFloat16> want = pixels_reference(t, gy, flipped, {});
    const NaiveGrads naive = naive_conv_backward(k, cast<double>(gy), std::vector<double>(numel(x_shape(k))), cast<double>(w));
    std::string where;
    EXPECT_TRUE(close(cast<double>(want), naive.gx, 3e-2, &where)) << name(k) << " " << where;
    for (const ConvPixelsFns* fns : runnable_conv_pixels_copies()) {
      SCOPED_TRACE(name(k) + " " + fns->isa);
      ScopedConvPixelsFns use(fns);
      std::vector<BFloat16> gx(numel(x_shape(k)), BFloat16(7.0f));
      conv2d_backward_input_pixels(geometry(k), gy.data(), w.data(), gx.data());
      EXPECT_EQ(mismatches(gx, want, "grad_x"), 0);
    }
  }
}

// An infinite input reaches exactly the outputs whose windows hold it: a step's depth ends at its
// run, so no tile multiplies a neighbour pixel's channels by zero weights (0 * inf = NaN). Six
// channels (LeNet's conv2): the run is 30 deep, and a 32-deep step would read the next pixel's
// first two channels.
TEST(ConvPixels, AnInfiniteInputReachesOnlyTheWindowsThatHoldIt) {
  const ConvCase k{1, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, false};
  const ConvDims d = dims(k);
  std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), 41), w = random_bf16(numel(w_shape(k)), 42);
  const int64_t iy = 6, ix = 7;
  for (int64_t c = 0; c < k.c; ++c) x[(c * k.h + iy) * k.w + ix] = BFloat16(std::numeric_limits<float>::infinity());
  for (const ConvPixelsFns* fns : runnable_conv_pixels_copies()) {
    SCOPED_TRACE(fns->isa);
    ScopedConvPixelsFns use(fns);
    const std::vector<BFloat16> y = run_pixels(k, x, w, {});
    int64_t wrong = 0;
    for (int64_t o = 0; o < k.o; ++o) {
      for (int64_t oy = 0; oy < d.ho; ++oy) {
        for (int64_t ox = 0; ox < d.wo; ++ox) {
          const bool holds = iy - oy >= 0 && iy - oy < k.kh && ix - ox >= 0 && ix - ox < k.kw;
          const float v = static_cast<float>(y[(o * d.ho + oy) * d.wo + ox]);
          if (std::isfinite(v) == holds && wrong++ < 3) {
            ADD_FAILURE() << "o " << o << " (" << oy << ", " << ox << ") = " << v << (holds ? ", want non-finite" : "");
          }
        }
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

// Auto takes the pixel-major product for a bfloat16 forward with 6 or more output channels, and
// for an input gradient with 16 or more, where it runs (here the emulated copies stand for AMX), and
// keeps the other paths below and where it does not run; ConvAlgorithm::AmxPixels forces both.
TEST(ConvPixels, AutosChoiceAndTheForcedAlgorithm) {
  ScopedAmxGemmFns amx(&amx_emulated::amx_gemm_fns());
  ScopedConvPixelsFns use(&conv_pixels_emulated::conv_pixels_fns());
  const ConvCase conv2{2, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true}, conv1{1, 3, 12, 12, 6, 5, 5, 1, 0, 1, 1, true};
  const ConvCase narrow{1, 3, 12, 12, 5, 5, 5, 1, 0, 1, 1, true};
  EXPECT_TRUE(conv2d_bf16_pixels(geometry(conv2)));
  EXPECT_TRUE(conv2d_bf16_pixels(geometry(conv1)));
  EXPECT_FALSE(conv2d_bf16_pixels(geometry(narrow)));
  ConvCase strided = conv2;
  strided.stride = {2, 2};
  EXPECT_FALSE(conv2d_bf16_pixels(geometry(strided)));
  const std::vector<BFloat16> x = random_bf16(numel(x_shape(conv2)), 51), w = random_bf16(numel(w_shape(conv2)), 52);
  const std::vector<BFloat16> b = random_bf16(conv2.o, 53);
  const std::vector<BFloat16> want = pixels_reference(conv2, x, w, b);
  EXPECT_TRUE(conv2d_bf16_pixels_input(geometry(conv2)));
  EXPECT_FALSE(conv2d_bf16_pixels_input(geometry(conv1)));
  const ConvDims d = dims(conv2);
  const std::vector<BFloat16> gy = random_bf16(conv2.n * conv2.o * d.ho * d.wo, 54);
  std::vector<BFloat16> want_gx(x.size());
  conv2d_backward_input_pixels(geometry(conv2), gy.data(), w.data(), want_gx.data());
  for (ConvAlgorithm algo : {ConvAlgorithm::Auto, ConvAlgorithm::AmxPixels}) {
    const char* what = algo == ConvAlgorithm::Auto ? "Auto" : "AmxPixels";
    std::vector<BFloat16> y(want.size()), gx(x.size());
    conv2d_forward(DType::BFloat16, geometry(conv2), x.data(), w.data(), b.data(), y.data(), algo);
    EXPECT_EQ(mismatches(y, want, what), 0);
    conv2d_backward(DType::BFloat16, geometry(conv2), gy.data(), x.data(), w.data(), gx.data(), nullptr, nullptr, algo);
    EXPECT_EQ(mismatches(gx, want_gx, what), 0);
  }
  {
    ScopedConvPixelsFns none(nullptr);
    EXPECT_EQ(active_conv_pixels_fns(), nullptr);
    EXPECT_FALSE(conv2d_bf16_pixels(geometry(conv2)));
  }
  EXPECT_EQ(active_conv_pixels_fns(), &conv_pixels_emulated::conv_pixels_fns());
}

TEST(ConvPixels, RefusesWhatItDoesNotRun) {
  const ConvCase k{1, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true};
  std::vector<float> buf(numel(x_shape(k)) * 4);
  void* p = buf.data();
  EXPECT_THROW(conv2d_forward(DType::Float32, geometry(k), p, p, p, p, ConvAlgorithm::AmxPixels),
               std::invalid_argument);
  ScopedAmxGemmFns amx(&amx_emulated::amx_gemm_fns());
  for (auto change : {+[](ConvCase& c) { c.stride = {2, 1}; }, +[](ConvCase& c) { c.dilation = {1, 2}; },
                      +[](ConvCase& c) { c.groups = 2; }, +[](ConvCase& c) { c.kw = 9; }}) {
    ConvCase bad = k;
    change(bad);
    EXPECT_FALSE(conv_pixels_fit(geometry(bad))) << name(bad);
  }
  ConvCase padded = k;
  padded.padding = {5, 0};
  EXPECT_TRUE(conv_pixels_fit(geometry(padded)));
  EXPECT_FALSE(conv_pixels_input_fit(geometry(padded)));
  ScopedConvPixelsFns none(nullptr);
  try {
    conv2d_forward(DType::BFloat16, geometry(k), p, p, p, p, ConvAlgorithm::AmxPixels);
    ADD_FAILURE() << "no copy of the product, yet it ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("AMX-BF16 active"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
