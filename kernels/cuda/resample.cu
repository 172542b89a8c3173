// Resampling along one dim on CUDA (kernels/common/resample.h): one thread per output element for
// the forward, one per input element for the adjoint. The adjoint gathers through the readers
// table rather than scatter-adding with atomics: every gradient element is written once, by one
// thread, in a fixed order, so it needs no zero fill first and gives the same bits on every run
// (atomics would not, and float64 atomics serialize on contended addresses: a 4x downsample's taps
// overlap on every input position).
#include <cuda_runtime.h>

#include "kernels/common/dispatch.h"
#include "kernels/common/resample.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void resample_forward_kernel(const T* x, T* y, const int64_t* start, const T* weight, int64_t outer,
                                        int64_t in, int64_t out, int64_t inner, int64_t taps) {
  COLONY_GRID_LOOP(e, outer * out * inner) {
    const int64_t i = e % inner;
    const int64_t j = (e / inner) % out;
    const int64_t o = e / (inner * out);
    const T* xp = x + (o * in + start[j]) * inner + i;
    const T* w = weight + j * taps;
    T acc = w[0] * xp[0];
    for (int64_t t = 1; t < taps; ++t) acc += w[t] * xp[t * inner];
    y[e] = acc;
  }
}

template <typename T>
__global__ void resample_adjoint_kernel(const T* gy, T* gx, const int64_t* start, const int64_t* readers,
                                        const T* weight, int64_t outer, int64_t in, int64_t out, int64_t inner,
                                        int64_t taps) {
  COLONY_GRID_LOOP(e, outer * in * inner) {
    const int64_t i = e % inner;
    const int64_t p = (e / inner) % in;
    const int64_t o = e / (inner * in);
    const T* g = gy + o * out * inner + i;
    T acc = T(0);
    for (int64_t j = readers[2 * p]; j < readers[2 * p + 1]; ++j) acc += weight[j * taps + p - start[j]] * g[j * inner];
    gx[e] = acc;
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void ResampleForward::cuda(DType dtype, const void* x, void* y, const int64_t* start, const void* weight,
                           int64_t outer, int64_t in, int64_t out, int64_t inner, int64_t taps, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const int64_t n = outer * out * inner;
  if (n == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "resample", [&] {
    resample_forward_kernel<scalar_t><<<grid_blocks(n, kThreads), kThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), start, static_cast<const scalar_t*>(weight), outer,
        in, out, inner, taps);
  });
  after_launch("resample");
}

void ResampleAdjoint::cuda(DType dtype, const void* gy, void* gx, const int64_t* start, const int64_t* readers,
                           const void* weight, int64_t outer, int64_t in, int64_t out, int64_t inner, int64_t taps,
                           void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const int64_t n = outer * in * inner;
  if (n == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "resample adjoint", [&] {
    resample_adjoint_kernel<scalar_t><<<grid_blocks(n, kThreads), kThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(gy), static_cast<scalar_t*>(gx), start, readers,
        static_cast<const scalar_t*>(weight), outer, in, out, inner, taps);
  });
  after_launch("resample adjoint");
}

}  // namespace colony::kernels
