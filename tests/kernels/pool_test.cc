// The CPU pooling kernels (kernels/cpu/pool.cc) on raw buffers against the naive windows of
// pool_reference.h: max pooling's values and indices and its scatter backward, average pooling
// under every counting rule, adaptive average pooling, the backward passes as the adjoints of the
// forward ones, edge shapes, and one and two threads (planes are split over the pool, so the
// results are the same bit for bit). The front functions: tests/ops/pool_ops_test.cc.
#include "kernels/cpu/pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/kernels/pool_reference.h"
#include "tests/test_util.h"

namespace colony::kernels::cpu {
namespace {

using namespace colony::testing;  // NOLINT(build/namespaces): the references and helpers of the kernel tests

std::string describe(const PoolCase& c) {
  std::string s = "[";
  for (size_t i = 0; i < c.in.size(); ++i) s += (i ? ", " : "") + std::to_string(c.in[i]);
  return s + "] kernel " + std::to_string(c.kernel.h) + "x" + std::to_string(c.kernel.w) + " stride " +
         std::to_string(c.stride.h) + "," + std::to_string(c.stride.w) + (c.ceil_mode ? " ceil" : "");
}

// In Pool2dGeometry's field order: planes and sizes, kernel, stride, padding, dilation.
Pool2dGeometry geometry(const PoolCase& c, int64_t out_h, int64_t out_w) {
  const int64_t h = c.in[c.in.size() - 2], w = c.in[c.in.size() - 1];
  return {numel(c.in) / (h * w), h,          w,           out_h,       out_w,        c.kernel.h,  c.kernel.w,
          c.stride.h,           c.stride.w, c.padding.h, c.padding.w, c.dilation.h, c.dilation.w};
}

// The front functions' cases, a 1 x 1 plane, a window covering the whole input (global pooling)
// over an odd number of planes, and enough planes (128 of 28 x 28) for two threads to split them.
std::vector<PoolCase> cases() {
  std::vector<PoolCase> all = pool_cases();
  all.push_back({{1, 1, 1, 1}, 1, 1, 0, 1, false});
  all.push_back({{5, 1, 7, 6}, {7, 6}, 1, 0, 1, false});
  all.push_back({{16, 8, 28, 28}, 2, 2, 0, 1, false});
  return all;
}

// A max pooling case's input (random, from `seed`), its naive result and its geometry.
struct MaxPoolRun {
  std::vector<double> x;
  NaiveMax ref;
  Pool2dGeometry g;
};

MaxPoolRun max_pool_run(const PoolCase& c, uint32_t seed) {
  MaxPoolRun r{random_values(numel(c.in), seed), {}, {}};
  r.ref = naive_max_pool(c, r.x);
  r.g = geometry(c, r.ref.ho, r.ref.wo);
  return r;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(MaxPool2dKernel, MatchesNaiveValuesAndIndicesOnOneAndTwoThreads) {
  uint32_t seed = 100;
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(describe(c));
    const auto [x, ref, g] = max_pool_run(c, seed++);
    std::vector<float> x32 = cast<float>(x);
    NaiveMax ref32 = naive_max_pool(c, cast<double>(x32));  // ties may appear in float32
    std::vector<std::vector<float>> outputs;
    for (int threads : {1, 2}) {
      ScopedThreads use(threads);
      std::vector<double> y(ref.y.size());
      std::vector<int64_t> idx(ref.y.size(), -1);
      max_pool2d_forward(DType::Float64, g, x.data(), y.data(), idx.data());
      EXPECT_EQ(y, ref.y);  // a maximum is one of the inputs: exact
      EXPECT_EQ(idx, ref.idx);
      std::vector<float> y32(ref.y.size());
      max_pool2d_forward(DType::Float32, g, x32.data(), y32.data(), idx.data());
      EXPECT_EQ(cast<double>(y32), ref32.y);
      EXPECT_EQ(idx, ref32.idx);
      outputs.push_back(y32);
    }
    EXPECT_EQ(outputs[0], outputs[1]);
  }
}

TEST(MaxPool2dKernel, BackwardScattersToTheIndicesAndRefusesOnesOutsideThePlane) {
  uint32_t seed = 200;
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(describe(c));
    const auto [x, ref, g] = max_pool_run(c, seed++);
    std::vector<double> gy = random_values(ref.y.size(), seed++);
    std::vector<double> want(x.size(), 0.0);
    const int64_t plane_out = ref.ho * ref.wo, plane_in = g.in_h * g.in_w;
    for (size_t o = 0; o < gy.size(); ++o) want[(o / plane_out) * plane_in + ref.idx[o]] += gy[o];
    for (int threads : {1, 2}) {
      ScopedThreads use(threads);
      std::vector<double> gx(x.size(), 7.0);  // stale values must be overwritten
      max_pool2d_backward(DType::Float64, g, gy.data(), ref.idx.data(), gx.data());
      EXPECT_EQ(gx, want);  // one or a few additions per element, in output order either way
    }
  }
  const PoolCase c{{1, 1, 4, 4}, 2, 2, 0, 1, false};
  std::vector<double> gy(4, 1.0), gx(16);
  std::vector<int64_t> bad = {16, 0, 0, 0};
  EXPECT_TRUE(throws_with<std::out_of_range>(
      [&] { max_pool2d_backward(DType::Float64, geometry(c, 2, 2), gy.data(), bad.data(), gx.data()); },
      "index 16 at output element 0 is outside its input plane of 4 x 4"));
}

// bfloat16 max pooling runs without widening (kernels/common/pool.h): the forward must give the
// naive maxima bit for bit (a maximum is one of the inputs; a NaN included) and the float32
// kernel's indices on the widened input; the backward sums in float32 in output order and rounds
// once (or, where windows cannot overlap, stores the gradient's bits as that sum would round), so
// it must equal that sum rounded. The code is portable vector code, the same on every CPU.
TEST(MaxPool2dKernel, Bfloat16IsExactAndItsBackwardSumsInFloat32) {
  uint32_t seed = 250;
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(describe(c));
    std::vector<BFloat16> x;
    for (double v : random_values(numel(c.in), seed++)) x.push_back(BFloat16(static_cast<float>(v)));
    if (x.size() > 3) x[3] = BFloat16(std::nanf(""));
    std::vector<double> xd;
    for (BFloat16 v : x) xd.push_back(static_cast<float>(v));
    const NaiveMax ref = naive_max_pool(c, xd);
    const Pool2dGeometry g = geometry(c, ref.ho, ref.wo);
    std::vector<float> x32 = cast<float>(xd), y32(ref.y.size());
    std::vector<int64_t> idx32(ref.y.size());
    max_pool2d_forward(DType::Float32, g, x32.data(), y32.data(), idx32.data());
    std::vector<BFloat16> gy;
    for (double v : random_values(ref.y.size(), seed++)) gy.push_back(BFloat16(static_cast<float>(v)));
    gy[0] = BFloat16(-0.0f);  // the sum 0 + -0 is +0
    if (gy.size() > 1) gy[1] = BFloat16::from_bits(0x7f81);  // a signalling NaN comes out quiet
    const int64_t plane_out = ref.ho * ref.wo, plane_in = g.in_h * g.in_w;
    std::vector<float> sums(x.size(), 0.0f);
    for (size_t o = 0; o < gy.size(); ++o) sums[(o / plane_out) * plane_in + ref.idx[o]] += static_cast<float>(gy[o]);
    for (int threads : {1, 2}) {
      ScopedThreads use(threads);
      std::vector<BFloat16> y(ref.y.size());
      std::vector<int64_t> idx(ref.y.size(), -1);
      max_pool2d_forward(DType::BFloat16, g, x.data(), y.data(), idx.data());
      for (size_t o = 0; o < y.size(); ++o) {
        ASSERT_EQ(y[o].bits, BFloat16(static_cast<float>(ref.y[o])).bits) << "output " << o;
      }
      EXPECT_EQ(idx, ref.idx);
      EXPECT_EQ(idx, idx32);
      std::vector<BFloat16> gx(x.size(), BFloat16(7.0f));  // stale values must be overwritten
      max_pool2d_backward(DType::BFloat16, g, gy.data(), idx.data(), gx.data());
      for (size_t i = 0; i < gx.size(); ++i) ASSERT_EQ(gx[i].bits, BFloat16(sums[i]).bits) << "input " << i;
    }
  }
}

// Average pooling's backward is the adjoint of its forward: <avg(x), gy> = <x, avg_backward(gy)>.
TEST(AvgPool2dKernel, MatchesNaiveForEveryCountingRuleAndTheBackwardIsItsAdjoint) {
  uint32_t seed = 300;
  for (const PoolCase& c : cases()) {
    if (c.dilation.h != 1 || c.dilation.w != 1) continue;  // avg_pool2d has no dilation
    std::vector<double> x = random_values(numel(c.in), seed++);
    for (bool include_pad : {true, false}) {
      for (int64_t divisor : {0, 3}) {
        SCOPED_TRACE(describe(c) + " include_pad " + std::to_string(include_pad) + " divisor " + std::to_string(divisor));
        int64_t ho = 0, wo = 0;
        std::vector<double> ref = naive_avg_pool(c, include_pad, divisor, x, &ho, &wo);
        const Pool2dGeometry g = geometry(c, ho, wo);
        std::vector<double> gy = random_values(ref.size(), seed++);
        std::vector<std::vector<double>> grads;
        for (int threads : {1, 2}) {
          ScopedThreads use(threads);
          std::vector<double> y(ref.size());
          avg_pool2d_forward(DType::Float64, g, include_pad, divisor, x.data(), y.data());
          for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-12) << "output " << i;
          std::vector<double> gx(x.size(), 7.0);
          avg_pool2d_backward(DType::Float64, g, include_pad, divisor, gy.data(), gx.data());
          EXPECT_NEAR(dot(ref, gy), dot(x, gx), 1e-10 * (1 + std::abs(dot(ref, gy))));
          grads.push_back(gx);
        }
        EXPECT_EQ(grads[0], grads[1]);
        std::vector<float> x32 = cast<float>(x), y32(ref.size());
        avg_pool2d_forward(DType::Float32, g, include_pad, divisor, x32.data(), y32.data());
        for (size_t i = 0; i < y32.size(); ++i) ASSERT_NEAR(y32[i], ref[i], 1e-6) << "float32 output " << i;
      }
    }
  }
}

TEST(AdaptiveAvgPool2dKernel, MatchesNaiveAndTheBackwardIsItsAdjoint) {
  struct Case {
    std::vector<int64_t> in;
    Int2 out;
  };
  // Global pooling, uneven overlapping windows, more outputs than inputs, identity, a 1 x 1 plane.
  const std::vector<Case> adaptive_cases = {
      {{2, 3, 8, 8}, 1}, {{2, 3, 10, 7}, {3, 4}}, {{2, 5, 3}, {7, 5}}, {{1, 2, 6, 6}, {6, 6}}, {{4, 1, 1}, {2, 3}},
      {{64, 32, 9, 9}, {3, 3}}};  // enough planes for two threads
  uint32_t seed = 400;
  for (const Case& c : adaptive_cases) {
    SCOPED_TRACE(describe({c.in, 1, 1, 0, 1, false}) + " to " + std::to_string(c.out.h) + "x" + std::to_string(c.out.w));
    std::vector<double> x = random_values(numel(c.in), seed++);
    std::vector<double> ref = naive_adaptive(c.in, c.out, x);
    Pool2dGeometry g = geometry({c.in, 1, 1, 0, 1, false}, c.out.h, c.out.w);
    std::vector<double> gy = random_values(ref.size(), seed++);
    std::vector<std::vector<double>> grads;
    for (int threads : {1, 2}) {
      ScopedThreads use(threads);
      std::vector<double> y(ref.size());
      adaptive_avg_pool2d_forward(DType::Float64, g, x.data(), y.data());
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-12) << "output " << i;
      std::vector<double> gx(x.size(), 7.0);
      adaptive_avg_pool2d_backward(DType::Float64, g, gy.data(), gx.data());
      EXPECT_NEAR(dot(ref, gy), dot(x, gx), 1e-10 * (1 + std::abs(dot(ref, gy))));
      grads.push_back(gx);
    }
    EXPECT_EQ(grads[0], grads[1]);
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
