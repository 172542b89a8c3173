// Grid sampling (F::grid_sample, torch.grid_sampler): each output point reads the input at the
// location its grid entry gives, in [-1, 1] coordinates, by bilinear (trilinear for 5-D),
// nearest or bicubic (tricubic for 5-D, as torch 2.15) interpolation, with zeros, border or reflection padding. The kernel
// entry points, declared once for both devices (kernel.h), defined in kernels/cpu/grid_sample.cc
// and kernels/cuda/grid_sample.cu, and all of the math both devices share: the coordinate
// functions (torch's ATen/native/GridSampler.h, in the same order of operations, so values agree
// with torch's to the last bits in the common cases) and the per-output-point taps below.
//
// Layouts (contiguous): input [N, C, in_points], grid [N, out_points, dims] (x, y[, z]: x indexes
// the width, y the height, z the depth, as torch), output [N, C, out_points]; a point is
// (z * h + y) * w + x of its spatial dims (depth 1 for 4-D inputs).
//
// A grid entry that is not finite (NaN or infinity) reads zero and gets no gradient: torch's result
// for such entries depends on its kernel (and is undefined behaviour in its scalar casts).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"
#include "kernels/common/scalar_math.h"

namespace colony::kernels {

// torch's enums' values (GridSamplerInterpolation, GridSamplerPadding).
enum class GridSampleMode : int { Bilinear = 0, Nearest = 1, Bicubic = 2 };
enum class GridSamplePadding : int { Zeros = 0, Border = 1, Reflection = 2 };

struct GridSampleGeometry {
  int64_t batch = 0, channels = 0;
  int dims = 2;                               // spatial dims: 2 (4-D input) or 3 (5-D input)
  int64_t in_d = 1, in_h = 1, in_w = 1;       // input spatial sizes (in_d = 1 when dims == 2)
  int64_t out_d = 1, out_h = 1, out_w = 1;    // grid's spatial sizes, the output's
  GridSampleMode mode = GridSampleMode::Bilinear;
  GridSamplePadding padding = GridSamplePadding::Zeros;
  bool align_corners = false;

  COLONY_HOST_DEVICE int64_t in_points() const { return in_d * in_h * in_w; }
  COLONY_HOST_DEVICE int64_t out_points() const { return out_d * out_h * out_w; }
};

// ---- coordinates (torch's GridSampler.h) ------------------------------------------------------

// [-1, 1] to a pixel coordinate: -1 and 1 are the corner pixels' centers with align_corners, the
// image's edges (-0.5 and size - 0.5) without. *grad is d result / d coord.
template <typename T>
COLONY_HOST_DEVICE inline T grid_unnormalize(T coord, int64_t size, bool align_corners, T* grad) {
  if (align_corners) {
    *grad = static_cast<T>(size - 1) / 2;
    return ((coord + 1) / 2) * static_cast<T>(size - 1);
  }
  *grad = static_cast<T>(size) / 2;
  return ((coord + 1) * static_cast<T>(size) - 1) / 2;
}

// Clipped to [0, size - 1]; the borders themselves count as outside for the gradient (torch's
// clip_coordinates_set_grad), so *grad is 0 there.
template <typename T>
COLONY_HOST_DEVICE inline T grid_clip(T in, int64_t size, T* grad) {
  if (in <= T(0)) {
    *grad = T(0);
    return T(0);
  }
  const T max = static_cast<T>(size - 1);
  if (in >= max) {
    *grad = T(0);
    return max;
  }
  *grad = T(1);
  return in;
}

// Reflected until it falls in [twice_low / 2, twice_high / 2] (the bounds are passed doubled so that
// half-integers are exact), *grad the sign the reflections leave: torch's reflect_coordinates_set_grad.
template <typename T>
COLONY_HOST_DEVICE inline T grid_reflect(T in, int64_t twice_low, int64_t twice_high, T* grad) {
  if (twice_low == twice_high) {
    *grad = T(0);
    return T(0);
  }
  const T min = static_cast<T>(twice_low) / 2;
  const T span = static_cast<T>(twice_high - twice_low) / 2;
  in = in - min;
  T sign = T(1);
  if (in < T(0)) {
    sign = T(-1);
    in = -in;
  }
  const T extra = math::fmod(in, span);
  // The parity of the number of flips, taken in T so that a huge coordinate converts nothing.
  const T flips = math::floor(in / span);
  if (math::fmod(flips, T(2)) == T(0)) {
    *grad = sign;
    return extra + min;
  }
  *grad = -sign;
  return span - extra + min;
}

// A pixel coordinate mapped into the image by the padding (border: clipped; reflection: reflected
// about the corner pixels' centers with align_corners, the image's edges without, then clipped;
// zeros: unchanged), *grad its derivative. torch's compute_coordinates, with the gradient.
template <typename T>
COLONY_HOST_DEVICE inline T grid_pad_coordinate(T coord, int64_t size, GridSamplePadding padding, bool align_corners,
                                                T* grad) {
  *grad = T(1);
  if (padding == GridSamplePadding::Border) return grid_clip(coord, size, grad);
  if (padding == GridSamplePadding::Reflection) {
    T reflect_grad, clip_grad;
    coord = align_corners ? grid_reflect(coord, 0, 2 * (size - 1), &reflect_grad)
                          : grid_reflect(coord, -1, 2 * size - 1, &reflect_grad);
    coord = grid_clip(coord, size, &clip_grad);
    *grad = reflect_grad * clip_grad;
  }
  return coord;
}

// Grid coordinate to the source coordinate bilinear and nearest read: unnormalized, then padded.
// *grad is d source / d grid coordinate (torch's grid_sampler_compute_source_index_set_grad).
template <typename T>
COLONY_HOST_DEVICE inline T grid_source_index(T coord, int64_t size, GridSamplePadding padding, bool align_corners,
                                              T* grad) {
  T unnormalize_grad, pad_grad;
  coord = grid_unnormalize(coord, size, align_corners, &unnormalize_grad);
  coord = grid_pad_coordinate(coord, size, padding, align_corners, &pad_grad);
  *grad = unnormalize_grad * pad_grad;
  return coord;
}

// Keys' cubic convolution weights at offsets -1, 0, 1, 2 from floor(x), t = x - floor(x), A = -0.75
// (torch's get_cubic_upsample_coefficients), and their derivatives d w / d t (torch's
// get_cubic_coefficients_grad computes their negatives and subtracts).
template <typename T>
COLONY_HOST_DEVICE inline void grid_cubic_weights(T t, T w[4]) {
  const T A = T(-0.75);
  T x = t + 1;  // 1 <= x < 2
  w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  x = t;  // 0 <= x < 1
  w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 1 - t;  // 0 < x <= 1
  w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t;  // 1 < x <= 2
  w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}
template <typename T>
COLONY_HOST_DEVICE inline void grid_cubic_weight_grads(T t, T d[4]) {
  const T A = T(-0.75);
  T x = -1 - t;
  d[0] = -((-3 * A * x - 10 * A) * x - 8 * A);
  x = -t;
  d[1] = -((-3 * (A + 2) * x - 2 * (A + 3)) * x);
  x = 1 - t;
  d[2] = -((3 * (A + 2) * x - 2 * (A + 3)) * x);
  x = 2 - t;
  d[3] = -((3 * A * x - 10 * A) * x + 8 * A);
}

// ---- the taps of one output point -------------------------------------------------------------

// The input positions one output point reads and their weights: output = sum over k of weight[k] *
// input[offset[k]] (offset -1: outside the image, reads zero), so the input's gradient gets
// weight[k] * grad_output at offset[k]. With kGrad, dweight[a][k] is d weight[k] / d (source
// coordinate a) (a = 0 x, 1 y, 2 z) and chain[a] is d source coordinate a / d grid coordinate a, so
// the grid's gradient along a is chain[a] * sum over k of dweight[a][k] * input[offset[k]] * grad_output.
// Taps come in torch's order (bilinear: nw, ne, sw, se; trilinear: tnw, tne, tsw, tse, bnw, bne,
// bsw, bse; bicubic: rows y - 1 .. y + 2, each x - 1 .. x + 2, tricubic those for z - 1 .. z + 2),
// so sums run as torch's do.
template <GridSampleMode kMode, int kDims>
struct GridTapCount {
  static constexpr int value =
      kMode == GridSampleMode::Nearest ? 1 : kMode == GridSampleMode::Bicubic ? (kDims == 3 ? 64 : 16) : (1 << kDims);
};

template <typename T, GridSampleMode kMode, int kDims>
struct GridTaps {
  static constexpr int kCount = GridTapCount<kMode, kDims>::value;
  int64_t offset[kCount];
  T weight[kCount];
  T dweight[kDims][kCount];
  T chain[kDims];
  COLONY_HOST_DEVICE int64_t offset_of(const GridSampleGeometry&, int k) const { return offset[k]; }
  COLONY_HOST_DEVICE T weight_of(int k) const { return weight[k]; }
  COLONY_HOST_DEVICE T dweight_of(int a, int k) const { return dweight[a][k]; }
};

COLONY_HOST_DEVICE inline int64_t grid_offset_or_outside(const GridSampleGeometry& g, int64_t z, int64_t y, int64_t x);

// Tricubic keeps its taps factored: per axis the four positions, weights and weight derivatives,
// tap k's offset and weight formed when read (the same products in the same order as the 4-D
// taps). Its 64 offsets, weights and 3 x 64 derivatives materialized did not fit a CUDA thread's
// registers: ptxas spilled 312-1780 bytes per thread in the tricubic kernels (register_spill_test).
template <typename T>
struct GridTaps<T, GridSampleMode::Bicubic, 3> {
  static constexpr int kCount = 64;
  int64_t pos[3][4];  // per axis (x, y, z), the four taps' padded positions
  T w[3][4], dw[3][4];
  T chain[3];
  COLONY_HOST_DEVICE int64_t offset_of(const GridSampleGeometry& g, int k) const {
    return grid_offset_or_outside(g, pos[2][k / 16], pos[1][(k / 4) % 4], pos[0][k % 4]);
  }
  COLONY_HOST_DEVICE T weight_of(int k) const {
    T weight = w[0][k % 4] * w[1][(k / 4) % 4];
    weight *= w[2][k / 16];
    return weight;
  }
  COLONY_HOST_DEVICE T dweight_of(int a, int k) const {
    const int i = k % 4, j = (k / 4) % 4, l = k / 16;
    if (a == 0) return dw[0][i] * w[1][j] * w[2][l];
    if (a == 1) return w[0][i] * dw[1][j] * w[2][l];
    return w[0][i] * w[1][j] * dw[2][l];
  }
};

// An integral-valued coordinate as an index; one too far out to convert (which would be undefined
// behaviour) becomes -2, outside the image like every negative index.
template <typename T>
COLONY_HOST_DEVICE inline int64_t grid_index(T v) {
  return v >= T(-2) && v <= T(int64_t(1) << 52) ? static_cast<int64_t>(v) : -2;
}

// Whether position (z, y, x) lies inside the input.
COLONY_HOST_DEVICE inline bool grid_inside(const GridSampleGeometry& g, int64_t z, int64_t y, int64_t x) {
  return z >= 0 && z < g.in_d && y >= 0 && y < g.in_h && x >= 0 && x < g.in_w;
}
COLONY_HOST_DEVICE inline int64_t grid_offset_or_outside(const GridSampleGeometry& g, int64_t z, int64_t y, int64_t x) {
  return grid_inside(g, z, y, x) ? (z * g.in_h + y) * g.in_w + x : -1;
}

// The taps of the output point whose grid entry is point[0 .. kDims) (x, y[, z]). dweight and chain
// are written only when kGrad.
template <typename T, GridSampleMode kMode, int kDims, bool kGrad>
COLONY_HOST_DEVICE inline void grid_taps(const GridSampleGeometry& g, const T* point, GridTaps<T, kMode, kDims>& taps) {
  constexpr int kCount = GridTapCount<kMode, kDims>::value;
  const int64_t sizes[3] = {g.in_w, g.in_h, g.in_d};
  bool finite = true;
  for (int a = 0; a < kDims; ++a) finite = finite && point[a] - point[a] == T(0);  // false for NaN and infinities
  if (!finite) {
    if constexpr (kMode == GridSampleMode::Bicubic && kDims == 3) {
      for (int a = 0; a < 3; ++a) {
        for (int i = 0; i < 4; ++i) {
          taps.pos[a][i] = -2;  // outside
          taps.w[a][i] = taps.dw[a][i] = T(0);
        }
      }
    } else {
      for (int k = 0; k < kCount; ++k) {
        taps.offset[k] = -1;
        taps.weight[k] = T(0);
        if (kGrad) {
          for (int a = 0; a < kDims; ++a) taps.dweight[a][k] = T(0);
        }
      }
    }
    if (kGrad) {
      for (int a = 0; a < kDims; ++a) taps.chain[a] = T(0);
    }
    return;
  }
  if constexpr (kMode == GridSampleMode::Bicubic) {
    // The source is only unnormalized: the padding applies to each tap's position instead
    // (torch's get_value_bounded), as clipping the source first would move floor(x) (x = -0.1
    // must read -1 and 0, not 0 and 1). 5-D is tricubic: the same cubic along the depth too.
    T src[kDims], floor_src[kDims], w[kDims][4], dw[kDims][4] = {};
    int64_t pos[3][4] = {};  // per axis, the four taps' padded positions
    for (int a = 0; a < kDims; ++a) {
      T unused;
      src[a] = grid_unnormalize(point[a], sizes[a], g.align_corners, kGrad ? &taps.chain[a] : &unused);
      floor_src[a] = math::floor(src[a]);
      grid_cubic_weights(src[a] - floor_src[a], w[a]);
      if (kGrad) grid_cubic_weight_grads(src[a] - floor_src[a], dw[a]);
      for (int i = 0; i < 4; ++i) {
        pos[a][i] = grid_index(grid_pad_coordinate(floor_src[a] - 1 + i, sizes[a], g.padding, g.align_corners, &unused));
      }
    }
    if constexpr (kDims == 3) {
      for (int a = 0; a < 3; ++a) {
        for (int i = 0; i < 4; ++i) {
          taps.pos[a][i] = pos[a][i];
          taps.w[a][i] = w[a][i];
          taps.dw[a][i] = dw[a][i];
        }
      }
    } else {  // bicubic: the 16 taps materialized, rows y - 1 .. y + 2, each x - 1 .. x + 2
      for (int k = 0; k < kCount; ++k) {
        const int i = k % 4, j = k / 4;
        taps.offset[k] = grid_offset_or_outside(g, 0, pos[1][j], pos[0][i]);
        taps.weight[k] = w[0][i] * w[1][j];
        if (kGrad) {
          taps.dweight[0][k] = dw[0][i] * w[1][j];
          taps.dweight[1][k] = w[0][i] * dw[1][j];
        }
      }
    }
  } else {
    T src[kDims];
    for (int a = 0; a < kDims; ++a) {
      T unused;
      src[a] = grid_source_index(point[a], sizes[a], g.padding, g.align_corners, kGrad ? &taps.chain[a] : &unused);
    }
    if constexpr (kMode == GridSampleMode::Nearest) {
      // Round half to even, as torch's std::nearbyint; the weight is a step, its derivative 0
      // (torch gives the grid a zero gradient).
      int64_t pos[3] = {0, 0, 0};
      for (int a = 0; a < kDims; ++a) pos[a] = grid_index(math::rint(src[a]));
      taps.offset[0] = grid_offset_or_outside(g, pos[2], pos[1], pos[0]);
      taps.weight[0] = T(1);
      if (kGrad) {
        for (int a = 0; a < kDims; ++a) taps.dweight[a][0] = T(0);
      }
    } else {
      // Corner c takes bit a of c as "the upper neighbour along a" (x is bit 0), which is torch's
      // order: nw, ne, sw, se (then the same in the back plane for trilinear). Its weight is the
      // product over a of (upper ? src - lo : lo + 1 - src), written as torch writes it.
      int64_t lo[kDims];
      T frac_lo[kDims], frac_hi[kDims];  // (lo + 1) - src and src - lo
      for (int a = 0; a < kDims; ++a) {
        const T f = math::floor(src[a]);
        lo[a] = grid_index(f);
        frac_lo[a] = (f + 1) - src[a];
        frac_hi[a] = src[a] - f;
      }
      for (int c = 0; c < kCount; ++c) {
        int64_t pos[3] = {0, 0, 0};
        T w = T(1);
        for (int a = 0; a < kDims; ++a) {
          const bool upper = (c >> a) & 1;
          pos[a] = lo[a] + (upper ? 1 : 0);
          w *= upper ? frac_hi[a] : frac_lo[a];
        }
        taps.offset[c] = grid_offset_or_outside(g, pos[2], pos[1], pos[0]);
        taps.weight[c] = w;
        if (kGrad) {
          for (int a = 0; a < kDims; ++a) {
            T d = ((c >> a) & 1) ? T(1) : T(-1);
            for (int b = 0; b < kDims; ++b) {
              if (b != a) d *= ((c >> b) & 1) ? frac_hi[b] : frac_lo[b];
            }
            taps.dweight[a][c] = d;
          }
        }
      }
    }
  }
}

// output[c * out_points] for every channel c of one output point: in is the batch's input, out
// points at the output point's channel-0 element.
template <typename T, GridSampleMode kMode, int kDims>
COLONY_HOST_DEVICE inline void grid_sample_point(const GridSampleGeometry& g, const GridTaps<T, kMode, kDims>& taps,
                                                 const T* in, T* out) {
  const int64_t in_points = g.in_points(), out_points = g.out_points();
  for (int64_t c = 0; c < g.channels; ++c) {
    const T* plane = in + c * in_points;
    T acc = T(0);
    for (int k = 0; k < GridTaps<T, kMode, kDims>::kCount; ++k) {
      const int64_t offset = taps.offset_of(g, k);
      if (offset >= 0) acc += taps.weight_of(k) * plane[offset];
    }
    out[c * out_points] = acc;
  }
}

// The backward of one output point: grad_input (the batch's, or null) gets add(&element, weight *
// grad_output) at every tap of every channel (a plain += on the CPU, an atomic add on CUDA);
// grad_grid (the point's entry, or null) is written whole. go points at the point's channel-0
// gradient.
template <typename T, GridSampleMode kMode, int kDims, typename Add>
COLONY_HOST_DEVICE inline void grid_sample_point_backward(const GridSampleGeometry& g,
                                                          const GridTaps<T, kMode, kDims>& taps, const T* go,
                                                          const T* in, T* grad_input, T* grad_grid, Add add) {
  constexpr int kCount = GridTaps<T, kMode, kDims>::kCount;
  const int64_t in_points = g.in_points(), out_points = g.out_points();
  T sum[kDims];
  for (int a = 0; a < kDims; ++a) sum[a] = T(0);
  for (int64_t c = 0; c < g.channels; ++c) {
    const T gout = go[c * out_points];
    if (grad_input != nullptr) {
      T* plane = grad_input + c * in_points;
      for (int k = 0; k < kCount; ++k) {
        const int64_t offset = taps.offset_of(g, k);
        if (offset >= 0) add(plane + offset, taps.weight_of(k) * gout);
      }
    }
    if (kMode != GridSampleMode::Nearest && grad_grid != nullptr) {
      const T* plane = in + c * in_points;
      for (int k = 0; k < kCount; ++k) {
        const int64_t offset = taps.offset_of(g, k);
        if (offset < 0) continue;
        const T v = plane[offset];
        for (int a = 0; a < kDims; ++a) sum[a] += v * taps.dweight_of(a, k) * gout;
      }
    }
  }
  if (grad_grid != nullptr) {
    for (int a = 0; a < kDims; ++a) grad_grid[a] = kMode == GridSampleMode::Nearest ? T(0) : taps.chain[a] * sum[a];
  }
}

// output = grid_sample(input, grid): every output element written. float32 or float64 (the
// caller widens float16/bfloat16); input, grid and output in the layouts above.
COLONY_KERNEL(GridSampleForward, DType dtype, const GridSampleGeometry& g, const void* input, const void* grid,
              void* output);

// The gradients of grid_sample given grad_output ([N, C, out_points]): grad_input (zero-filled by
// the caller, or null when not wanted) gets every tap's contribution; grad_grid (or null) every
// entry written. The CPU gives the same bits on any number of threads (each batch's grad_input is
// summed by one thread, in point order); CUDA adds grad_input with atomics, as torch's kernel,
// so its sums' order (and last bits) can vary from run to run.
COLONY_KERNEL(GridSampleBackward, DType dtype, const GridSampleGeometry& g, const void* grad_output,
              const void* input, const void* grid, void* grad_input, void* grad_grid);

}  // namespace colony::kernels
