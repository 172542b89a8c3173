// The convolution written out from its definition, for the tests of the CPU kernels
// (tests/kernels/conv_test.cc) and of the front functions (tests/ops/conv_ops_test.cc): the
// cases both run, naive forward and backward loops in double, and a tolerance comparison.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/int2.h"
#include "kernels/common/conv_geometry.h"
#include "kernels/common/half.h"
#include "kernels/cpu/conv.h"
#include "tests/test_util.h"

namespace colony::testing {

// ---------------------------------------------------------------------------------------------
// Naive convolution from the definition: y[n][o][oy][ox] = b[o] + sum over the group's channels c
// and kernel taps (i, j) of w[o][c][i][j] * x[n][g * Cg + c][oy * sh - ph + i * dh][ox * sw - pw + j * dw].

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  Int2 stride, padding, dilation;
  int64_t groups;
  bool bias;
};

inline std::string name(const ConvCase& k) {
  return "N" + std::to_string(k.n) + " C" + std::to_string(k.c) + " " + std::to_string(k.h) + "x" +
         std::to_string(k.w) + " O" + std::to_string(k.o) + " k" + std::to_string(k.kh) + "x" + std::to_string(k.kw) +
         " s" + std::to_string(k.stride.h) + "," + std::to_string(k.stride.w) + " p" + std::to_string(k.padding.h) +
         "," + std::to_string(k.padding.w) + " d" + std::to_string(k.dilation.h) + "," +
         std::to_string(k.dilation.w) + " g" + std::to_string(k.groups);
}

struct ConvDims {
  int64_t cg, og, ho, wo;
};

inline ConvDims dims(const ConvCase& k) {
  ConvDims d;
  d.cg = k.c / k.groups;
  d.og = k.o / k.groups;
  d.ho = (k.h + 2 * k.padding.h - k.dilation.h * (k.kh - 1) - 1) / k.stride.h + 1;
  d.wo = (k.w + 2 * k.padding.w - k.dilation.w * (k.kw - 1) - 1) / k.stride.w + 1;
  return d;
}

// Calls f(n, o, oy, ox, c_global, c_local, i, j, x_index) for every valid tap.
template <typename F>
void for_each_tap(const ConvCase& k, const F& f) {
  ConvDims d = dims(k);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t oy = 0; oy < d.ho; ++oy)
        for (int64_t ox = 0; ox < d.wo; ++ox)
          for (int64_t cl = 0; cl < d.cg; ++cl)
            for (int64_t i = 0; i < k.kh; ++i)
              for (int64_t j = 0; j < k.kw; ++j) {
                int64_t ih = oy * k.stride.h - k.padding.h + i * k.dilation.h;
                int64_t iw = ox * k.stride.w - k.padding.w + j * k.dilation.w;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                int64_t c = (o / d.og) * d.cg + cl;
                f(n, o, oy, ox, c, cl, i, j, ((n * k.c + c) * k.h + ih) * k.w + iw);
              }
}

inline std::vector<double> naive_conv(const ConvCase& k, const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b) {
  ConvDims d = dims(k);
  std::vector<double> y(k.n * k.o * d.ho * d.wo, 0.0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t p = 0; p < d.ho * d.wo; ++p) y[(n * k.o + o) * d.ho * d.wo + p] = k.bias ? b[o] : 0.0;
  for_each_tap(k, [&](int64_t n, int64_t o, int64_t oy, int64_t ox, int64_t, int64_t cl, int64_t i, int64_t j,
                      int64_t xi) {
    y[((n * k.o + o) * d.ho + oy) * d.wo + ox] += w[((o * d.cg + cl) * k.kh + i) * k.kw + j] * x[xi];
  });
  return y;
}

struct NaiveGrads {
  std::vector<double> gx, gw, gb;
};

inline NaiveGrads naive_conv_backward(const ConvCase& k, const std::vector<double>& gy, const std::vector<double>& x,
                               const std::vector<double>& w) {
  ConvDims d = dims(k);
  NaiveGrads g{std::vector<double>(x.size(), 0.0), std::vector<double>(w.size(), 0.0),
               std::vector<double>(k.o, 0.0)};
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t p = 0; p < d.ho * d.wo; ++p) g.gb[o] += gy[(n * k.o + o) * d.ho * d.wo + p];
  for_each_tap(k, [&](int64_t n, int64_t o, int64_t oy, int64_t ox, int64_t, int64_t cl, int64_t i, int64_t j,
                      int64_t xi) {
    double gyv = gy[((n * k.o + o) * d.ho + oy) * d.wo + ox];
    int64_t wi = ((o * d.cg + cl) * k.kh + i) * k.kw + j;
    g.gx[xi] += w[wi] * gyv;
    g.gw[wi] += x[xi] * gyv;
  });
  return g;
}

inline const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},            // LeNet conv1
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true},           // LeNet conv2
      {2, 4, 7, 9, 5, 3, 3, 1, 1, 1, 1, true},              // 3x3, padding 1
      {2, 4, 9, 8, 6, 3, 2, {2, 1}, {1, 2}, {2, 1}, 2, true},  // everything asymmetric, groups
      {1, 6, 10, 11, 9, 3, 3, 1, {2, 1}, 2, 3, false},      // dilation, groups, no bias
      {2, 8, 5, 5, 4, 1, 1, 1, 0, 1, 1, true},              // 1x1
      {2, 2, 5, 5, 3, 5, 5, 1, 0, 1, 1, true},              // kernel = input: 1x1 output
      {2, 3, 11, 10, 4, 4, 3, 3, 2, 1, 1, true},            // stride 3 with padding
      {1, 32, 6, 6, 20, 3, 3, 1, 1, 1, 1, true},            // 288 patch rows: several K blocks
      {1, 2, 40, 40, 3, 3, 3, 1, 0, 1, 1, false},           // 1520 grid positions: several dot blocks
      {3, 4, 6, 6, 4, 3, 3, 1, 1, 1, 4, true},              // depthwise
  };
  return cases;
}

inline std::vector<int64_t> x_shape(const ConvCase& k) { return {k.n, k.c, k.h, k.w}; }
inline std::vector<int64_t> w_shape(const ConvCase& k) { return {k.o, k.c / k.groups, k.kh, k.kw}; }

// In Conv2dGeometry's field order: input, output channels and kernel, stride, padding, dilation,
// groups, output size.
inline kernels::Conv2dGeometry geometry(const ConvCase& k) {
  const ConvDims d = dims(k);
  return {k.n,        k.c,        k.h,         k.w,         k.o,      k.kh, k.kw, k.stride.h,
          k.stride.w, k.padding.h, k.padding.w, k.dilation.h, k.dilation.w, k.groups, d.ho, d.wo};
}

inline std::vector<kernels::cpu::ConvAlgorithm> algorithms_for(const ConvCase& k) {
  std::vector<kernels::cpu::ConvAlgorithm> a = {kernels::cpu::ConvAlgorithm::Im2col};
  if (k.stride.h == 1 && k.stride.w == 1) a.push_back(kernels::cpu::ConvAlgorithm::Direct);
  return a;
}

inline const char* algo_name(kernels::cpu::ConvAlgorithm a) {
  return a == kernels::cpu::ConvAlgorithm::Direct ? "direct" : "im2col";
}

inline bool close(const std::vector<double>& a, const std::vector<double>& b, double tol, std::string* where) {
  if (a.size() != b.size()) {
    *where = "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::abs(a[i] - b[i]) <= tol * (1.0 + std::abs(b[i])))) {
      *where = "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// bfloat16 operands and bit-for-bit comparisons (conv_test.cc, conv_pixels_test.cc).

// n values drawn from random_values(n, seed), rounded to bfloat16.
inline std::vector<BFloat16> random_bf16(int64_t n, uint32_t seed) {
  std::vector<BFloat16> v;
  for (double e : random_values(n, seed)) v.push_back(BFloat16(static_cast<float>(e)));
  return v;
}

// Elements whose bits differ, the first three reported as failures.
inline int64_t mismatches(const std::vector<BFloat16>& got, const std::vector<BFloat16>& want, const char* what) {
  int64_t bad = 0;
  for (size_t e = 0; e < want.size(); ++e) {
    if (got[e].bits != want[e].bits && bad++ < 3) {
      ADD_FAILURE() << what << "[" << e << "] = " << static_cast<float>(got[e]) << ", want "
                    << static_cast<float>(want[e]);
    }
  }
  return bad;
}

}  // namespace colony::testing
