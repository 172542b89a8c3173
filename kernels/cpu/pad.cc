// F::pad's reflect, replicate and circular modes on the CPU (kernels/common/pad.h). The forward
// copies one output row per step: the columns whose source is their own position minus lo are one
// memcpy, the few around them read through a table of sources built once per call. The backward
// gathers per input row with the targets of each column built once, so a task writes only its own
// rows and the sums' order does not depend on the thread count.
#include "kernels/common/pad.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/common/half.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

using cpu::parallel_for;

// Elements a thread's chunk should at least hold, so small tensors stay on the calling thread.
constexpr int64_t kGrainWork = 32768;

// Output columns [begin, end) whose source is o - lo (the run the forward copies whole).
struct Run {
  int64_t begin, end;
};
Run direct_run(const PadGeometry& g) {
  const PadDim& w = g.w;
  int64_t lo_src = 0, hi_src = w.in;  // the sources o - lo may take
  if (g.mode == PadMode::Circular) {
    lo_src = w.core_start;
    hi_src = w.core_start + w.core;
  }
  const int64_t begin = std::max<int64_t>(lo_src + w.lo, 0), end = std::min<int64_t>(hi_src + w.lo, w.out);
  return {begin, std::max(begin, end)};
}

// T: an unsigned integer of the element's size (the forward moves bits).
template <typename T>
void forward(const PadGeometry& g, const T* in, T* out) {
  std::vector<int64_t> src_w(g.w.out);
  for (int64_t o = 0; o < g.w.out; ++o) src_w[o] = pad_source(g.mode, g.w, o);
  const Run run = direct_run(g);
  const int64_t rows = g.planes * g.d.out * g.h.out;
  parallel_for(rows, std::max<int64_t>(1, kGrainWork / std::max<int64_t>(g.w.out, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t oh = r % g.h.out, od = (r / g.h.out) % g.d.out, plane = r / (g.h.out * g.d.out);
      const int64_t sd = pad_source(g.mode, g.d, od), sh = pad_source(g.mode, g.h, oh);
      const T* src = in + ((plane * g.d.in + sd) * g.h.in + sh) * g.w.in;
      T* dst = out + r * g.w.out;
      for (int64_t o = 0; o < run.begin; ++o) dst[o] = src[src_w[o]];
      if (run.end > run.begin) std::memcpy(dst + run.begin, src + (run.begin - g.w.lo), sizeof(T) * (run.end - run.begin));
      for (int64_t o = run.end; o < g.w.out; ++o) dst[o] = src[src_w[o]];
    }
  });
}

template <typename T>
void backward(const PadGeometry& g, const T* grad_out, T* grad_in) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  std::vector<PadTargets> tw(g.w.in);
  for (int64_t i = 0; i < g.w.in; ++i) tw[i] = pad_targets(g.mode, g.w, i);
  const int64_t rows = g.planes * g.d.in * g.h.in;
  parallel_for(rows, std::max<int64_t>(1, kGrainWork / std::max<int64_t>(g.w.in, 1)), [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(g.w.in);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t h = r % g.h.in, d = (r / g.h.in) % g.d.in, plane = r / (g.h.in * g.d.in);
      const T* base = grad_out + plane * g.d.out * g.h.out * g.w.out;
      std::fill(acc.begin(), acc.end(), Acc(0));
      for_each_target(pad_targets(g.mode, g.d, d), [&](int64_t od) {
        for_each_target(pad_targets(g.mode, g.h, h), [&](int64_t oh) {
          const T* row = base + (od * g.h.out + oh) * g.w.out;
          for (int64_t i = 0; i < g.w.in; ++i) {
            for_each_target(tw[i], [&](int64_t ow) { acc[i] += static_cast<Acc>(row[ow]); });
          }
        });
      });
      T* dst = grad_in + r * g.w.in;
      for (int64_t i = 0; i < g.w.in; ++i) dst[i] = static_cast<T>(acc[i]);
    }
  });
}

}  // namespace

void PadForward::cpu(DType dtype, const PadGeometry& g, const void* input, void* output) {
  if (g.out_elements() == 0) return;
  switch (element_size(dtype)) {
    case 1: return forward(g, static_cast<const uint8_t*>(input), static_cast<uint8_t*>(output));
    case 2: return forward(g, static_cast<const uint16_t*>(input), static_cast<uint16_t*>(output));
    case 4: return forward(g, static_cast<const uint32_t*>(input), static_cast<uint32_t*>(output));
    default: return forward(g, static_cast<const uint64_t*>(input), static_cast<uint64_t*>(output));
  }
}

void PadBackward::cpu(DType dtype, const PadGeometry& g, const void* grad_output, void* grad_input) {
  if (g.in_elements() == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "pad backward", [&] {
    backward(g, static_cast<const scalar_t*>(grad_output), static_cast<scalar_t*>(grad_input));
  });
}

}  // namespace colony::kernels
