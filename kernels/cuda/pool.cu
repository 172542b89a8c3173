#include "kernels/common/pool.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/common/pool_window.h"
#include "runtime/cuda/cuda_check.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

template <typename C>
__device__ __forceinline__ bool beats(C v, C best) {
  return v > best || v != v;  // a NaN always takes over, as on the CPU
}

// Output o's position (oz, oy, ox) and plane p, from its flat index.
struct OutputAt {
  int64_t p, oz, oy, ox;
};
__device__ __forceinline__ OutputAt output_at(const Pool3dGeometry& g, int64_t o) {
  const int64_t ox = o % g.out_w, oy = (o / g.out_w) % g.out_h, oz = (o / (g.out_w * g.out_h)) % g.out_d;
  return {o / g.out_volume(), oz, oy, ox};
}

// The kernels are written for volumes; the 2-D entry points run them at depth 1 (as_3d).
template <typename T>
__global__ void max_pool_forward_kernel(Pool3dGeometry g, const T* x, T* y, int64_t* idx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_volume()) {
    const OutputAt at_o = output_at(g, o);
    const T* xp = x + at_o.p * g.in_volume();
    const MaxPoolSpan sd = max_pool_span(at_o.oz, g.in_d, g.kernel_d, g.stride_d, g.pad_d, g.dilation_d);
    const MaxPoolSpan sh = max_pool_span(at_o.oy, g.in_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
    const MaxPoolSpan sw = max_pool_span(at_o.ox, g.in_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
    C best = -std::numeric_limits<C>::infinity();
    int64_t at = (sd.first * g.in_h + sh.first) * g.in_w + sw.first;
    for (int64_t iz = sd.first; iz < sd.end; iz += g.dilation_d) {
      for (int64_t ih = sh.first; ih < sh.end; ih += g.dilation_h) {
        for (int64_t iw = sw.first; iw < sw.end; iw += g.dilation_w) {
          const int64_t i = (iz * g.in_h + ih) * g.in_w + iw;
          const C v = static_cast<C>(xp[i]);
          if (beats(v, best)) {
            best = v;
            at = i;
          }
        }
      }
    }
    y[o] = static_cast<T>(best);
    idx[o] = at;
  }
}

template <typename T>
__global__ void max_pool_backward_kernel(Pool2dGeometry g, const T* gy, const int64_t* idx, T* gx) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  COLONY_GRID_LOOP(o, g.planes * plane_out) {
    const int64_t at = idx[o];
    if (at >= 0 && at < plane_in) atomic_add(gx + (o / plane_out) * plane_in + at, gy[o]);
  }
}

template <typename T>
__global__ void avg_pool_forward_kernel(Pool3dGeometry g, bool include_pad, int64_t divisor_override, const T* x,
                                        T* y) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_volume()) {
    const OutputAt at_o = output_at(g, o);
    const T* xp = x + at_o.p * g.in_volume();
    const AvgPoolWindow win = avg_pool_window(g, at_o.oz, at_o.oy, at_o.ox, include_pad, divisor_override);
    C sum = C(0);
    for (int64_t iz = win.d0; iz < win.d1; ++iz)
      for (int64_t ih = win.h0; ih < win.h1; ++ih)
        for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += static_cast<C>(xp[(iz * g.in_h + ih) * g.in_w + iw]);
    y[o] = win.empty() ? T(0.0f) : static_cast<T>(sum / static_cast<C>(win.divisor));
  }
}

// Gather form: input (iz, ih, iw) sums grad_y / divisor over the windows that contain it
// (pool_window.h's avg_first_output / avg_last_output along each dim).
template <typename T>
__global__ void avg_pool_backward_kernel(Pool3dGeometry g, bool include_pad, int64_t divisor_override, const T* gy,
                                         T* gx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(i, g.planes * g.in_volume()) {
    const int64_t iw = i % g.in_w, ih = (i / g.in_w) % g.in_h, iz = (i / (g.in_w * g.in_h)) % g.in_d;
    const int64_t p = i / g.in_volume();
    const int64_t oz0 = avg_first_output(iz, g.kernel_d, g.stride_d, g.pad_d);
    const int64_t oz1 = avg_last_output(iz, g.stride_d, g.pad_d, g.out_d);
    const int64_t oy0 = avg_first_output(ih, g.kernel_h, g.stride_h, g.pad_h);
    const int64_t oy1 = avg_last_output(ih, g.stride_h, g.pad_h, g.out_h);
    const int64_t ox0 = avg_first_output(iw, g.kernel_w, g.stride_w, g.pad_w);
    const int64_t ox1 = avg_last_output(iw, g.stride_w, g.pad_w, g.out_w);
    const T* gyp = gy + p * g.out_volume();
    C sum = C(0);
    for (int64_t oz = oz0; oz <= oz1; ++oz) {
      for (int64_t oy = oy0; oy <= oy1; ++oy) {
        for (int64_t ox = ox0; ox <= ox1; ++ox) {
          const AvgPoolWindow win = avg_pool_window(g, oz, oy, ox, include_pad, divisor_override);
          if (iz < win.d0 || iz >= win.d1 || ih < win.h0 || ih >= win.h1 || iw < win.w0 || iw >= win.w1) continue;
          sum += static_cast<C>(gyp[(oz * g.out_h + oy) * g.out_w + ox]) / static_cast<C>(win.divisor);
        }
      }
    }
    gx[i] = static_cast<T>(sum);
  }
}

template <typename T>
__global__ void adaptive_forward_kernel(Pool3dGeometry g, const T* x, T* y) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_volume()) {
    const OutputAt at_o = output_at(g, o);
    const T* xp = x + at_o.p * g.in_volume();
    const int64_t d0 = adaptive_start(at_o.oz, g.in_d, g.out_d), d1 = adaptive_end(at_o.oz, g.in_d, g.out_d);
    const int64_t h0 = adaptive_start(at_o.oy, g.in_h, g.out_h), h1 = adaptive_end(at_o.oy, g.in_h, g.out_h);
    const int64_t w0 = adaptive_start(at_o.ox, g.in_w, g.out_w), w1 = adaptive_end(at_o.ox, g.in_w, g.out_w);
    C sum = C(0);
    for (int64_t iz = d0; iz < d1; ++iz)
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) sum += static_cast<C>(xp[(iz * g.in_h + ih) * g.in_w + iw]);
    y[o] = static_cast<T>(sum / static_cast<C>((d1 - d0) * (h1 - h0) * (w1 - w0)));
  }
}

template <typename T>
__global__ void adaptive_backward_kernel(Pool3dGeometry g, const T* gy, T* gx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(i, g.planes * g.in_volume()) {
    const int64_t iw = i % g.in_w, ih = (i / g.in_w) % g.in_h, iz = (i / (g.in_w * g.in_h)) % g.in_d;
    const T* gyp = gy + (i / g.in_volume()) * g.out_volume();
    C sum = C(0);
    const int64_t oz1 = adaptive_last_output(iz, g.in_d, g.out_d);
    const int64_t oy1 = adaptive_last_output(ih, g.in_h, g.out_h), ox1 = adaptive_last_output(iw, g.in_w, g.out_w);
    for (int64_t oz = adaptive_first_output(iz, g.in_d, g.out_d); oz <= oz1; ++oz) {
      const int64_t depths = adaptive_end(oz, g.in_d, g.out_d) - adaptive_start(oz, g.in_d, g.out_d);
      for (int64_t oy = adaptive_first_output(ih, g.in_h, g.out_h); oy <= oy1; ++oy) {
        const int64_t rows = adaptive_end(oy, g.in_h, g.out_h) - adaptive_start(oy, g.in_h, g.out_h);
        for (int64_t ox = adaptive_first_output(iw, g.in_w, g.out_w); ox <= ox1; ++ox) {
          const int64_t cols = adaptive_end(ox, g.in_w, g.out_w) - adaptive_start(ox, g.in_w, g.out_w);
          sum += static_cast<C>(gyp[(oz * g.out_h + oy) * g.out_w + ox]) / static_cast<C>(depths * rows * cols);
        }
      }
    }
    gx[i] = static_cast<T>(sum);
  }
}

// The maximum over [z0, z1) x [h0, h1) x [w0, w1) of plane xp, with max pooling's tie rule.
template <typename T, typename C = compute_t<T>>
__device__ __forceinline__ void window_max(const Pool3dGeometry& g, const T* xp, int64_t z0, int64_t z1, int64_t h0,
                                           int64_t h1, int64_t w0, int64_t w1, C& best, int64_t& at) {
  best = -std::numeric_limits<C>::infinity();
  at = (z0 * g.in_h + h0) * g.in_w + w0;
  for (int64_t iz = z0; iz < z1; ++iz) {
    for (int64_t ih = h0; ih < h1; ++ih) {
      for (int64_t iw = w0; iw < w1; ++iw) {
        const int64_t i = (iz * g.in_h + ih) * g.in_w + iw;
        const C v = static_cast<C>(xp[i]);
        if (beats(v, best)) {
          best = v;
          at = i;
        }
      }
    }
  }
}

template <typename T>
__global__ void adaptive_max_forward_kernel(Pool3dGeometry g, const T* x, T* y, int64_t* idx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_volume()) {
    const OutputAt at_o = output_at(g, o);
    C best;
    int64_t at;
    window_max(g, x + at_o.p * g.in_volume(), adaptive_start(at_o.oz, g.in_d, g.out_d),
               adaptive_end(at_o.oz, g.in_d, g.out_d), adaptive_start(at_o.oy, g.in_h, g.out_h),
               adaptive_end(at_o.oy, g.in_h, g.out_h), adaptive_start(at_o.ox, g.in_w, g.out_w),
               adaptive_end(at_o.ox, g.in_w, g.out_w), best, at);
    y[o] = static_cast<T>(best);
    idx[o] = at;
  }
}

template <typename T>
__global__ void fractional_max_forward_kernel(Pool3dGeometry g, int sample_dims, const T* samples, const T* x, T* y,
                                              int64_t* idx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_volume()) {
    const OutputAt at_o = output_at(g, o);
    const T* s = samples + at_o.p * sample_dims;
    const C sd = sample_dims == 3 ? static_cast<C>(s[0]) : C(0), sh = static_cast<C>(s[1]);
    const C sw = static_cast<C>(s[sample_dims == 3 ? 2 : 0]);
    const int64_t z0 = fractional_start(sd, at_o.oz, g.in_d, g.out_d, g.kernel_d);
    const int64_t h0 = fractional_start(sh, at_o.oy, g.in_h, g.out_h, g.kernel_h);
    const int64_t w0 = fractional_start(sw, at_o.ox, g.in_w, g.out_w, g.kernel_w);
    C best;
    int64_t at;
    window_max(g, x + at_o.p * g.in_volume(), z0, z0 + g.kernel_d, h0, h0 + g.kernel_h, w0, w0 + g.kernel_w, best,
               at);
    y[o] = static_cast<T>(best);
    idx[o] = at;
  }
}

// One launch per entry point, over `n` threads' worth of elements.
#define COLONY_POOL_LAUNCH(name, kernel, n, ...)                                                       \
  COLONY_DISPATCH_FLOATING(dtype, name, [&] {                                                         \
    kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(__VA_ARGS__);            \
  });                                                                                                  \
  after_launch(name)

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void MaxPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices,
                            void* stream) {
  MaxPool3dForward::cuda(dtype, as_3d(g), x, y, indices, stream);
}

void MaxPool2dBackward::cuda(DType dtype, const Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                             void* grad_x, void* stream) {
  check_cuda(cudaMemsetAsync(grad_x, 0, g.planes * g.in_h * g.in_w * element_size(dtype), as_stream(stream)),
             "max_pool2d_backward: cudaMemsetAsync");
  COLONY_POOL_LAUNCH("max_pool2d_backward", max_pool_backward_kernel, g.planes * g.out_h * g.out_w, g,
                     static_cast<const scalar_t*>(grad_y), indices, static_cast<scalar_t*>(grad_x));
}

void AvgPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                            const void* x, void* y, void* stream) {
  AvgPool3dForward::cuda(dtype, as_3d(g), count_include_pad, divisor_override, x, y, stream);
}

void AvgPool2dBackward::cuda(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                             const void* grad_y, void* grad_x, void* stream) {
  AvgPool3dBackward::cuda(dtype, as_3d(g), count_include_pad, divisor_override, grad_y, grad_x, stream);
}

void AdaptiveAvgPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, const void* x, void* y, void* stream) {
  AdaptiveAvgPool3dForward::cuda(dtype, as_3d(g), x, y, stream);
}

void AdaptiveAvgPool2dBackward::cuda(DType dtype, const Pool2dGeometry& g, const void* grad_y, void* grad_x,
                                     void* stream) {
  AdaptiveAvgPool3dBackward::cuda(dtype, as_3d(g), grad_y, grad_x, stream);
}

void AdaptiveMaxPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices,
                                    void* stream) {
  AdaptiveMaxPool3dForward::cuda(dtype, as_3d(g), x, y, indices, stream);
}

void MaxPool3dForward::cuda(DType dtype, const Pool3dGeometry& g, const void* x, void* y, int64_t* indices,
                            void* stream) {
  COLONY_POOL_LAUNCH("max_pool3d", max_pool_forward_kernel, g.planes * g.out_volume(), g,
                     static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), indices);
}

void AvgPool3dForward::cuda(DType dtype, const Pool3dGeometry& g, bool count_include_pad, int64_t divisor_override,
                            const void* x, void* y, void* stream) {
  COLONY_POOL_LAUNCH("avg_pool3d", avg_pool_forward_kernel, g.planes * g.out_volume(), g, count_include_pad,
                     divisor_override, static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y));
}

void AvgPool3dBackward::cuda(DType dtype, const Pool3dGeometry& g, bool count_include_pad, int64_t divisor_override,
                             const void* grad_y, void* grad_x, void* stream) {
  COLONY_POOL_LAUNCH("avg_pool3d_backward", avg_pool_backward_kernel, g.planes * g.in_volume(), g, count_include_pad,
                     divisor_override, static_cast<const scalar_t*>(grad_y), static_cast<scalar_t*>(grad_x));
}

void AdaptiveAvgPool3dForward::cuda(DType dtype, const Pool3dGeometry& g, const void* x, void* y, void* stream) {
  COLONY_POOL_LAUNCH("adaptive_avg_pool3d", adaptive_forward_kernel, g.planes * g.out_volume(), g,
                     static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y));
}

void AdaptiveAvgPool3dBackward::cuda(DType dtype, const Pool3dGeometry& g, const void* grad_y, void* grad_x,
                                     void* stream) {
  COLONY_POOL_LAUNCH("adaptive_avg_pool3d_backward", adaptive_backward_kernel, g.planes * g.in_volume(), g,
                     static_cast<const scalar_t*>(grad_y), static_cast<scalar_t*>(grad_x));
}

void AdaptiveMaxPool3dForward::cuda(DType dtype, const Pool3dGeometry& g, const void* x, void* y, int64_t* indices,
                                    void* stream) {
  COLONY_POOL_LAUNCH("adaptive_max_pool3d", adaptive_max_forward_kernel, g.planes * g.out_volume(), g,
                     static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), indices);
}

void FractionalMaxPoolForward::cuda(DType dtype, const Pool3dGeometry& g, int sample_dims, const void* samples,
                                    const void* x, void* y, int64_t* indices, void* stream) {
  COLONY_POOL_LAUNCH("fractional_max_pool", fractional_max_forward_kernel, g.planes * g.out_volume(), g, sample_dims,
                     static_cast<const scalar_t*>(samples), static_cast<const scalar_t*>(x),
                     static_cast<scalar_t*>(y), indices);
}

}  // namespace colony::kernels
