// Unfold (im2col) and fold (col2im) on the CPU (kernels/common/fold.h). Both run one image plane
// per task and a row of blocks at a time: for kernel offset (i, j) and block row by, the blocks
// inside the image along the width are one range (blocks_inside), copied with memcpy at stride 1
// and padded with zeros around it. Fold is unfold's transpose done the same way: each plane's
// rows are added into that plane's image, so planes never share an output element and no task
// races another; the order of the additions is fixed, so the result does not depend on the
// thread count.
#include "kernels/common/fold.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

// Elements a thread's chunk should at least hold, so small images stay on the calling thread.
constexpr int64_t kGrainWork = 32768;

template <typename T>
void unfold_plane(const FoldGeometry& g, const T* image, T* columns) {
  const int64_t bw = g.blocks_w;
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      T* row = columns + (i * g.kernel_w + j) * g.blocks();
      const BlockRange xr = blocks_inside(g.width, bw, j, g.stride_w, g.pad_w, g.dilation_w);
      const int64_t x0 = block_position(0, j, g.stride_w, g.pad_w, g.dilation_w);
      for (int64_t by = 0; by < g.blocks_h; ++by) {
        T* dst = row + by * bw;
        const int64_t y = block_position(by, i, g.stride_h, g.pad_h, g.dilation_h);
        if (y < 0 || y >= g.height) {
          std::fill(dst, dst + bw, T(0.0f));
          continue;
        }
        const T* src = image + y * g.width;  // src[x0 + bx * stride_w] is block bx's element
        std::fill(dst, dst + xr.lo, T(0.0f));
        if (g.stride_w == 1) {
          if (xr.hi > xr.lo) std::memcpy(dst + xr.lo, src + (x0 + xr.lo), sizeof(T) * (xr.hi - xr.lo));
        } else {
          for (int64_t bx = xr.lo; bx < xr.hi; ++bx) dst[bx] = src[x0 + bx * g.stride_w];
        }
        std::fill(dst + xr.hi, dst + bw, T(0.0f));
      }
    }
  }
}

// image += columns' contributions, in the accumulation type Acc (image_acc, one plane).
template <typename Acc, typename T>
void fold_plane(const FoldGeometry& g, const T* columns, Acc* image) {
  const int64_t bw = g.blocks_w;
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      const T* row = columns + (i * g.kernel_w + j) * g.blocks();
      const BlockRange xr = blocks_inside(g.width, bw, j, g.stride_w, g.pad_w, g.dilation_w);
      const int64_t x0 = block_position(0, j, g.stride_w, g.pad_w, g.dilation_w);
      for (int64_t by = 0; by < g.blocks_h; ++by) {
        const int64_t y = block_position(by, i, g.stride_h, g.pad_h, g.dilation_h);
        if (y < 0 || y >= g.height) continue;
        const T* src = row + by * bw;
        Acc* dst = image + y * g.width;
        if (g.stride_w == 1) {
          for (int64_t bx = xr.lo; bx < xr.hi; ++bx) dst[x0 + bx] += static_cast<Acc>(src[bx]);
        } else {
          for (int64_t bx = xr.lo; bx < xr.hi; ++bx) dst[x0 + bx * g.stride_w] += static_cast<Acc>(src[bx]);
        }
      }
    }
  }
}

template <typename T>
void unfold(const FoldGeometry& g, const T* image, T* columns) {
  const int64_t plane_in = g.height * g.width, plane_out = g.kernel_size() * g.blocks();
  const int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, plane_out));
  cpu::parallel_for(g.planes, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) unfold_plane(g, image + p * plane_in, columns + p * plane_out);
  });
}

template <typename T>
void fold(const FoldGeometry& g, const T* columns, T* image) {
  // float32 sums for float16/bfloat16 (as torch's col2im accumulates in its opmath type).
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t plane_in = g.height * g.width, plane_out = g.kernel_size() * g.blocks();
  const int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, plane_out));
  cpu::parallel_for(g.planes, grain, [&](int64_t p0, int64_t p1) {
    if constexpr (std::is_same_v<Acc, T>) {
      for (int64_t p = p0; p < p1; ++p) {
        T* out = image + p * plane_in;
        std::fill(out, out + plane_in, T(0.0f));
        fold_plane<T>(g, columns + p * plane_out, out);
      }
    } else {
      std::vector<Acc> acc(static_cast<size_t>(plane_in));
      for (int64_t p = p0; p < p1; ++p) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        fold_plane<Acc>(g, columns + p * plane_out, acc.data());
        T* out = image + p * plane_in;
        for (int64_t e = 0; e < plane_in; ++e) out[e] = T(acc[e]);
      }
    }
  });
}

}  // namespace

void UnfoldForward::cpu(DType dtype, const FoldGeometry& g, const void* image, void* columns) {
  if (g.column_elements() == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "unfold", [&] {
    unfold(g, static_cast<const scalar_t*>(image), static_cast<scalar_t*>(columns));
  });
}

void FoldForward::cpu(DType dtype, const FoldGeometry& g, const void* columns, void* image) {
  if (g.image_elements() == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "fold", [&] {
    fold(g, static_cast<const scalar_t*>(columns), static_cast<scalar_t*>(image));
  });
}

}  // namespace colony::kernels
