// F::pad's reflect, replicate and circular modes on CUDA (kernels/common/pad.h): one thread per
// output element for the forward (pad_source per dim), one per input element for the backward,
// which gathers the output gradients that read it (pad_gather) instead of scatter-adding with
// atomics, as torch's CUDA kernels do: every element is written once in a fixed order, so the
// gradient has the same bits on every run.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/common/pad.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void pad_forward_kernel(PadGeometry g, const T* in, T* out) {
  COLONY_GRID_LOOP(e, g.out_elements()) {
    const int64_t ow = e % g.w.out;
    const int64_t oh = (e / g.w.out) % g.h.out;
    const int64_t od = (e / (g.w.out * g.h.out)) % g.d.out;
    const int64_t plane = e / (g.w.out * g.h.out * g.d.out);
    const int64_t sd = pad_source(g.mode, g.d, od), sh = pad_source(g.mode, g.h, oh), sw = pad_source(g.mode, g.w, ow);
    out[e] = in[((plane * g.d.in + sd) * g.h.in + sh) * g.w.in + sw];
  }
}

template <typename T>
__global__ void pad_backward_kernel(PadGeometry g, const T* grad_out, T* grad_in) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  COLONY_GRID_LOOP(e, g.in_elements()) { grad_in[e] = T(pad_gather<Acc>(g, grad_out, e)); }
}

template <typename T>
void launch_forward(const PadGeometry& g, const void* in, void* out, cudaStream_t stream) {
  const int64_t n = g.out_elements();
  pad_forward_kernel<T><<<grid_blocks(n, kThreads), kThreads, 0, stream>>>(g, static_cast<const T*>(in),
                                                                            static_cast<T*>(out));
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void PadForward::cuda(DType dtype, const PadGeometry& g, const void* input, void* output, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (g.out_elements() == 0) return;
  switch (element_size(dtype)) {
    case 1: launch_forward<uint8_t>(g, input, output, as_stream(stream)); break;
    case 2: launch_forward<uint16_t>(g, input, output, as_stream(stream)); break;
    case 4: launch_forward<uint32_t>(g, input, output, as_stream(stream)); break;
    default: launch_forward<uint64_t>(g, input, output, as_stream(stream)); break;
  }
  after_launch("pad");
}

void PadBackward::cuda(DType dtype, const PadGeometry& g, const void* grad_output, void* grad_input, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const int64_t n = g.in_elements();
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "pad backward", [&] {
    pad_backward_kernel<scalar_t><<<grid_blocks(n, kThreads), kThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(grad_output), static_cast<scalar_t*>(grad_input));
  });
  after_launch("pad backward");
}

}  // namespace colony::kernels
