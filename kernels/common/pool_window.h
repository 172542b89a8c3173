// The window arithmetic of max, average, adaptive and fractional max pooling, written once for the
// CPU and CUDA kernels (PyTorch's rules). The 3-D geometry is the general one: the 2-D kernels run
// as depth 1 (as_3d), so each loop and each window rule exists once.
#pragma once

#include <cstdint>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// `planes` independent [in_d, in_h, in_w] volumes (batch * channels) pooled to [out_d, out_h,
// out_w]. Window (oz, oy, ox) covers depths oz * stride_d - pad_d + i * dilation_d, i < kernel_d,
// likewise rows and columns. Fractional max pooling reads only the sizes and kernel_*.
struct Pool3dGeometry {
  int64_t planes = 1, in_d = 1, in_h = 1, in_w = 1, out_d = 1, out_h = 1, out_w = 1;
  int64_t kernel_d = 1, kernel_h = 1, kernel_w = 1, stride_d = 1, stride_h = 1, stride_w = 1;
  int64_t pad_d = 0, pad_h = 0, pad_w = 0, dilation_d = 1, dilation_h = 1, dilation_w = 1;
  COLONY_HOST_DEVICE int64_t in_volume() const { return in_d * in_h * in_w; }
  COLONY_HOST_DEVICE int64_t out_volume() const { return out_d * out_h * out_w; }
};

// A 2-D geometry as a depth-1 volume.
COLONY_INLINE Pool3dGeometry as_3d(const Pool2dGeometry& g) {
  Pool3dGeometry v;
  v.planes = g.planes;
  v.in_h = g.in_h;
  v.in_w = g.in_w;
  v.out_h = g.out_h;
  v.out_w = g.out_w;
  v.kernel_h = g.kernel_h;
  v.kernel_w = g.kernel_w;
  v.stride_h = g.stride_h;
  v.stride_w = g.stride_w;
  v.pad_h = g.pad_h;
  v.pad_w = g.pad_w;
  v.dilation_h = g.dilation_h;
  v.dilation_w = g.dilation_w;
  return v;
}

// Max pooling along one dim: the window of output o starts at o * stride - pad and spans
// (kernel - 1) * dilation + 1 positions; [first, end) are its taps inside the input, first moved
// past the padding by whole dilations (a window never starts past the input).
struct MaxPoolSpan {
  int64_t first, end;
};
COLONY_INLINE MaxPoolSpan max_pool_span(int64_t o, int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                                        int64_t dilation) {
  int64_t first = o * stride - pad;
  const int64_t last = first + (kernel - 1) * dilation + 1;
  const int64_t end = last < in ? last : in;
  while (first < 0) first += dilation;
  return {first, end};
}

// The outputs along one dim whose windows lie wholly inside the input, with `reach` elements more
// past their last tap (what a vector load beyond it reads): [first, end), empty where none. There
// no tap is padding, so each window has all its kernel taps (and average pooling's divisor is the
// same along the range). Average pooling: dilation 1.
struct InnerOutputs {
  int64_t first, end;
};
COLONY_INLINE InnerOutputs inner_outputs(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad,
                                         int64_t dilation, int64_t reach) {
  int64_t first = (pad + stride - 1) / stride;
  const int64_t limit = in - 1 - (kernel - 1) * dilation - reach + pad;  // the last start o * stride may take
  int64_t end = limit < 0 ? 0 : limit / stride + 1;
  first = first < out ? first : out;
  end = end < out ? end : out;
  end = end > first ? end : first;
  return {first, end};
}

// Depths [d0, d1), rows [h0, h1) and columns [w0, w1) of the input an average-pooling output
// covers, and what its sum is divided by.
struct AvgPoolWindow {
  int64_t d0, d1, h0, h1, w0, w1;
  int64_t divisor;
  COLONY_HOST_DEVICE bool empty() const { return d0 >= d1 || h0 >= h1 || w0 >= w1; }
};

// The window is first clipped to the padded input (its size then is the count_include_pad
// divisor), then to the input itself. divisor_override != 0 replaces the divisor.
COLONY_INLINE AvgPoolWindow avg_pool_window(const Pool3dGeometry& g, int64_t oz, int64_t oy, int64_t ox,
                                            bool count_include_pad, int64_t divisor_override) {
  int64_t d0 = oz * g.stride_d - g.pad_d, h0 = oy * g.stride_h - g.pad_h, w0 = ox * g.stride_w - g.pad_w;
  int64_t d1 = d0 + g.kernel_d < g.in_d + g.pad_d ? d0 + g.kernel_d : g.in_d + g.pad_d;
  int64_t h1 = h0 + g.kernel_h < g.in_h + g.pad_h ? h0 + g.kernel_h : g.in_h + g.pad_h;
  int64_t w1 = w0 + g.kernel_w < g.in_w + g.pad_w ? w0 + g.kernel_w : g.in_w + g.pad_w;
  const int64_t padded_size = (d1 - d0) * (h1 - h0) * (w1 - w0);
  d0 = d0 > 0 ? d0 : 0;
  h0 = h0 > 0 ? h0 : 0;
  w0 = w0 > 0 ? w0 : 0;
  d1 = d1 < g.in_d ? d1 : g.in_d;
  h1 = h1 < g.in_h ? h1 : g.in_h;
  w1 = w1 < g.in_w ? w1 : g.in_w;
  const int64_t divisor = divisor_override != 0 ? divisor_override
                          : count_include_pad   ? padded_size
                                                : (d1 - d0) * (h1 - h0) * (w1 - w0);
  return {d0, d1, h0, h1, w0, w1, divisor};
}

// The 2-D window: depth [0, 1).
COLONY_INLINE AvgPoolWindow avg_pool_window(const Pool2dGeometry& g, int64_t oy, int64_t ox, bool count_include_pad,
                                            int64_t divisor_override) {
  return avg_pool_window(as_3d(g), 0, oy, ox, count_include_pad, divisor_override);
}

// The outputs along one dim whose average-pooling windows (start o * stride - pad, kernel wide)
// hold input index i: [first, last] (the gather form of the backward; may be empty).
COLONY_INLINE int64_t avg_first_output(int64_t i, int64_t kernel, int64_t stride, int64_t pad) {
  const int64_t t = i + pad - kernel + 1;
  return t > 0 ? (t + stride - 1) / stride : 0;
}
COLONY_INLINE int64_t avg_last_output(int64_t i, int64_t stride, int64_t pad, int64_t out) {
  const int64_t last = (i + pad) / stride;
  return last < out - 1 ? last : out - 1;
}

// Adaptive pooling: output o of `out` covers input [floor(o * in / out), ceil((o + 1) * in / out)).
COLONY_INLINE int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return o * in / out; }
COLONY_INLINE int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// The outputs whose windows contain input index i: [first, last] (the gather form of the backward).
COLONY_INLINE int64_t adaptive_first_output(int64_t i, int64_t in, int64_t out) { return i * out / in; }
COLONY_INLINE int64_t adaptive_last_output(int64_t i, int64_t in, int64_t out) {
  return ((i + 1) * out + in - 1) / in - 1;
}

// Fractional max pooling (Graham's pseudo-random pooling, torch's generate_intervals): along one
// dim, output o's `pool`-wide window starts at int((o + u) * alpha) - int(u * alpha) with alpha =
// (in - pool) / (out - 1) and the plane's sample u in [0, 1); the last window ends at the input's
// end. Computed in the input's type C (float for float32), as torch does, so the same samples give
// the same windows.
template <typename C>
COLONY_INLINE int64_t fractional_start(C sample, int64_t o, int64_t in, int64_t out, int64_t pool) {
  if (o == out - 1) return in - pool;
  const C alpha = static_cast<C>(in - pool) / static_cast<C>(out - 1);
  return static_cast<int64_t>(static_cast<int>((static_cast<C>(o) + sample) * alpha) -
                              static_cast<int>(sample * alpha));
}

}  // namespace colony::kernels
