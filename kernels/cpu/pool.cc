#include "kernels/cpu/pool.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/common/pool_window.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

// Planes per chunk: enough elements (~32K) that a chunk outweighs waking a pool thread.
int64_t plane_grain(int64_t plane_elements) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, plane_elements)); }

template <typename T>
inline bool beats(T v, T best) {
  return v > best || v != v;  // a NaN always takes over
}

// The 2 x 2, stride 2 window of LeNet and most CNNs, without the general loop's bookkeeping.
template <typename T>
void max_pool_2x2(const Pool2dGeometry& g, const T* x, T* y, int64_t* idx) {
  const int64_t W = g.in_w, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(g.in_h * W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * g.in_h * W;
      T* yp = y + p * Ho * Wo;
      int64_t* ip = idx + p * Ho * Wo;
      for (int64_t oy = 0; oy < Ho; ++oy) {
        const T* r0 = xp + 2 * oy * W;
        const T* r1 = r0 + W;
        for (int64_t ox = 0; ox < Wo; ++ox) {
          T best = r0[2 * ox];
          int64_t at = 0;
          if (beats(r0[2 * ox + 1], best)) best = r0[2 * ox + 1], at = 1;
          if (beats(r1[2 * ox], best)) best = r1[2 * ox], at = W;
          if (beats(r1[2 * ox + 1], best)) best = r1[2 * ox + 1], at = W + 1;
          yp[oy * Wo + ox] = best;
          ip[oy * Wo + ox] = 2 * oy * W + 2 * ox + at;
        }
      }
    }
  });
}

template <typename T>
void max_pool_forward(const Pool2dGeometry& g, const T* x, T* y, int64_t* idx) {
  if (g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 && g.stride_w == 2 && g.pad_h == 0 && g.pad_w == 0 &&
      g.dilation_h == 1 && g.dilation_w == 1 && 2 * g.out_h <= g.in_h && 2 * g.out_w <= g.in_w) {
    max_pool_2x2(g, x, y, idx);
    return;
  }
  const int64_t H = g.in_h, W = g.in_w, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(H * W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * H * W;
      for (int64_t oy = 0; oy < Ho; ++oy) {
        int64_t h0 = oy * g.stride_h - g.pad_h;
        const int64_t h1 = std::min(h0 + (g.kernel_h - 1) * g.dilation_h + 1, H);
        while (h0 < 0) h0 += g.dilation_h;
        for (int64_t ox = 0; ox < Wo; ++ox) {
          int64_t w0 = ox * g.stride_w - g.pad_w;
          const int64_t w1 = std::min(w0 + (g.kernel_w - 1) * g.dilation_w + 1, W);
          while (w0 < 0) w0 += g.dilation_w;
          T best = -std::numeric_limits<T>::infinity();
          int64_t at = h0 * W + w0;
          for (int64_t ih = h0; ih < h1; ih += g.dilation_h) {
            for (int64_t iw = w0; iw < w1; iw += g.dilation_w) {
              const T v = xp[ih * W + iw];
              if (beats(v, best)) best = v, at = ih * W + iw;
            }
          }
          const int64_t o = (p * Ho + oy) * Wo + ox;
          y[o] = best;
          idx[o] = at;
        }
      }
    }
  });
}

template <typename T>
void max_pool_backward(const Pool2dGeometry& g, const T* gy, const int64_t* idx, T* gx) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  parallel_for(g.planes, plane_grain(plane_in), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T* gxp = gx + p * plane_in;
      std::fill(gxp, gxp + plane_in, T(0));
      for (int64_t o = p * plane_out; o < (p + 1) * plane_out; ++o) {
        const int64_t at = idx[o];
        if (at < 0 || at >= plane_in) {
          throw std::out_of_range("max_pool2d_backward: index " + std::to_string(at) + " at output element " +
                                  std::to_string(o) + " is outside its input plane of " +
                                  std::to_string(g.in_h) + " x " + std::to_string(g.in_w) + " elements");
        }
        gxp[at] += gy[o];
      }
    }
  });
}

template <typename T>
void avg_pool_forward(const Pool2dGeometry& g, bool include_pad, int64_t divisor_override, const T* x, T* y) {
  const int64_t H = g.in_h, W = g.in_w, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(H * W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * H * W;
      for (int64_t oy = 0; oy < Ho; ++oy) {
        for (int64_t ox = 0; ox < Wo; ++ox) {
          const AvgPoolWindow win = avg_pool_window(g, oy, ox, include_pad, divisor_override);
          T sum = T(0);
          for (int64_t ih = win.h0; ih < win.h1; ++ih)
            for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += xp[ih * W + iw];
          // An empty window (only possible in the padding) averages to 0, as in PyTorch.
          y[(p * Ho + oy) * Wo + ox] = win.h0 < win.h1 && win.w0 < win.w1 ? sum / static_cast<T>(win.divisor) : T(0);
        }
      }
    }
  });
}

template <typename T>
void avg_pool_backward(const Pool2dGeometry& g, bool include_pad, int64_t divisor_override, const T* gy, T* gx) {
  const int64_t H = g.in_h, W = g.in_w, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(H * W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T* gxp = gx + p * H * W;
      std::fill(gxp, gxp + H * W, T(0));
      for (int64_t oy = 0; oy < Ho; ++oy) {
        for (int64_t ox = 0; ox < Wo; ++ox) {
          const AvgPoolWindow win = avg_pool_window(g, oy, ox, include_pad, divisor_override);
          const T share = gy[(p * Ho + oy) * Wo + ox] / static_cast<T>(win.divisor);
          for (int64_t ih = win.h0; ih < win.h1; ++ih)
            for (int64_t iw = win.w0; iw < win.w1; ++iw) gxp[ih * W + iw] += share;
        }
      }
    }
  });
}

template <typename T>
void adaptive_forward(const Pool2dGeometry& g, const T* x, T* y) {
  const int64_t H = g.in_h, W = g.in_w, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(H * W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * H * W;
      for (int64_t oy = 0; oy < Ho; ++oy) {
        const int64_t h0 = adaptive_start(oy, H, Ho), h1 = adaptive_end(oy, H, Ho);
        for (int64_t ox = 0; ox < Wo; ++ox) {
          const int64_t w0 = adaptive_start(ox, W, Wo), w1 = adaptive_end(ox, W, Wo);
          T sum = T(0);
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += xp[ih * W + iw];
          y[(p * Ho + oy) * Wo + ox] = sum / static_cast<T>((h1 - h0) * (w1 - w0));
        }
      }
    }
  });
}

template <typename T>
void adaptive_backward(const Pool2dGeometry& g, const T* gy, T* gx) {
  const int64_t H = g.in_h, W = g.in_w, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(H * W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T* gxp = gx + p * H * W;
      std::fill(gxp, gxp + H * W, T(0));
      for (int64_t oy = 0; oy < Ho; ++oy) {
        const int64_t h0 = adaptive_start(oy, H, Ho), h1 = adaptive_end(oy, H, Ho);
        for (int64_t ox = 0; ox < Wo; ++ox) {
          const int64_t w0 = adaptive_start(ox, W, Wo), w1 = adaptive_end(ox, W, Wo);
          const T share = gy[(p * Ho + oy) * Wo + ox] / static_cast<T>((h1 - h0) * (w1 - w0));
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) gxp[ih * W + iw] += share;
        }
      }
    }
  });
}

template <typename F>
void dispatch(DType dtype, const char* op, const F& fn) {
  switch (dtype) {
    case DType::Float32: fn(float{}); return;
    case DType::Float64: fn(double{}); return;
    default:
      throw std::invalid_argument(std::string(op) + ": CPU pooling supports float32 and float64, got " +
                                  dtype_name(dtype));
  }
}

}  // namespace

void max_pool2d_forward(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices) {
  dispatch(dtype, "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    max_pool_forward<T>(g, static_cast<const T*>(x), static_cast<T*>(y), indices);
  });
}

void max_pool2d_backward(DType dtype, const Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                         void* grad_x) {
  dispatch(dtype, "max_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    max_pool_backward<T>(g, static_cast<const T*>(grad_y), indices, static_cast<T*>(grad_x));
  });
}

void avg_pool2d_forward(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                        const void* x, void* y) {
  dispatch(dtype, "avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    avg_pool_forward<T>(g, count_include_pad, divisor_override, static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void avg_pool2d_backward(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                         const void* grad_y, void* grad_x) {
  dispatch(dtype, "avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    avg_pool_backward<T>(g, count_include_pad, divisor_override, static_cast<const T*>(grad_y),
                         static_cast<T*>(grad_x));
  });
}

void adaptive_avg_pool2d_forward(DType dtype, const Pool2dGeometry& g, const void* x, void* y) {
  dispatch(dtype, "adaptive_avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    adaptive_forward<T>(g, static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void adaptive_avg_pool2d_backward(DType dtype, const Pool2dGeometry& g, const void* grad_y, void* grad_x) {
  dispatch(dtype, "adaptive_avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    adaptive_backward<T>(g, static_cast<const T*>(grad_y), static_cast<T*>(grad_x));
  });
}

}  // namespace colony::kernels::cpu
