#include "kernels/cpu/conv3d.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cpu/conv_parts.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/simd.h"

namespace colony::kernels::cpu {
namespace {

using conv_parts::col_major;
using conv_parts::for_each_part;
using conv_parts::PartialGrads;
using conv_parts::row_major;
using conv_parts::valid_outputs;
using conv_parts::ValidRange;

struct Conv3dScratch;
template <typename T>
T* scratch(size_t n) {
  return thread_scratch<Conv3dScratch, T, 0>(n);
}

// vol2col blocks of at most this many elements (1 MiB of floats, as conv.cc's im2col): an output
// band at a time, so the block stays in L2 while the product reads it.
constexpr int64_t kColBudget = 1 << 18;

int64_t rows_per_block(const Conv3dGeometry& g) {
  const int64_t rows = g.out_d * g.out_h;
  return std::max<int64_t>(1, std::min<int64_t>(rows, kColBudget / std::max<int64_t>(1, g.patch_size() * g.out_w)));
}

int64_t choose_parts(const Conv3dGeometry& g) {
  return conv_parts::choose_parts(g.batch,
                                  static_cast<double>(g.batch) * g.out_channels * g.out_volume() * g.patch_size());
}

// Calls fn(row, dst_offset, src_offset, valid) for every output row r in [r0, r1) (r = z * Ho + y)
// of kernel tap (a, i) whose input row lies inside the volume: the row's columns start at
// (r - r0) * Wo in the block and at input offset (iz * H + iy) * W; rows outside are passed with
// valid = false (zeros in vol2col, nothing in col2vol).
template <typename F>
void for_each_row(const Conv3dGeometry& g, int64_t a, int64_t i, int64_t r0, int64_t r1, const F& fn) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t z = r / g.out_h, y = r % g.out_h;
    const int64_t iz = z * g.stride_d - g.pad_d + a * g.dilation_d;
    const int64_t iy = y * g.stride_h - g.pad_h + i * g.dilation_h;
    const bool valid = iz >= 0 && iz < g.in_d && iy >= 0 && iy < g.in_h;
    fn((r - r0) * g.out_w, valid ? (iz * g.in_h + iy) * g.in_w : 0, valid);
  }
}

// col[((c * kD + a) * kH + i) * kW + j][(r - r0) * Wo + x] = volume[c][iz][iy][x * sw - pw + j * dw]
// for output rows [r0, r1) of one group's channels, zero outside the volume.
template <typename T>
void vol2col(const T* volume, const Conv3dGeometry& g, int64_t r0, int64_t r1, T* col) {
  const int64_t Wo = g.out_w, cols = (r1 - r0) * Wo, V = g.in_volume();
  int64_t k = 0;
  for (int64_t c = 0; c < g.group_in_channels(); ++c) {
    for (int64_t a = 0; a < g.kernel_d; ++a) {
      for (int64_t i = 0; i < g.kernel_h; ++i) {
        for (int64_t j = 0; j < g.kernel_w; ++j, ++k) {
          T* row = col + k * cols;
          const int64_t off_w = j * g.dilation_w - g.pad_w;
          const ValidRange xr = valid_outputs(g.in_w, Wo, g.stride_w, off_w);
          for_each_row(g, a, i, r0, r1, [&](int64_t dst_off, int64_t src_off, bool valid) {
            T* dst = row + dst_off;
            if (!valid) {
              std::fill(dst, dst + Wo, T(0));
              return;
            }
            const T* src = volume + c * V + src_off + off_w;
            std::fill(dst, dst + xr.lo, T(0));
            if (g.stride_w == 1) {
              std::memcpy(dst + xr.lo, src + xr.lo, sizeof(T) * (xr.hi - xr.lo));
            } else {
              for (int64_t xo = xr.lo; xo < xr.hi; ++xo) dst[xo] = src[xo * g.stride_w];
            }
            std::fill(dst + xr.hi, dst + Wo, T(0));
          });
        }
      }
    }
  }
}

// volume[c][...] += col[...]: vol2col's adjoint, for the input gradient.
template <typename T>
void col2vol(const T* col, const Conv3dGeometry& g, int64_t r0, int64_t r1, T* volume) {
  const int64_t Wo = g.out_w, cols = (r1 - r0) * Wo, V = g.in_volume();
  int64_t k = 0;
  for (int64_t c = 0; c < g.group_in_channels(); ++c) {
    for (int64_t a = 0; a < g.kernel_d; ++a) {
      for (int64_t i = 0; i < g.kernel_h; ++i) {
        for (int64_t j = 0; j < g.kernel_w; ++j, ++k) {
          const T* row = col + k * cols;
          const int64_t off_w = j * g.dilation_w - g.pad_w;
          const ValidRange xr = valid_outputs(g.in_w, Wo, g.stride_w, off_w);
          for_each_row(g, a, i, r0, r1, [&](int64_t src_off, int64_t dst_off, bool valid) {
            if (!valid) return;
            const T* src = row + src_off;
            T* dst = volume + c * V + dst_off + off_w;
            for (int64_t xo = xr.lo; xo < xr.hi; ++xo) dst[xo * g.stride_w] += src[xo];
          });
        }
      }
    }
  }
}

template <typename T>
void forward(const Conv3dGeometry& g, const T* x, const T* w, const T* bias, T* y) {
  const DType dt = dtype_of<T>::value;
  const int64_t C = g.in_channels, V = g.in_volume(), O = g.out_channels;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t P = g.out_volume(), rows = rows_per_block(g), all_rows = g.out_d * g.out_h;
  for_each_part(g.batch, choose_parts(g), [&](int64_t, int64_t n0, int64_t n1) {
    T* col = scratch<T>(K * rows * g.out_w);
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* volume = x + (n * C + grp * Cg) * V;
        T* out = y + (n * O + grp * Og) * P;
        for (int64_t r0 = 0; r0 < all_rows; r0 += rows) {
          const int64_t r1 = std::min(all_rows, r0 + rows), cols = (r1 - r0) * g.out_w;
          vol2col(volume, g, r0, r1, col);
          gemm(dt, 1, Og, cols, K, row_major(w + grp * Og * K, K), row_major(col, cols), out + r0 * g.out_w, P, 0,
               1.0, 0.0);
        }
        if (bias != nullptr) {
          for (int64_t o = 0; o < Og; ++o) {
            const T b = bias[grp * Og + o];
            for (int64_t i = 0; i < P; ++i) out[o * P + i] += b;
          }
        }
      }
    }
  });
}

template <typename T>
void backward(const Conv3dGeometry& g, const T* gy, const T* x, const T* w, T* gx, T* gw, T* gb) {
  const DType dt = dtype_of<T>::value;
  const int64_t C = g.in_channels, V = g.in_volume(), O = g.out_channels, G = g.groups;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t P = g.out_volume(), rows = rows_per_block(g), all_rows = g.out_d * g.out_h;
  const int64_t parts = choose_parts(g);
  const int64_t gb_offset = gw != nullptr ? G * Og * K : 0;
  PartialGrads<T> partial(parts, gb_offset + (gb != nullptr ? O : 0));
  for_each_part(g.batch, parts, [&](int64_t part, int64_t n0, int64_t n1) {
    T* gw_part = partial.part(part);
    T* gb_part = partial.part(part) + gb_offset;
    T* col = scratch<T>(K * rows * g.out_w);
    for (int64_t n = n0; n < n1; ++n) {
      if (gx != nullptr) std::fill(gx + n * C * V, gx + (n + 1) * C * V, T(0));
      for (int64_t grp = 0; grp < G; ++grp) {
        const T* gy_planes = gy + (n * O + grp * Og) * P;
        for (int64_t r0 = 0; r0 < all_rows; r0 += rows) {
          const int64_t r1 = std::min(all_rows, r0 + rows), cols = (r1 - r0) * g.out_w;
          const T* gy_block = gy_planes + r0 * g.out_w;
          if (gw != nullptr) {
            vol2col(x + (n * C + grp * Cg) * V, g, r0, r1, col);
            // grad_w[Og, K] += grad_y[Og, cols] * col^T
            gemm(dt, 1, Og, K, cols, row_major(gy_block, P), col_major(col, cols), gw_part + grp * Og * K, K, 0, 1.0,
                 1.0);
          }
          if (gx != nullptr) {
            // col[K, cols] = w^T * grad_y, then scattered back to the volume
            gemm(dt, 1, K, cols, Og, col_major(w + grp * Og * K, K), row_major(gy_block, P), col, cols, 0, 1.0, 0.0);
            col2vol(col, g, r0, r1, gx + (n * C + grp * Cg) * V);
          }
        }
        if (gb != nullptr) {
          for (int64_t o = 0; o < Og; ++o) gb_part[grp * Og + o] += simd::sum(gy_planes + o * P, P);
        }
      }
    }
  });
  if (gw != nullptr) partial.reduce_into(gw, 0, G * Og * K, parts);
  if (gb != nullptr) partial.reduce_into(gb, gb_offset, O, parts);
}

[[noreturn]] void bad_dtype(const char* op, DType dtype) {
  throw std::invalid_argument(std::string(op) + ": CPU 3-D convolution supports float32 and float64, got " +
                              dtype_name(dtype));
}

}  // namespace

void conv3d_forward(DType dtype, const Conv3dGeometry& g, const void* x, const void* w, const void* bias, void* y) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    forward<T>(g, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias), static_cast<T*>(y));
  };
  switch (dtype) {
    case DType::Float32: run(float{}); return;
    case DType::Float64: run(double{}); return;
    default: bad_dtype("conv3d", dtype);
  }
}

void conv3d_backward(DType dtype, const Conv3dGeometry& g, const void* grad_y, const void* x, const void* w,
                     void* grad_x, void* grad_w, void* grad_b) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* gw = static_cast<T*>(grad_w);
    T* gb = static_cast<T*>(grad_b);
    if (g.batch == 0) {
      if (gw != nullptr) std::fill(gw, gw + g.out_channels * g.patch_size(), T(0));
      if (gb != nullptr) std::fill(gb, gb + g.out_channels, T(0));
      return;
    }
    backward<T>(g, static_cast<const T*>(grad_y), static_cast<const T*>(x), static_cast<const T*>(w),
                static_cast<T*>(grad_x), gw, gb);
  };
  switch (dtype) {
    case DType::Float32: run(float{}); return;
    case DType::Float64: run(double{}); return;
    default: bad_dtype("conv3d_backward", dtype);
  }
}

}  // namespace colony::kernels::cpu
