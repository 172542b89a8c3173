#include "kernels/cpu/conv3d.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

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

// vol2col blocks of about kBlockColumns columns (whole output rows, at least one), and at most
// kColBudget elements. The products' widths (the forward's and the input gradient's n, the weight
// gradient's depth) are the block's columns: measured on benchmarks/conv3d_bench's layers, 1 thread
// by CPU time (docs/benchmarks.md, 2026-12-07 15:00-15:45), blocks of ~512 columns took the s2
// layer's forward from 28 to 22 ms and its input gradient from 29 to 22, the s1 and C3D-conv1 input
// gradients from 48 to 45 and 63 to 53, and left the rest alike; 256 and 384 were slower on the
// input gradients and 768 on every pass (past 1024 columns the forward also leaves small_gemm.h's
// tiles). conv.cc's 2^18-element budget gave 144 columns to s2 and 3136 to C3D-conv1.
constexpr int64_t kBlockColumns = 512;
constexpr int64_t kColBudget = 1 << 20;  // 4 MiB of floats

int64_t rows_per_block(const Conv3dGeometry& g) {
  const int64_t rows = g.out_d * g.out_h;
  const int64_t by_columns = std::max<int64_t>(1, kBlockColumns / g.out_w);
  const int64_t by_budget = std::max<int64_t>(1, kColBudget / std::max<int64_t>(1, g.patch_size() * g.out_w));
  return std::min({rows, by_columns, by_budget});
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
  int64_t z = r0 / g.out_h, y = r0 % g.out_h;  // counted along, not divided out per row
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t iz = z * g.stride_d - g.pad_d + a * g.dilation_d;
    const int64_t iy = y * g.stride_h - g.pad_h + i * g.dilation_h;
    const bool valid = iz >= 0 && iz < g.in_d && iy >= 0 && iy < g.in_h;
    fn((r - r0) * g.out_w, valid ? (iz * g.in_h + iy) * g.in_w : 0, valid);
    if (++y == g.out_h) {
      y = 0;
      ++z;
    }
  }
}

// Stride-2 rows, a vector at a time (vol2col with the scalar loop took 12-18% of the s2 layer's
// forward in benchmarks/conv3d_bench under perf, docs/benchmarks.md 2026-12-07 15:00-15:45). A
// vector covers 2 * lanes input elements, the odd ones unused (read, or written back unchanged); it
// is taken only while they all lie inside the input row, src[0, readable), the rest is done an
// element at a time.
// dst[xo] = src[2 * xo] for xo in [lo, hi).
template <typename T>
void gather_stride2(const T* src, int64_t lo, int64_t hi, int64_t readable, T* dst) {
  constexpr int64_t L = simd::kLanes<T>;
  int64_t xo = lo;
  for (; xo + L <= hi && 2 * (xo + L) <= readable; xo += L) {
    simd::store(dst + xo, simd::evens(simd::load(src + 2 * xo), simd::load(src + 2 * xo + L)));
  }
  for (; xo < hi; ++xo) dst[xo] = src[2 * xo];
}

// dst[2 * xo] += src[xo] for xo in [lo, hi) (gather_stride2's adjoint).
template <typename T>
void scatter_add_stride2(const T* src, int64_t lo, int64_t hi, int64_t readable, T* dst) {
  constexpr int64_t L = simd::kLanes<T>;
  const simd::Vec<T> zero = simd::splat(T(0));
  int64_t xo = lo;
  for (; xo + L <= hi && 2 * (xo + L) <= readable; xo += L) {
    const simd::Vec<T> s = simd::load(src + xo);
    simd::store(dst + 2 * xo, simd::load(dst + 2 * xo) + simd::zip_lo(s, zero));
    simd::store(dst + 2 * xo + L, simd::load(dst + 2 * xo + L) + simd::zip_hi(s, zero));
  }
  for (; xo < hi; ++xo) dst[2 * xo] += src[xo];
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
            } else if (g.stride_w == 2) {
              gather_stride2(src, xr.lo, xr.hi, g.in_w - off_w, dst);
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

// dst[i] += src[i] for i < n (the two never overlap: a column block and the volume).
template <typename T>
void add_row(const T* __restrict src, T* __restrict dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
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
            if (g.stride_w == 1) {
              add_row(src + xr.lo, dst + xr.lo, xr.hi - xr.lo);
            } else if (g.stride_w == 2) {
              scatter_add_stride2(src, xr.lo, xr.hi, g.in_w - off_w, dst);
            } else {
              for (int64_t xo = xr.lo; xo < xr.hi; ++xo) dst[xo * g.stride_w] += src[xo];
            }
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
            // grad_w^T[K, Og] += col * grad_y[Og, cols]^T, transposed once at the end: this side of
            // the product ran at 114 GFLOP/s where grad_w[Og, K] += grad_y * col^T ran at 83
            // (benchmarks/matmul_bench --cpu-time, (864, 64, 288) abt against (64, 864, 288) abt:
            // the s1 layer of benchmarks/conv3d_bench; docs/benchmarks.md 2026-12-07 15:00-15:45).
            gemm(dt, 1, K, Og, cols, row_major(col, cols), col_major(gy_block, P), gw_part + grp * Og * K, Og, 0, 1.0,
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
  if (gw != nullptr) {
    std::vector<T> gw_t(G * Og * K);
    partial.reduce_into(gw_t.data(), 0, G * Og * K, parts);
    for (int64_t grp = 0; grp < G; ++grp) {
      for (int64_t k = 0; k < K; ++k) {
        for (int64_t o = 0; o < Og; ++o) gw[(grp * Og + o) * K + k] = gw_t[(grp * K + k) * Og + o];
      }
    }
  }
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
