// The CPU convolution kernels (kernels/cpu/conv.cc) called on raw buffers: both algorithms against
// the naive loops of conv_reference.h with every ISA's register tiles, the bfloat16 refusals,
// bfloat16 on AMX tiles against a reference in the tiles' rounding order, and one and two threads.
// The front function (raw::conv2d): tests/ops/conv_ops_test.cc.
#include "kernels/cpu/conv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/small_gemm.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "tests/kernels/amx_reference.h"
#include "tests/kernels/conv_reference.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/test_util.h"

namespace colony::kernels::cpu {
namespace {

using namespace colony::testing;  // NOLINT(build/namespaces): the references and helpers of the kernel tests

// Both CPU algorithms, called directly, against the naive loops in float64 and float32.
template <typename T>
void expect_both_algorithms_match_naive(const ConvCase& k, const std::vector<double>& x, const std::vector<double>& w,
                                        const std::vector<double>& b, const std::vector<double>& gy) {
  const DType dt = sizeof(T) == 8 ? DType::Float64 : DType::Float32;
  const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
  const Conv2dGeometry g = geometry(k);
  const ConvDims d = dims(k);
  std::vector<double> ref = naive_conv(k, x, w, b);
  NaiveGrads ref_g = naive_conv_backward(k, gy, x, w);
  std::vector<T> xt = cast<T>(x), wt = cast<T>(w), bt = cast<T>(b), gyt = cast<T>(gy);
  for (auto algo : algorithms_for(k)) {
    SCOPED_TRACE(name(k) + " " + algo_name(algo) + " " + dtype_name(dt));
    std::vector<T> y(k.n * k.o * d.ho * d.wo);
    conv2d_forward(dt, g, xt.data(), wt.data(), k.bias ? bt.data() : nullptr, y.data(), algo);
    std::string where;
    EXPECT_TRUE(close(cast<double>(y), ref, tol, &where)) << "forward " << where;
    // Stale values in the gradients must be overwritten.
    std::vector<T> gx(xt.size(), T(7)), gw(wt.size(), T(7)), gb(k.o, T(7));
    conv2d_backward(dt, g, gyt.data(), xt.data(), wt.data(), gx.data(), gw.data(), gb.data(), algo);
    EXPECT_TRUE(close(cast<double>(gx), ref_g.gx, tol, &where)) << "grad_input " << where;
    EXPECT_TRUE(close(cast<double>(gw), ref_g.gw, tol * 10, &where)) << "grad_weight " << where;
    EXPECT_TRUE(close(cast<double>(gb), ref_g.gb, tol * 10, &where)) << "grad_bias " << where;
  }
}

void expect_both_algorithms_match_naive() {
  uint32_t seed = 1;
  for (const ConvCase& k : conv_cases()) {
    ConvDims d = dims(k);
    std::vector<double> x = random_values(numel(x_shape(k)), seed++);
    std::vector<double> w = random_values(numel(w_shape(k)), seed++);
    std::vector<double> b = random_values(k.o, seed++);
    std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, seed++);
    expect_both_algorithms_match_naive<double>(k, x, w, b, gy);
    expect_both_algorithms_match_naive<float>(k, x, w, b, gy);
  }
}

// Every copy of the direct algorithm's register tiles (kernels/cpu/small_gemm_isa.h): AVX2, the
// AVX-512 tiles built for this CPU's baseline ISA (their logic, on any machine), and the real
// AVX-512 build where the CPU has it.
TEST(Conv2dKernels, BothAlgorithmsMatchNaiveWithEveryIsasTiles) {
  struct Tables {
    const SmallGemmFns<float>& f32;
    const SmallGemmFns<double>& f64;
  };
  std::vector<Tables> tables = {{avx2::small_gemm_fns<float>(), avx2::small_gemm_fns<double>()},
                                {avx512_emulated::small_gemm_fns<float>(), avx512_emulated::small_gemm_fns<double>()}};
  if (detected_cpu_isa() >= CpuIsa::Avx512) {
    tables.push_back({avx512::small_gemm_fns<float>(), avx512::small_gemm_fns<double>()});
  }
  // Without an override the convolutions run the tiles of the ISA users are told of (whose
  // bfloat16 and AMX levels only add small_gemm_bf16.h and amx_gemm.h).
  EXPECT_STREQ(active_small_gemm_fns<float>().isa, active_cpu_isa() >= CpuIsa::Avx512 ? "avx512" : "avx2")
      << cpu_isa_name(active_cpu_isa());
  for (const Tables& t : tables) {
    SCOPED_TRACE(t.f32.isa);
    ScopedSmallGemmFns use(t.f32, t.f64);
    ASSERT_EQ(dot_lanes<float>(), t.f32.dot_lanes);
    expect_both_algorithms_match_naive();
  }
}

TEST(Conv2dKernels, Bfloat16IsRefusedWhereItDoesNotRunNatively) {
  const ConvCase lenet{2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true};
  const ConvCase strided{2, 3, 11, 10, 4, 4, 3, 3, 2, 1, 1, true};
  std::vector<BFloat16> buf(64 * 1024);
  void* p = buf.data();
  {
    ScopedSmallGemmBf16Fns none(nullptr);
    ScopedAmxGemmFns no_amx(nullptr);
    EXPECT_TRUE(throws_with<std::invalid_argument>(
        [&] { conv2d_forward(DType::BFloat16, geometry(lenet), p, p, p, p); }, "AVX512_BF16 or AMX"));
    // Each kind of tiles asked for by name where only the other is there.
    ScopedAmxGemmFns amx(&amx_emulated::amx_gemm_fns());
    EXPECT_TRUE(throws_with<std::invalid_argument>(
        [&] { conv2d_forward(DType::BFloat16, geometry(lenet), p, p, p, p, ConvAlgorithm::Direct); }, "AVX512_BF16"));
  }
  {
    ScopedSmallGemmBf16Fns use(&bf16_emulated::small_gemm_bf16_fns());
    ScopedAmxGemmFns no_amx(nullptr);
    EXPECT_TRUE(throws_with<std::invalid_argument>(
        [&] { conv2d_forward(DType::BFloat16, geometry(lenet), p, p, p, p, ConvAlgorithm::Amx); }, "AMX-BF16"));
    EXPECT_TRUE(throws_with<std::invalid_argument>(
        [&] { conv2d_backward(DType::Float32, geometry(lenet), p, p, p, p, p, p, ConvAlgorithm::Amx); },
        "takes bfloat16"));
  }
  ScopedSmallGemmBf16Fns use(&bf16_emulated::small_gemm_bf16_fns());
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { conv2d_backward(DType::BFloat16, geometry(strided), p, p, p, p, p, p); }, "stride 1"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { conv2d_forward(DType::BFloat16, geometry(lenet), p, p, p, p, ConvAlgorithm::Im2col); }, "stride 1"));
}

// ---------- bfloat16 on AMX tiles ----------

uint16_t bits_of(BFloat16 v) { return v.bits; }

struct Bf16Outputs {
  std::vector<BFloat16> y, gx, gw, gb;
};

// What conv.cc's AMX products compute, from their definition there, one output at a time: the
// implicit im2col over the padded image's pitched grid (output (y, x) at grid position y * Wp + x,
// row r = (c, i, j) of the patch at window r = c * Hp * Wp + i * dh * Wp + j * dw), each product
// summed in the tiles' order (amx_reference.h); the forward's bias added to the float32 sum; the
// weight gradient continued from one image's sum to the next; the input gradient's rows added to
// a float32 padded image kernel position-major (all channels of (i, j), then the next (i, j)); each
// output rounded once.
Bf16Outputs amx_reference(const ConvCase& k, const std::vector<BFloat16>& x, const std::vector<BFloat16>& w,
                          const std::vector<BFloat16>& b, const std::vector<BFloat16>& gy) {
  const ConvDims d = dims(k);
  const int64_t hp = k.h + 2 * k.padding.h, wp = k.w + 2 * k.padding.w, plane = hp * wp;
  const int64_t K = d.cg * k.kh * k.kw, nq = (d.ho - 1) * wp + d.wo, pitch = d.ho * wp;
  std::vector<int64_t> window;
  for (int64_t c = 0; c < d.cg; ++c)
    for (int64_t i = 0; i < k.kh; ++i)
      for (int64_t j = 0; j < k.kw; ++j) window.push_back(c * plane + i * k.dilation.h * wp + j * k.dilation.w);
  // Padded images and grad_y grids (zeros in the padding and the grid's extra columns).
  std::vector<uint16_t> xp(k.n * k.c * plane, 0), gyg(k.n * k.o * pitch, 0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t y = 0; y < k.h; ++y)
        for (int64_t xx = 0; xx < k.w; ++xx)
          xp[(n * k.c + c) * plane + (y + k.padding.h) * wp + xx + k.padding.w] =
              bits_of(x[((n * k.c + c) * k.h + y) * k.w + xx]);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t y = 0; y < d.ho; ++y)
        for (int64_t xx = 0; xx < d.wo; ++xx)
          gyg[(n * k.o + o) * pitch + y * wp + xx] = bits_of(gy[((n * k.o + o) * d.ho + y) * d.wo + xx]);
  Bf16Outputs r{std::vector<BFloat16>(gy.size()), std::vector<BFloat16>(x.size()), std::vector<BFloat16>(w.size()),
                std::vector<BFloat16>(k.o)};
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t o = 0; o < k.o; ++o) {
      const int64_t grp = o / d.og;
      const uint16_t* image = xp.data() + (n * k.c + grp * d.cg) * plane;
      for (int64_t y = 0; y < d.ho; ++y) {
        for (int64_t xx = 0; xx < d.wo; ++xx) {
          const float sum = testing::amx_dot(
              K, [&](int64_t p) { return bits_of(w[o * K + p]); },
              [&](int64_t p) { return image[window[p] + y * wp + xx]; }, 0.0f);
          r.y[((n * k.o + o) * d.ho + y) * d.wo + xx] = BFloat16(sum + (k.bias ? static_cast<float>(b[o]) : 0.0f));
        }
      }
    }
  }
  for (int64_t o = 0; o < k.o; ++o) {
    const int64_t grp = o / d.og;
    for (int64_t p = 0; p < K; ++p) {
      float sum = 0.0f;
      for (int64_t n = 0; n < k.n; ++n) {
        const uint16_t* image = xp.data() + (n * k.c + grp * d.cg) * plane;
        const uint16_t* grid = gyg.data() + (n * k.o + o) * pitch;
        sum = testing::amx_dot(
            nq, [&](int64_t q) { return grid[q]; }, [&](int64_t q) { return image[window[p] + q]; }, sum);
      }
      r.gw[o * K + p] = BFloat16(sum);
    }
    float gb = 0.0f;
    for (int64_t n = 0; n < k.n; ++n) {
      float s = 0.0f;
      for (int64_t e = 0; e < d.ho * d.wo; ++e) s += static_cast<float>(gy[(n * k.o + o) * d.ho * d.wo + e]);
      gb += s;
    }
    r.gb[o] = BFloat16(gb);
  }
  for (int64_t n = 0; n < k.n; ++n) {
    std::vector<float> gx(k.c * plane, 0.0f);
    for (int64_t grp = 0; grp < k.groups; ++grp) {
      for (int64_t ij = 0; ij < k.kh * k.kw; ++ij) {
        for (int64_t c = 0; c < d.cg; ++c) {
          const int64_t p = c * k.kh * k.kw + ij;
          for (int64_t q = 0; q < nq; ++q) {
            const float v = testing::amx_dot(
                d.og, [&](int64_t o) { return bits_of(w[(grp * d.og + o) * K + p]); },
                [&](int64_t o) { return gyg[(n * k.o + grp * d.og + o) * pitch + q]; }, 0.0f);
            gx[grp * d.cg * plane + window[p] + q] += v;
          }
        }
      }
    }
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t y = 0; y < k.h; ++y)
        for (int64_t xx = 0; xx < k.w; ++xx)
          r.gx[((n * k.c + c) * k.h + y) * k.w + xx] =
              BFloat16(gx[c * plane + (y + k.padding.h) * wp + xx + k.padding.w]);
  }
  return r;
}

Bf16Outputs run_bf16(const ConvCase& k, const std::vector<BFloat16>& x, const std::vector<BFloat16>& w,
                     const std::vector<BFloat16>& b, const std::vector<BFloat16>& gy, ConvAlgorithm algo) {
  const Conv2dGeometry g = geometry(k);
  // Stale values in the outputs must be overwritten.
  Bf16Outputs r{std::vector<BFloat16>(gy.size(), BFloat16(7.0f)), std::vector<BFloat16>(x.size(), BFloat16(7.0f)),
                std::vector<BFloat16>(w.size(), BFloat16(7.0f)), std::vector<BFloat16>(k.o, BFloat16(7.0f))};
  conv2d_forward(DType::BFloat16, g, x.data(), w.data(), k.bias ? b.data() : nullptr, r.y.data(), algo);
  conv2d_backward(DType::BFloat16, g, gy.data(), x.data(), w.data(), r.gx.data(), r.gw.data(), r.gb.data(), algo);
  return r;
}

// A case's bfloat16 input, weights, bias and output gradient, from seeds seed to seed + 3.
struct Bf16Operands {
  std::vector<BFloat16> x, w, b, gy;
};
Bf16Operands random_bf16_operands(const ConvCase& k, uint32_t seed) {
  const ConvDims d = dims(k);
  return {random_bf16(numel(x_shape(k)), seed), random_bf16(numel(w_shape(k)), seed + 1), random_bf16(k.o, seed + 2),
          random_bf16(k.n * k.o * d.ho * d.wo, seed + 3)};
}


// Forward, input, weight and bias gradients on the AMX tiles equal the reference bit for bit, for
// every stride-1 case of conv_cases() (padding, dilation, groups, depthwise, 1x1, 288 patch rows:
// nine depth steps, 1520 grid positions: three depth blocks of the weight gradient), on every AMX
// copy this CPU runs: the emulated one anywhere (the packing, blocking and edge tiles), the
// hardware where AMX is usable. One thread, so that the weight gradient has one part.
TEST(Conv2dKernels, Bfloat16OnAmxTilesEqualsTheTilesOrderReference) {
  ScopedThreads one(1);
  uint32_t seed = 300;
  for (const ConvCase& k : conv_cases()) {
    if (k.stride.h != 1 || k.stride.w != 1) continue;
    const ConvDims d = dims(k);
    const std::vector<BFloat16> x = random_bf16(numel(x_shape(k)), seed++), w = random_bf16(numel(w_shape(k)), seed++);
    const std::vector<BFloat16> b = random_bf16(k.o, seed++), gy = random_bf16(k.n * k.o * d.ho * d.wo, seed++);
    const Bf16Outputs want = amx_reference(k, x, w, b, gy);
    // The reference is the convolution, up to bfloat16 rounding.
    std::string where;
    EXPECT_TRUE(close(cast<double>(want.y), naive_conv(k, cast<double>(x), cast<double>(w), cast<double>(b)), 3e-2,
                      &where))
        << name(k) << " " << where;
    for (const AmxGemmFns* fns : runnable_amx_copies()) {
      SCOPED_TRACE(name(k) + " " + fns->isa);
      ScopedAmxGemmFns use(fns);
      const Bf16Outputs got = run_bf16(k, x, w, b, gy, ConvAlgorithm::Amx);
      EXPECT_EQ(mismatches(got.y, want.y, "y"), 0);
      EXPECT_EQ(mismatches(got.gx, want.gx, "grad_x"), 0);
      EXPECT_EQ(mismatches(got.gw, want.gw, "grad_w"), 0);
      EXPECT_EQ(mismatches(got.gb, want.gb, "grad_b"), 0);
    }
  }
}

// Two threads split the images: the forward and the input gradient are the same bit for bit, the
// weight gradient sums two parts (equal up to that float32 addition). Auto picks the AMX tiles for
// every pass where they are the only bfloat16 tiles (no AVX512_BF16), and never where AMX is off.
TEST(Conv2dKernels, Bfloat16OnAmxTilesWithTwoThreadsAndAutosChoice) {
  const ConvCase k{3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true};  // LeNet conv2
  const Conv2dGeometry g = geometry(k);
  const auto [x, w, b, gy] = random_bf16_operands(k, 71);
  ScopedAmxGemmFns use(&amx_emulated::amx_gemm_fns());
  Bf16Outputs one, two;
  {
    ScopedThreads t(1);
    one = run_bf16(k, x, w, b, gy, ConvAlgorithm::Amx);
  }
  {
    ScopedThreads t(2);
    two = run_bf16(k, x, w, b, gy, ConvAlgorithm::Amx);
  }
  EXPECT_EQ(mismatches(two.y, one.y, "y"), 0);
  EXPECT_EQ(mismatches(two.gx, one.gx, "grad_x"), 0);
  std::string where;
  EXPECT_TRUE(close(cast<double>(two.gw), cast<double>(one.gw), 2e-2, &where)) << where;
  EXPECT_TRUE(close(cast<double>(two.gb), cast<double>(one.gb), 2e-2, &where)) << where;
  {
    ScopedSmallGemmBf16Fns none(nullptr);
    for (ConvPass pass : {ConvPass::Forward, ConvPass::BackwardInput, ConvPass::BackwardWeight}) {
      EXPECT_TRUE(conv2d_bf16_on_amx(g, pass));
    }
    ScopedThreads t(1);
    const Bf16Outputs automatic = run_bf16(k, x, w, b, gy, ConvAlgorithm::Auto);
    EXPECT_EQ(mismatches(automatic.y, one.y, "y"), 0);
    EXPECT_EQ(mismatches(automatic.gw, one.gw, "grad_w"), 0);
  }
  ScopedAmxGemmFns no_amx(nullptr);
  for (ConvPass pass : {ConvPass::Forward, ConvPass::BackwardInput, ConvPass::BackwardWeight}) {
    EXPECT_FALSE(conv2d_bf16_on_amx(g, pass));
  }
}

// With both tile sets (an AMX CPU), Auto computes an input gradient that conv2d_bf16_on_amx leaves
// off AMX (LeNet conv2: 16 output channels) from grad_y and w widened to float32, on the float32
// direct tiles, rounded once (conv.cc, backward_widened): bit for bit the float32 kernel's
// input gradient rounded (widening, the weights' layout, the rounding). The emulated AVX512_BF16
// tiles sum in the float32 tiles' order, so forcing Direct gives these values too; the hardware's
// pairwise vdpbf16ps may round differently, hence only close. The forward and the weight gradient
// stay on AMX either way.
TEST(Conv2dKernels, Bfloat16InputGradientOffAmxIsTheFloat32OneRoundedWithBothTileSets) {
  const ConvCase k{3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true};  // LeNet conv2
  const Conv2dGeometry g = geometry(k);
  const auto [x, w, b, gy] = random_bf16_operands(k, 81);
  std::vector<float> gy32, w32, gx32(x.size());
  for (BFloat16 v : gy) gy32.push_back(static_cast<float>(v));
  for (BFloat16 v : w) w32.push_back(static_cast<float>(v));
  conv2d_backward(DType::Float32, g, gy32.data(), nullptr, w32.data(), gx32.data(), nullptr, nullptr,
                  ConvAlgorithm::Direct);
  std::vector<BFloat16> want;
  for (float v : gx32) want.push_back(BFloat16(v));
  ScopedAmxGemmFns amx(&amx_emulated::amx_gemm_fns());
  ScopedSmallGemmBf16Fns tiles(&bf16_emulated::small_gemm_bf16_fns());
  EXPECT_FALSE(conv2d_bf16_on_amx(g, ConvPass::BackwardInput));
  EXPECT_TRUE(conv2d_bf16_on_amx(g, ConvPass::BackwardWeight));
  const Bf16Outputs automatic = run_bf16(k, x, w, b, gy, ConvAlgorithm::Auto);
  EXPECT_EQ(mismatches(automatic.gx, want, "grad_x"), 0);
  const Bf16Outputs amx_only = run_bf16(k, x, w, b, gy, ConvAlgorithm::Amx);
  EXPECT_EQ(mismatches(automatic.y, amx_only.y, "y"), 0);
  EXPECT_EQ(mismatches(automatic.gw, amx_only.gw, "grad_w"), 0);
  const Bf16Outputs direct = run_bf16(k, x, w, b, gy, ConvAlgorithm::Direct);
  std::string where;
  EXPECT_TRUE(close(cast<double>(direct.gx), cast<double>(want), 2e-2, &where)) << where;
}

// Likewise a weight gradient that no AMX path takes (LeNet conv1: 6 output channels), with its bias
// gradient: the float32 kernel's, from widened grad_y and x, rounded once (conv.cc,
// backward_widened); one thread, so that the float32 sums have one order.
TEST(Conv2dKernels, Bfloat16WeightGradientOffAmxIsTheFloat32OneRoundedWithBothTileSets) {
  ScopedThreads one(1);
  const ConvCase k{2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true};  // LeNet conv1
  const Conv2dGeometry g = geometry(k);
  const auto [x, w, b, gy] = random_bf16_operands(k, 91);
  std::vector<float> gy32, x32, gw32(w.size()), gb32(k.o);
  for (BFloat16 v : gy) gy32.push_back(static_cast<float>(v));
  for (BFloat16 v : x) x32.push_back(static_cast<float>(v));
  conv2d_backward(DType::Float32, g, gy32.data(), x32.data(), nullptr, nullptr, gw32.data(), gb32.data(),
                  ConvAlgorithm::Direct);
  std::vector<BFloat16> want_w, want_b;
  for (float v : gw32) want_w.push_back(BFloat16(v));
  for (float v : gb32) want_b.push_back(BFloat16(v));
  ScopedAmxGemmFns amx(&amx_emulated::amx_gemm_fns());
  ScopedSmallGemmBf16Fns tiles(&bf16_emulated::small_gemm_bf16_fns());
  EXPECT_FALSE(conv2d_bf16_on_amx(g, ConvPass::BackwardWeight));
  std::vector<BFloat16> gw(w.size()), gb(k.o);
  conv2d_backward(DType::BFloat16, g, gy.data(), x.data(), w.data(), nullptr, gw.data(), gb.data());
  EXPECT_EQ(mismatches(gw, want_w, "grad_w"), 0);
  EXPECT_EQ(mismatches(gb, want_b, "grad_b"), 0);
}

// And a forward with fewer than 16 output channels (LeNet conv1; conv.cc, forward_widened): the
// float32 kernel's output on widened x, w and bias, rounded once, bit for bit. The shapes cover
// padding, dilation, groups, no bias, and rows of 4 outputs (rounded 8 at a time, spilling into the
// next rows) in planes of one row.
TEST(Conv2dKernels, Bfloat16ForwardWithFewOutputChannelsIsTheFloat32OneRoundedWithBothTileSets) {
  const ConvCase cases[] = {{2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},  // LeNet conv1
                            {3, 4, 7, 9, 6, 3, 3, 1, {1, 2}, {2, 1}, 2, true},
                            {2, 2, 3, 6, 5, 3, 3, 1, 0, 1, 1, false}};
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(name(k));
    const Conv2dGeometry g = geometry(k);
    const auto [x, w, b, gy] = random_bf16_operands(k, 101);
    std::vector<float> x32, w32, b32, y32(g.batch * g.out_channels * g.out_h * g.out_w);
    for (BFloat16 v : x) x32.push_back(static_cast<float>(v));
    for (BFloat16 v : w) w32.push_back(static_cast<float>(v));
    for (BFloat16 v : b) b32.push_back(static_cast<float>(v));
    conv2d_forward(DType::Float32, g, x32.data(), w32.data(), k.bias ? b32.data() : nullptr, y32.data(),
                   ConvAlgorithm::Direct);
    std::vector<BFloat16> want;
    for (float v : y32) want.push_back(BFloat16(v));
    ScopedAmxGemmFns amx(&amx_emulated::amx_gemm_fns());
    ScopedSmallGemmBf16Fns tiles(&bf16_emulated::small_gemm_bf16_fns());
    ASSERT_TRUE(conv2d_native_16bit(DType::BFloat16, g));
    std::vector<BFloat16> y(y32.size(), BFloat16(7.0f));
    conv2d_forward(DType::BFloat16, g, x.data(), w.data(), k.bias ? b.data() : nullptr, y.data());
    EXPECT_EQ(mismatches(y, want, "y"), 0);
  }
}

// The images of a batch are split over the threads; the weight gradient sums over them. One and
// two threads (and an uneven split: 3 images) give the same forward and input gradient bit for bit,
// and weight and bias gradients equal up to the order of the float32 additions.
TEST(Conv2dKernels, OneAndTwoThreadsAgree) {
  for (const ConvCase& k : {ConvCase{3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true},    // LeNet conv2: direct
                            ConvCase{3, 3, 11, 10, 4, 4, 3, 3, 2, 1, 1, true}}) {  // stride 3: im2col
    SCOPED_TRACE(name(k));
    const Conv2dGeometry g = geometry(k);
    const ConvDims d = dims(k);
    std::vector<float> x = cast<float>(random_values(numel(x_shape(k)), 61));
    std::vector<float> w = cast<float>(random_values(numel(w_shape(k)), 62));
    std::vector<float> b = cast<float>(random_values(k.o, 63));
    std::vector<float> gy = cast<float>(random_values(k.n * k.o * d.ho * d.wo, 64));
    struct Out {
      std::vector<float> y, gx, gw, gb;
    };
    auto run = [&](int threads) {
      ScopedThreads use(threads);
      Out o{std::vector<float>(gy.size()), std::vector<float>(x.size()), std::vector<float>(w.size()),
            std::vector<float>(b.size())};
      conv2d_forward(DType::Float32, g, x.data(), w.data(), b.data(), o.y.data());
      conv2d_backward(DType::Float32, g, gy.data(), x.data(), w.data(), o.gx.data(), o.gw.data(), o.gb.data());
      return o;
    };
    Out one = run(1), two = run(2);
    EXPECT_EQ(one.y, two.y);
    EXPECT_EQ(one.gx, two.gx);
    std::string where;
    EXPECT_TRUE(close(cast<double>(one.gw), cast<double>(two.gw), 1e-5, &where)) << where;
    EXPECT_TRUE(close(cast<double>(one.gb), cast<double>(two.gb), 1e-5, &where)) << where;
    // And both are the convolution.
    EXPECT_TRUE(close(cast<double>(two.y), naive_conv(k, cast<double>(x), cast<double>(w), cast<double>(b)), 2e-5, &where))
        << where;
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
