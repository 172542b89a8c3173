// The vector loops of kernels/cpu/pool.cc (max and average pooling over lanes of output columns,
// strides 1 and 2, beside the scalar windows at a row's edges) against 3-D windows written out
// from their definitions: rows whose width is not a multiple of the lanes, padding at both ends,
// dilation, ceil_mode's clipped last window, a stride with no vector loop, ties, NaNs and
// infinities inside windows, in float32, float64 and (2-D max pooling) bfloat16. Max pooling's
// values and indices and average pooling's forward are compared exactly (the lanes keep the scalar
// order); the average backward's overlapping windows add in another order, so within rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/pool.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/kernels/pool_reference.h"

namespace colony::kernels::cpu {
namespace {

using colony::testing::naive_pool_size;

struct Case {
  int64_t planes, d, h, w;
  int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw;
  int64_t dd = 1, dh = 1, dw = 1;
  bool ceil_mode = false;
};

std::string describe(const Case& c) {
  auto three = [](int64_t a, int64_t b, int64_t e) {
    return std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(e);
  };
  return "in " + std::to_string(c.planes) + "x" + three(c.d, c.h, c.w) + " kernel " + three(c.kd, c.kh, c.kw) +
         " stride " + three(c.sd, c.sh, c.sw) + " pad " + three(c.pd, c.ph, c.pw) + " dilation " +
         three(c.dd, c.dh, c.dw) + (c.ceil_mode ? " ceil" : "");
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {3, 2, 5, 37, 2, 2, 2, 2, 2, 2, 0, 0, 0},                      // 18 columns: 2 float vectors and 2 more
      {2, 3, 7, 37, 3, 3, 3, 2, 2, 2, 1, 1, 1},                      // ResNet's 3 x 3 stride 2, padding both ends
      {2, 2, 5, 29, 2, 3, 3, 1, 1, 1, 0, 1, 1},                      // stride 1
      {1, 3, 6, 41, 1, 2, 3, 1, 2, 2, 0, 1, 1, 1, 2, 2},            // dilation along rows and columns
      {1, 5, 6, 20, 2, 2, 2, 1, 1, 1, 1, 1, 0, 2, 2, 1},            // dilation along depth and rows
      {1, 2, 4, 50, 2, 2, 2, 2, 2, 2, 0, 0, 0, 1, 1, 1, true},      // ceil_mode: a clipped last window
      {2, 2, 5, 23, 3, 3, 3, 1, 1, 3, 1, 1, 1},                      // stride 3: the scalar windows only
      {2, 1, 3, 9, 1, 3, 3, 1, 1, 1, 0, 1, 1},                       // 9 columns: a float vector does not fit
      {1, 2, 9, 64, 2, 2, 2, 2, 2, 2, 0, 0, 0},                      // whole vectors only
      {2, 1, 4, 17, 1, 1, 4, 1, 1, 1, 0, 0, 2, 1, 1, 2},            // a wide dilated window, padding both ends
  };
  return all;
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  return naive_pool_size(in, k, s, p, d, ceil_mode);
}

Pool3dGeometry geometry(const Case& c, bool dilated) {
  Pool3dGeometry g;
  g.planes = c.planes;
  g.in_d = c.d, g.in_h = c.h, g.in_w = c.w;
  g.kernel_d = c.kd, g.kernel_h = c.kh, g.kernel_w = c.kw;
  g.stride_d = c.sd, g.stride_h = c.sh, g.stride_w = c.sw;
  g.pad_d = c.pd, g.pad_h = c.ph, g.pad_w = c.pw;
  if (dilated) g.dilation_d = c.dd, g.dilation_h = c.dh, g.dilation_w = c.dw;
  g.out_d = out_size(c.d, c.kd, c.sd, c.pd, g.dilation_d, c.ceil_mode);
  g.out_h = out_size(c.h, c.kh, c.sh, c.ph, g.dilation_h, c.ceil_mode);
  g.out_w = out_size(c.w, c.kw, c.sw, c.pw, g.dilation_w, c.ceil_mode);
  return g;
}

// Calls f(plane, output flat index, input flat index within the plane) for each tap of each output
// inside the input, in the definition's order (outputs, then depth, row, column).
template <typename F>
void for_each_tap(const Pool3dGeometry& g, const F& f) {
  int64_t o = 0;
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t oz = 0; oz < g.out_d; ++oz)
      for (int64_t oy = 0; oy < g.out_h; ++oy)
        for (int64_t ox = 0; ox < g.out_w; ++ox, ++o)
          for (int64_t i = 0; i < g.kernel_d; ++i)
            for (int64_t j = 0; j < g.kernel_h; ++j)
              for (int64_t k = 0; k < g.kernel_w; ++k) {
                const int64_t iz = oz * g.stride_d - g.pad_d + i * g.dilation_d;
                const int64_t ih = oy * g.stride_h - g.pad_h + j * g.dilation_h;
                const int64_t iw = ox * g.stride_w - g.pad_w + k * g.dilation_w;
                if (iz < 0 || iz >= g.in_d || ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
                f(p, o, (iz * g.in_h + ih) * g.in_w + iw);
              }
}

// Small integers (ties), with NaNs and infinities among them when `specials`.
std::vector<double> values(int64_t n, uint32_t seed, bool specials) {
  std::vector<double> v(n);
  uint32_t s = seed;
  for (double& x : v) {
    s = s * 1664525u + 1013904223u;
    const uint32_t r = s >> 8;
    x = static_cast<double>(static_cast<int>(r % 9) - 4) * 0.5;
    if (!specials) x += static_cast<double>(r % 1000) / 1000.0;
    if (specials && r % 29 == 0) x = std::numeric_limits<double>::quiet_NaN();
    if (specials && r % 31 == 1) x = -std::numeric_limits<double>::infinity();
    if (specials && r % 37 == 2) x = std::numeric_limits<double>::infinity();
  }
  return v;
}

// The maximum of each window: the first greatest in the taps' order, a NaN beating every number (a
// later NaN the earlier one).
template <typename T>
void naive_max(const Pool3dGeometry& g, const std::vector<T>& x, std::vector<T>* y, std::vector<int64_t>* idx) {
  const int64_t n = g.planes * g.out_volume();
  y->assign(n, T(0));
  idx->assign(n, -1);
  for_each_tap(g, [&](int64_t p, int64_t o, int64_t i) {
    const T v = x[p * g.in_volume() + i];
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;  // bfloat16 compared as float
    if ((*idx)[o] < 0 || static_cast<C>(v) > static_cast<C>((*y)[o]) || std::isnan(static_cast<C>(v))) {
      (*y)[o] = v;
      (*idx)[o] = i;
    }
  });
}

template <typename T>
bool same(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same(got[i], want[i])) {
      ADD_FAILURE() << what << " element " << i << ": " << static_cast<double>(got[i]) << " != "
                    << static_cast<double>(want[i]);
      return;
    }
  }
}

template <typename T>
void check_max3d(const Case& c, DType dtype, uint32_t seed) {
  const Pool3dGeometry g = geometry(c, true);
  const std::vector<T> x = colony::testing::cast<T>(values(g.planes * g.in_volume(), seed, true));
  std::vector<T> want;
  std::vector<int64_t> want_idx;
  naive_max(g, x, &want, &want_idx);
  std::vector<T> y(want.size());
  std::vector<int64_t> idx(want.size(), -7);
  max_pool3d_forward(dtype, g, x.data(), y.data(), idx.data());
  expect_same(y, want, "max_pool3d value");
  EXPECT_EQ(idx, want_idx);
}

TEST(PoolLanes, MaxPool3dMatchesTheWindowsWithTiesNaNsAndInfinities) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c));
    check_max3d<float>(c, DType::Float32, seed++);
    check_max3d<double>(c, DType::Float64, seed++);
  }
}

// 2-D: the cases' depths as more planes, with their row and column windows.
Pool2dGeometry geometry_2d(const Case& c) {
  const Pool3dGeometry v = geometry({c.planes * c.d, 1, c.h, c.w, 1, c.kh, c.kw, 1, c.sh, c.sw, 0, c.ph, c.pw,
                                     1, c.dh, c.dw, c.ceil_mode},
                                    true);
  return {v.planes,   v.in_h,     v.in_w,  v.out_h, v.out_w,      v.kernel_h,   v.kernel_w,
          v.stride_h, v.stride_w, v.pad_h, v.pad_w, v.dilation_h, v.dilation_w};
}

template <typename T>
void check_max2d(const Case& c, DType dtype, uint32_t seed) {
  const Pool2dGeometry g = geometry_2d(c);
  const Pool3dGeometry v = as_3d(g);
  const std::vector<T> x = colony::testing::cast<T>(values(g.planes * g.in_h * g.in_w, seed, true));
  std::vector<T> want;
  std::vector<int64_t> want_idx;
  naive_max(v, x, &want, &want_idx);
  std::vector<T> y(want.size());
  std::vector<int64_t> idx(want.size(), -7);
  max_pool2d_forward(dtype, g, x.data(), y.data(), idx.data());
  expect_same(y, want, "max_pool2d value");
  EXPECT_EQ(idx, want_idx);
}

TEST(PoolLanes, MaxPool2dMatchesTheWindowsInEveryDtype) {
  uint32_t seed = 100;
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c));
    check_max2d<float>(c, DType::Float32, seed++);
    check_max2d<double>(c, DType::Float64, seed++);
    check_max2d<BFloat16>(c, DType::BFloat16, seed++);
  }
}

// Average pooling from the definition, in T and the scalar loop's order: the sum of the taps inside
// the input over the count in the padded input (count_include_pad) or in the input, or the
// override; an output with no tap inside is 0.
template <typename T>
std::vector<T> naive_avg(const Pool3dGeometry& g, bool include_pad, int64_t divisor_override, const std::vector<T>& x,
                         std::vector<int64_t>* divisors) {
  const int64_t n = g.planes * g.out_volume();
  std::vector<T> sum(n, T(0));
  std::vector<int64_t> inside(n, 0);
  for_each_tap(g, [&](int64_t p, int64_t o, int64_t i) {
    sum[o] += x[p * g.in_volume() + i];
    ++inside[o];
  });
  divisors->assign(n, 0);
  std::vector<T> y(n);
  int64_t o = 0;
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t oz = 0; oz < g.out_d; ++oz)
      for (int64_t oy = 0; oy < g.out_h; ++oy)
        for (int64_t ox = 0; ox < g.out_w; ++ox, ++o) {
          auto padded = [](int64_t o, int64_t in, int64_t k, int64_t s, int64_t pad) {
            const int64_t start = o * s - pad, end = std::min(start + k, in + pad);
            return end - start;
          };
          const int64_t div = divisor_override != 0 ? divisor_override
                              : include_pad ? padded(oz, g.in_d, g.kernel_d, g.stride_d, g.pad_d) *
                                                  padded(oy, g.in_h, g.kernel_h, g.stride_h, g.pad_h) *
                                                  padded(ox, g.in_w, g.kernel_w, g.stride_w, g.pad_w)
                                            : inside[o];
          (*divisors)[o] = div;
          y[o] = inside[o] == 0 ? T(0) : sum[o] / static_cast<T>(div);
        }
  return y;
}

template <typename T>
void check_avg3d(const Case& c, DType dtype, bool include_pad, int64_t divisor_override, uint32_t seed) {
  const Pool3dGeometry g = geometry(c, false);
  const std::vector<T> x = colony::testing::cast<T>(values(g.planes * g.in_volume(), seed, false));
  std::vector<int64_t> divisors;
  const std::vector<T> want = naive_avg(g, include_pad, divisor_override, x, &divisors);
  std::vector<T> y(want.size());
  avg_pool3d_forward(dtype, g, include_pad, divisor_override, x.data(), y.data());
  expect_same(y, want, "avg_pool3d");

  // The backward: each output's share to its taps, summed here in double.
  const std::vector<T> gy = colony::testing::cast<T>(values(want.size(), seed + 1000, false));
  std::vector<double> want_gx(x.size(), 0.0);
  for_each_tap(g, [&](int64_t p, int64_t o, int64_t i) {
    want_gx[p * g.in_volume() + i] += static_cast<double>(gy[o] / static_cast<T>(divisors[o]));
  });
  std::vector<T> gx(x.size(), T(7));
  avg_pool3d_backward(dtype, g, include_pad, divisor_override, gy.data(), gx.data());
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  for (size_t i = 0; i < gx.size(); ++i) {
    ASSERT_NEAR(static_cast<double>(gx[i]), want_gx[i], tol * (1 + std::fabs(want_gx[i]))) << "grad_x element " << i;
  }
}

TEST(PoolLanes, AvgPool3dForwardAndBackwardMatchTheWindowsUnderEveryCountingRule) {
  uint32_t seed = 200;
  for (const Case& c : cases()) {
    if (c.dd != 1 || c.dh != 1 || c.dw != 1) continue;  // average pooling has no dilation
    SCOPED_TRACE(describe(c));
    for (bool include_pad : {true, false}) {
      for (int64_t divisor_override : {0, 3}) {
        check_avg3d<float>(c, DType::Float32, include_pad, divisor_override, seed++);
        check_avg3d<double>(c, DType::Float64, include_pad, divisor_override, seed++);
      }
    }
  }
}

TEST(PoolLanes, AvgPool2dTakesTheSameLoops) {
  uint32_t seed = 300;
  for (const Case& c : cases()) {
    if (c.dd != 1 || c.dh != 1 || c.dw != 1) continue;
    SCOPED_TRACE(describe(c));
    const Pool2dGeometry g = geometry_2d(c);
    const Pool3dGeometry v = as_3d(g);
    const std::vector<float> x = colony::testing::cast<float>(values(g.planes * g.in_h * g.in_w, seed++, false));
    std::vector<int64_t> divisors;
    const std::vector<float> want = naive_avg(v, false, 0, x, &divisors);
    std::vector<float> y(want.size());
    avg_pool2d_forward(DType::Float32, g, false, 0, x.data(), y.data());
    expect_same(y, want, "avg_pool2d");
  }
}

// Global average pooling (the whole plane summed by vectors, the backward one fill): the mean of
// each plane within float32's rounding of the sum, and each input's share exactly.
TEST(PoolLanes, GlobalAveragePoolingSumsThePlaneAndSharesItsGradient) {
  Pool2dGeometry g;
  g.planes = 3, g.in_h = 7, g.in_w = 13, g.out_h = 1, g.out_w = 1;
  const std::vector<double> xd = values(g.planes * 7 * 13, 400, false);
  const std::vector<float> x = colony::testing::cast<float>(xd);
  std::vector<float> y(3);
  adaptive_avg_pool2d_forward(DType::Float32, g, x.data(), y.data());
  for (int64_t p = 0; p < 3; ++p) {
    double s = 0;
    for (int64_t i = 0; i < 91; ++i) s += x[p * 91 + i];
    EXPECT_NEAR(y[p], s / 91, 1e-6 * (1 + std::fabs(s / 91))) << "plane " << p;
  }
  const std::vector<float> gy = {1.5f, -0.0f, 91.0f};
  std::vector<float> gx(x.size(), 7.0f);
  adaptive_avg_pool2d_backward(DType::Float32, g, gy.data(), gx.data());
  for (int64_t i = 0; i < 91; ++i) {
    ASSERT_TRUE(same(gx[i], 1.5f / 91.0f)) << i;
    ASSERT_TRUE(same(gx[91 + i], 0.0f)) << i;  // a -0 share comes out +0, as 0 + share does
    ASSERT_TRUE(same(gx[182 + i], 1.0f)) << i;
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
