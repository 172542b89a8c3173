// Pooling written out from its definitions, for the tests of the CPU kernels
// (tests/kernels/pool_test.cc) and of the front functions (tests/ops/pool_ops_test.cc): the
// cases both run and naive max, average and adaptive average pooling in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/int2.h"
#include "tests/kernels/kernel_testing.h"

namespace colony::testing {

struct PoolCase {
  std::vector<int64_t> in;
  Int2 kernel, stride, padding, dilation;
  bool ceil_mode;
};

inline int64_t naive_pool_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / s;
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;  // the last window must start inside
  return out;
}

struct NaiveMax {
  std::vector<double> y;
  std::vector<int64_t> idx;
  int64_t ho, wo;
};

inline NaiveMax naive_max_pool(const PoolCase& c, const std::vector<double>& x) {
  const int64_t H = c.in[c.in.size() - 2], W = c.in[c.in.size() - 1];
  const int64_t planes = numel(c.in) / (H * W);
  NaiveMax r;
  r.ho = naive_pool_size(H, c.kernel.h, c.stride.h, c.padding.h, c.dilation.h, c.ceil_mode);
  r.wo = naive_pool_size(W, c.kernel.w, c.stride.w, c.padding.w, c.dilation.w, c.ceil_mode);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < r.ho; ++oy)
      for (int64_t ox = 0; ox < r.wo; ++ox) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = -1;
        for (int64_t i = 0; i < c.kernel.h; ++i)
          for (int64_t j = 0; j < c.kernel.w; ++j) {
            int64_t ih = oy * c.stride.h - c.padding.h + i * c.dilation.h;
            int64_t iw = ox * c.stride.w - c.padding.w + j * c.dilation.w;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            double v = x[p * H * W + ih * W + iw];
            if (at < 0 || v > best || std::isnan(v)) best = v, at = ih * W + iw;
          }
        r.y.push_back(best);
        r.idx.push_back(at);
      }
  return r;
}

inline const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {{4, 6, 28, 28}, 2, 2, 0, 1, false},          // LeNet pool 1 (the 2x2 fast path)
      {{2, 16, 10, 10}, 2, 2, 0, 1, false},         // LeNet pool 2
      {{2, 3, 9, 7}, 2, 2, 0, 1, false},            // odd sizes: the last row and column are dropped
      {{1, 3, 6, 39}, 2, 2, 0, 1, false},           // rows of 19 windows: whole vectors, then a short group
      {{2, 3, 9, 7}, 2, 2, 0, 1, true},             // ceil_mode keeps them with a clipped window
      {{2, 3, 10, 11}, 3, 2, 1, 1, false},          // overlapping windows with padding
      {{1, 2, 12, 10}, {3, 2}, {2, 3}, {1, 1}, {2, 3}, true},  // dilation, everything asymmetric
      {{3, 8, 8}, {4, 3}, 1, {2, 1}, 1, false},     // 3-D input, stride 1
  };
  return cases;
}

// Average pooling from the definition: the window's taps are counted in the padded input (for
// count_include_pad) and in the input, independently of the kernel's clipping arithmetic.
inline std::vector<double> naive_avg_pool(const PoolCase& c, bool include_pad, int64_t divisor_override,
                                          const std::vector<double>& x, int64_t* ho_out, int64_t* wo_out) {
  const int64_t H = c.in[c.in.size() - 2], W = c.in[c.in.size() - 1];
  const int64_t planes = numel(c.in) / (H * W);
  const int64_t ho = naive_pool_size(H, c.kernel.h, c.stride.h, c.padding.h, 1, c.ceil_mode);
  const int64_t wo = naive_pool_size(W, c.kernel.w, c.stride.w, c.padding.w, 1, c.ceil_mode);
  *ho_out = ho;
  *wo_out = wo;
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox) {
        double sum = 0;
        int64_t in_padded = 0, in_input = 0;
        for (int64_t i = 0; i < c.kernel.h; ++i)
          for (int64_t j = 0; j < c.kernel.w; ++j) {
            int64_t ih = oy * c.stride.h - c.padding.h + i, iw = ox * c.stride.w - c.padding.w + j;
            bool padded_h = ih >= -c.padding.h && ih < H + c.padding.h;
            bool padded_w = iw >= -c.padding.w && iw < W + c.padding.w;
            if (padded_h && padded_w) ++in_padded;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            ++in_input;
            sum += x[p * H * W + ih * W + iw];
          }
        int64_t div = divisor_override != 0 ? divisor_override : include_pad ? in_padded : in_input;
        y.push_back(in_input == 0 ? 0.0 : sum / static_cast<double>(div));
      }
  return y;
}

inline std::vector<double> naive_adaptive(const std::vector<int64_t>& in, Int2 out, const std::vector<double>& x) {
  const int64_t H = in[in.size() - 2], W = in[in.size() - 1], planes = numel(in) / (H * W);
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < out.h; ++oy)
      for (int64_t ox = 0; ox < out.w; ++ox) {
        auto h0 = static_cast<int64_t>(std::floor(static_cast<double>(oy) * H / out.h));
        auto h1 = static_cast<int64_t>(std::ceil(static_cast<double>(oy + 1) * H / out.h));
        auto w0 = static_cast<int64_t>(std::floor(static_cast<double>(ox) * W / out.w));
        auto w1 = static_cast<int64_t>(std::ceil(static_cast<double>(ox + 1) * W / out.w));
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += x[p * H * W + ih * W + iw];
        y.push_back(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
  return y;
}

}  // namespace colony::testing
