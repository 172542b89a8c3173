// The window arithmetic of average and adaptive (average and max) pooling, written once for the CPU and
// CUDA kernels (PyTorch's rules).
#pragma once

#include <cstdint>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// Rows [h0, h1) and columns [w0, w1) of the input an average-pooling output covers, and what its
// sum is divided by.
struct AvgPoolWindow {
  int64_t h0, h1, w0, w1;
  int64_t divisor;
};

// The window is first clipped to the padded input (its size then is the count_include_pad
// divisor), then to the input itself. divisor_override != 0 replaces the divisor.
COLONY_INLINE AvgPoolWindow avg_pool_window(const Pool2dGeometry& g, int64_t oy, int64_t ox, bool count_include_pad,
                                            int64_t divisor_override) {
  int64_t h0 = oy * g.stride_h - g.pad_h, w0 = ox * g.stride_w - g.pad_w;
  int64_t h1 = h0 + g.kernel_h < g.in_h + g.pad_h ? h0 + g.kernel_h : g.in_h + g.pad_h;
  int64_t w1 = w0 + g.kernel_w < g.in_w + g.pad_w ? w0 + g.kernel_w : g.in_w + g.pad_w;
  const int64_t padded_size = (h1 - h0) * (w1 - w0);
  h0 = h0 > 0 ? h0 : 0;
  w0 = w0 > 0 ? w0 : 0;
  h1 = h1 < g.in_h ? h1 : g.in_h;
  w1 = w1 < g.in_w ? w1 : g.in_w;
  const int64_t divisor = divisor_override != 0 ? divisor_override
                          : count_include_pad   ? padded_size
                                                : (h1 - h0) * (w1 - w0);
  return {h0, h1, w0, w1, divisor};
}

// Adaptive pooling: output o of `out` covers input [floor(o * in / out), ceil((o + 1) * in / out)).
COLONY_INLINE int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return o * in / out; }
COLONY_INLINE int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// The outputs whose windows contain input index i: [first, last] (the gather form of the backward).
COLONY_INLINE int64_t adaptive_first_output(int64_t i, int64_t in, int64_t out) { return i * out / in; }
COLONY_INLINE int64_t adaptive_last_output(int64_t i, int64_t in, int64_t out) {
  return ((i + 1) * out + in - 1) / in - 1;
}

}  // namespace colony::kernels
