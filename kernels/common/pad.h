// F::pad in "reflect", "replicate" and "circular" mode (nn/functional_pad.cc), and its gradient:
// the kernel entry points, declared once for both devices (kernel.h), defined in kernels/cpu/pad.cc
// and kernels/cuda/pad.cu, and the index math both devices share.
//
// Layout (contiguous): [planes, d, h, w], the padded dims last (1 to 3 of them; the unpadded ones
// of size 1 with no padding), planes the product of the leading dims. Along each dim, output
// position o reads input position o - lo (a negative lo crops), brought into the input by the mode:
// mirrored at the edges without repeating them ("reflect": -1 -> 1, size -> size - 2), clamped
// ("replicate"), or wrapped within the part that cropping leaves, [core_start, core_start + core)
// ("circular", as torch's _pad_circular copies it). F::pad has already refused paddings these
// cannot serve (a reflection as wide as the dim, a wrap around more than once).
//
// The gradient gathers: each input element sums the output elements that read it, found per dim
// (pad_targets: a range, plus at most two mirrored or wrapped positions), so every input element is
// written once by one thread in a fixed order, on both devices, with no atomics and the same bits
// on every run.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

enum class PadMode : int32_t { Reflect, Replicate, Circular };

// One dim's padding: sizes, the amount padded before (negative: cropped), and for "circular" the
// part the wrap runs within.
struct PadDim {
  int64_t in = 1, out = 1, lo = 0, core_start = 0, core = 1;
};

struct PadGeometry {
  PadMode mode = PadMode::Reflect;
  int64_t planes = 1;
  PadDim d, h, w;
  COLONY_HOST_DEVICE int64_t in_elements() const { return planes * d.in * h.in * w.in; }
  COLONY_HOST_DEVICE int64_t out_elements() const { return planes * d.out * h.out * w.out; }
};

// The input position output position o reads along a dim.
COLONY_HOST_DEVICE inline int64_t pad_source(PadMode mode, const PadDim& p, int64_t o) {
  const int64_t i = o - p.lo;
  if (mode == PadMode::Reflect) {
    if (i < 0) return -i;
    return i >= p.in ? 2 * (p.in - 1) - i : i;
  }
  if (mode == PadMode::Replicate) return i < 0 ? 0 : (i >= p.in ? p.in - 1 : i);
  int64_t r = (i - p.core_start) % p.core;
  if (r < 0) r += p.core;
  return p.core_start + r;
}

// The output positions that read input position i along a dim: [begin, end) and extra[0..extras),
// disjoint.
struct PadTargets {
  int64_t begin = 0, end = 0;
  int64_t extra[2] = {0, 0};
  int extras = 0;
  COLONY_HOST_DEVICE void add(int64_t o, int64_t out) {
    if (o >= 0 && o < out) extra[extras++] = o;
  }
};

COLONY_HOST_DEVICE inline PadTargets pad_targets(PadMode mode, const PadDim& p, int64_t i) {
  PadTargets t;
  const int64_t direct = i + p.lo;
  if (mode == PadMode::Replicate) {
    // The first input element is read by every output position at or before it, the last by
    // every one at or after it.
    t.begin = i == 0 ? 0 : direct;
    t.end = i == p.in - 1 ? p.out : direct + 1;
  } else if (mode == PadMode::Reflect) {
    t.begin = direct;
    t.end = direct + 1;
    if (i >= 1) t.add(p.lo - i, p.lo);                           // mirrored before: o - lo = -i < 0
    if (i <= p.in - 2) t.add(2 * (p.in - 1) - i + p.lo, p.out);  // mirrored after: o - lo >= in
  } else {
    if (i < p.core_start || i >= p.core_start + p.core) return t;  // cropped: nothing reads it
    t.begin = direct;
    t.end = direct + 1;
    t.add(direct - p.core, p.out);
    t.add(direct + p.core, p.out);
  }
  if (t.begin < 0) t.begin = 0;
  if (t.end > p.out) t.end = p.out;
  if (t.end < t.begin) t.end = t.begin;
  return t;
}

// Calls f(o) for every output position of `t`.
template <typename F>
COLONY_HOST_DEVICE inline void for_each_target(const PadTargets& t, F&& f) {
  for (int64_t o = t.begin; o < t.end; ++o) f(o);
  for (int k = 0; k < t.extras; ++k) f(t.extra[k]);
}

// Input element e's gradient: the sum, in a fixed order, of the output gradient elements that read it.
template <typename Acc, typename T>
COLONY_HOST_DEVICE inline Acc pad_gather(const PadGeometry& g, const T* grad_out, int64_t e) {
  const int64_t w = e % g.w.in;
  const int64_t h = (e / g.w.in) % g.h.in;
  const int64_t d = (e / (g.w.in * g.h.in)) % g.d.in;
  const int64_t plane = e / (g.w.in * g.h.in * g.d.in);
  const T* base = grad_out + plane * g.d.out * g.h.out * g.w.out;
  const PadTargets td = pad_targets(g.mode, g.d, d), th = pad_targets(g.mode, g.h, h), tw = pad_targets(g.mode, g.w, w);
  Acc sum = Acc(0);
  for_each_target(td, [&](int64_t od) {
    for_each_target(th, [&](int64_t oh) {
      const T* row = base + (od * g.h.out + oh) * g.w.out;
      for_each_target(tw, [&](int64_t ow) { sum += static_cast<Acc>(row[ow]); });
    });
  });
  return sum;
}

// out = the padded input (any dtype: the forward copies elements).
COLONY_KERNEL(PadForward, DType dtype, const PadGeometry& g, const void* input, void* output);
// grad_input from grad_output (floating dtypes; float16 and bfloat16 summed in float32).
COLONY_KERNEL(PadBackward, DType dtype, const PadGeometry& g, const void* grad_output, void* grad_input);

}  // namespace colony::kernels
