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

__device__ __forceinline__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

template <typename C>
__device__ __forceinline__ bool beats(C v, C best) {
  return v > best || v != v;  // a NaN always takes over, as on the CPU
}

template <typename T>
__global__ void max_pool_forward_kernel(Pool2dGeometry g, const T* x, T* y, int64_t* idx) {
  using C = compute_t<T>;
  const int64_t total = g.planes * g.out_h * g.out_w;
  COLONY_GRID_LOOP(o, total) {
    const int64_t ox = o % g.out_w, oy = (o / g.out_w) % g.out_h, p = o / (g.out_w * g.out_h);
    const T* xp = x + p * g.in_h * g.in_w;
    int64_t h0 = oy * g.stride_h - g.pad_h;
    const int64_t h1 = imin(h0 + (g.kernel_h - 1) * g.dilation_h + 1, g.in_h);
    while (h0 < 0) h0 += g.dilation_h;
    int64_t w0 = ox * g.stride_w - g.pad_w;
    const int64_t w1 = imin(w0 + (g.kernel_w - 1) * g.dilation_w + 1, g.in_w);
    while (w0 < 0) w0 += g.dilation_w;
    C best = -std::numeric_limits<C>::infinity();
    int64_t at = h0 * g.in_w + w0;
    for (int64_t ih = h0; ih < h1; ih += g.dilation_h) {
      for (int64_t iw = w0; iw < w1; iw += g.dilation_w) {
        const C v = static_cast<C>(xp[ih * g.in_w + iw]);
        if (beats(v, best)) {
          best = v;
          at = ih * g.in_w + iw;
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
__global__ void avg_pool_forward_kernel(Pool2dGeometry g, bool include_pad, int64_t divisor_override, const T* x,
                                        T* y) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_h * g.out_w) {
    const int64_t ox = o % g.out_w, oy = (o / g.out_w) % g.out_h, p = o / (g.out_w * g.out_h);
    const T* xp = x + p * g.in_h * g.in_w;
    const AvgPoolWindow win = avg_pool_window(g, oy, ox, include_pad, divisor_override);
    C sum = C(0);
    for (int64_t ih = win.h0; ih < win.h1; ++ih)
      for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += static_cast<C>(xp[ih * g.in_w + iw]);
    y[o] = win.h0 < win.h1 && win.w0 < win.w1 ? static_cast<T>(sum / static_cast<C>(win.divisor)) : T(0.0f);
  }
}

// Gather form: input (ih, iw) sums grad_y / divisor over the windows that contain it. Window oy
// starts at oy * stride - pad, so it covers ih for oy in [ceil((ih + pad - k + 1) / stride),
// floor((ih + pad) / stride)].
template <typename T>
__global__ void avg_pool_backward_kernel(Pool2dGeometry g, bool include_pad, int64_t divisor_override, const T* gy,
                                         T* gx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(i, g.planes * g.in_h * g.in_w) {
    const int64_t iw = i % g.in_w, ih = (i / g.in_w) % g.in_h, p = i / (g.in_w * g.in_h);
    const int64_t th = ih + g.pad_h, tw = iw + g.pad_w;
    const int64_t oy0 = th - g.kernel_h + 1 > 0 ? (th - g.kernel_h + 1 + g.stride_h - 1) / g.stride_h : 0;
    const int64_t oy1 = imin(th / g.stride_h, g.out_h - 1);
    const int64_t ox0 = tw - g.kernel_w + 1 > 0 ? (tw - g.kernel_w + 1 + g.stride_w - 1) / g.stride_w : 0;
    const int64_t ox1 = imin(tw / g.stride_w, g.out_w - 1);
    const T* gyp = gy + p * g.out_h * g.out_w;
    C sum = C(0);
    for (int64_t oy = oy0; oy <= oy1; ++oy) {
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const AvgPoolWindow win = avg_pool_window(g, oy, ox, include_pad, divisor_override);
        if (ih < win.h0 || ih >= win.h1 || iw < win.w0 || iw >= win.w1) continue;
        sum += static_cast<C>(gyp[oy * g.out_w + ox]) / static_cast<C>(win.divisor);
      }
    }
    gx[i] = static_cast<T>(sum);
  }
}

template <typename T>
__global__ void adaptive_forward_kernel(Pool2dGeometry g, const T* x, T* y) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_h * g.out_w) {
    const int64_t ox = o % g.out_w, oy = (o / g.out_w) % g.out_h, p = o / (g.out_w * g.out_h);
    const T* xp = x + p * g.in_h * g.in_w;
    const int64_t h0 = adaptive_start(oy, g.in_h, g.out_h), h1 = adaptive_end(oy, g.in_h, g.out_h);
    const int64_t w0 = adaptive_start(ox, g.in_w, g.out_w), w1 = adaptive_end(ox, g.in_w, g.out_w);
    C sum = C(0);
    for (int64_t ih = h0; ih < h1; ++ih)
      for (int64_t iw = w0; iw < w1; ++iw) sum += static_cast<C>(xp[ih * g.in_w + iw]);
    y[o] = static_cast<T>(sum / static_cast<C>((h1 - h0) * (w1 - w0)));
  }
}

template <typename T>
__global__ void adaptive_backward_kernel(Pool2dGeometry g, const T* gy, T* gx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(i, g.planes * g.in_h * g.in_w) {
    const int64_t iw = i % g.in_w, ih = (i / g.in_w) % g.in_h, p = i / (g.in_w * g.in_h);
    const T* gyp = gy + p * g.out_h * g.out_w;
    C sum = C(0);
    const int64_t oy1 = adaptive_last_output(ih, g.in_h, g.out_h), ox1 = adaptive_last_output(iw, g.in_w, g.out_w);
    for (int64_t oy = adaptive_first_output(ih, g.in_h, g.out_h); oy <= oy1; ++oy) {
      const int64_t rows = adaptive_end(oy, g.in_h, g.out_h) - adaptive_start(oy, g.in_h, g.out_h);
      for (int64_t ox = adaptive_first_output(iw, g.in_w, g.out_w); ox <= ox1; ++ox) {
        const int64_t cols = adaptive_end(ox, g.in_w, g.out_w) - adaptive_start(ox, g.in_w, g.out_w);
        sum += static_cast<C>(gyp[oy * g.out_w + ox]) / static_cast<C>(rows * cols);
      }
    }
    gx[i] = static_cast<T>(sum);
  }
}

template <typename T>
__global__ void adaptive_max_forward_kernel(Pool2dGeometry g, const T* x, T* y, int64_t* idx) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(o, g.planes * g.out_h * g.out_w) {
    const int64_t ox = o % g.out_w, oy = (o / g.out_w) % g.out_h, p = o / (g.out_w * g.out_h);
    const T* xp = x + p * g.in_h * g.in_w;
    const int64_t h0 = adaptive_start(oy, g.in_h, g.out_h), h1 = adaptive_end(oy, g.in_h, g.out_h);
    const int64_t w0 = adaptive_start(ox, g.in_w, g.out_w), w1 = adaptive_end(ox, g.in_w, g.out_w);
    C best = -std::numeric_limits<C>::infinity();
    int64_t at = h0 * g.in_w + w0;
    for (int64_t ih = h0; ih < h1; ++ih) {
      for (int64_t iw = w0; iw < w1; ++iw) {
        const C v = static_cast<C>(xp[ih * g.in_w + iw]);
        if (beats(v, best)) {
          best = v;
          at = ih * g.in_w + iw;
        }
      }
    }
    y[o] = static_cast<T>(best);
    idx[o] = at;
  }
}

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void MaxPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices,
                            void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "max_pool2d", [&] {
    max_pool_forward_kernel<scalar_t><<<grid_blocks(g.planes * g.out_h * g.out_w), kBlockThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), indices);
  });
  after_launch("max_pool2d");
}

void MaxPool2dBackward::cuda(DType dtype, const Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                             void* grad_x, void* stream) {
  check_cuda(cudaMemsetAsync(grad_x, 0, g.planes * g.in_h * g.in_w * element_size(dtype), as_stream(stream)),
             "max_pool2d_backward: cudaMemsetAsync");
  COLONY_DISPATCH_FLOATING(dtype, "max_pool2d_backward", [&] {
    max_pool_backward_kernel<scalar_t><<<grid_blocks(g.planes * g.out_h * g.out_w), kBlockThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(grad_y), indices, static_cast<scalar_t*>(grad_x));
  });
  after_launch("max_pool2d_backward");
}

void AvgPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                            const void* x, void* y, void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "avg_pool2d", [&] {
    avg_pool_forward_kernel<scalar_t><<<grid_blocks(g.planes * g.out_h * g.out_w), kBlockThreads, 0, as_stream(stream)>>>(
        g, count_include_pad, divisor_override, static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y));
  });
  after_launch("avg_pool2d");
}

void AvgPool2dBackward::cuda(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                             const void* grad_y, void* grad_x, void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "avg_pool2d_backward", [&] {
    avg_pool_backward_kernel<scalar_t><<<grid_blocks(g.planes * g.in_h * g.in_w), kBlockThreads, 0, as_stream(stream)>>>(
        g, count_include_pad, divisor_override, static_cast<const scalar_t*>(grad_y), static_cast<scalar_t*>(grad_x));
  });
  after_launch("avg_pool2d_backward");
}

void AdaptiveAvgPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, const void* x, void* y, void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "adaptive_avg_pool2d", [&] {
    adaptive_forward_kernel<scalar_t><<<grid_blocks(g.planes * g.out_h * g.out_w), kBlockThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y));
  });
  after_launch("adaptive_avg_pool2d");
}

void AdaptiveAvgPool2dBackward::cuda(DType dtype, const Pool2dGeometry& g, const void* grad_y, void* grad_x,
                                     void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "adaptive_avg_pool2d_backward", [&] {
    adaptive_backward_kernel<scalar_t><<<grid_blocks(g.planes * g.in_h * g.in_w), kBlockThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(grad_y), static_cast<scalar_t*>(grad_x));
  });
  after_launch("adaptive_avg_pool2d_backward");
}

void AdaptiveMaxPool2dForward::cuda(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices,
                                    void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "adaptive_max_pool2d", [&] {
    adaptive_max_forward_kernel<scalar_t><<<grid_blocks(g.planes * g.out_h * g.out_w), kBlockThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), indices);
  });
  after_launch("adaptive_max_pool2d");
}

}  // namespace colony::kernels
