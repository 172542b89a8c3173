// Unfold (im2col) and fold (col2im) of F::unfold / F::fold (nn/functional_fold.cc): sliding
// blocks of an image copied out into columns, and columns summed back into an image. The kernel
// entry points, declared once for both devices (kernel.h), defined in kernels/cpu/fold.cc and
// kernels/cuda/fold.cu, and the index math both devices share.
//
// Layouts (contiguous): the image is [planes, height, width] (planes = batch * channels), the
// columns [planes, kernel_h * kernel_w, blocks_h * blocks_w], which is torch's [N, C * kh * kw, L]:
// row (c, i, j) of batch n is plane n * C + c, kernel offset i * kernel_w + j. Block (by, bx)
// reads image row by * stride_h - pad_h + i * dilation_h and column bx * stride_w - pad_w +
// j * dilation_w; positions outside the image read zero (unfold) and are dropped (fold).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

struct FoldGeometry {
  int64_t planes = 1, height = 1, width = 1;
  int64_t kernel_h = 1, kernel_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  int64_t blocks_h = 1, blocks_w = 1;

  COLONY_HOST_DEVICE int64_t kernel_size() const { return kernel_h * kernel_w; }
  COLONY_HOST_DEVICE int64_t blocks() const { return blocks_h * blocks_w; }
  COLONY_HOST_DEVICE int64_t column_elements() const { return planes * kernel_size() * blocks(); }
  COLONY_HOST_DEVICE int64_t image_elements() const { return planes * height * width; }
};

// The image position (row or column) that block b reads at kernel offset k along one dim.
COLONY_HOST_DEVICE inline int64_t block_position(int64_t b, int64_t k, int64_t stride, int64_t pad,
                                                 int64_t dilation) {
  return b * stride - pad + k * dilation;
}

// The blocks [lo, hi) along one dim whose position at kernel offset k lies in [0, size): the
// range a row of the CPU kernels copies or adds in one go.
struct BlockRange {
  int64_t lo, hi;
};
COLONY_HOST_DEVICE inline BlockRange blocks_inside(int64_t size, int64_t blocks, int64_t k, int64_t stride,
                                                   int64_t pad, int64_t dilation) {
  const int64_t offset = k * dilation - pad;  // the position of block 0
  const int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t hi = size - 1 - offset >= 0 ? (size - 1 - offset) / stride + 1 : 0;
  if (hi > blocks) hi = blocks;
  return {lo < hi ? lo : hi, hi};
}

// Column element e (any e < column_elements()): the image element it copies, or -1 for padding.
COLONY_HOST_DEVICE inline int64_t unfold_source(const FoldGeometry& g, int64_t e) {
  const int64_t bx = e % g.blocks_w;
  const int64_t by = (e / g.blocks_w) % g.blocks_h;
  const int64_t k = (e / g.blocks()) % g.kernel_size();
  const int64_t plane = e / (g.blocks() * g.kernel_size());
  const int64_t y = block_position(by, k / g.kernel_w, g.stride_h, g.pad_h, g.dilation_h);
  const int64_t x = block_position(bx, k % g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  if (y < 0 || y >= g.height || x < 0 || x >= g.width) return -1;
  return (plane * g.height + y) * g.width + x;
}

// Image element e (any e < image_elements()) of fold: the sum of every column element that reads
// it, gathered (kernel offsets in order), so each image element is written by one thread without
// atomics and the result does not depend on the thread count. Acc is the accumulation type.
template <typename Acc, typename T>
COLONY_HOST_DEVICE inline Acc fold_gather(const FoldGeometry& g, const T* columns, int64_t e) {
  const int64_t x = e % g.width;
  const int64_t y = (e / g.width) % g.height;
  const int64_t plane = e / (g.width * g.height);
  const T* base = columns + plane * g.kernel_size() * g.blocks();
  Acc sum = Acc(0);
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    const int64_t ty = y + g.pad_h - i * g.dilation_h;  // by * stride_h when block by reads row y
    if (ty < 0 || ty % g.stride_h != 0) continue;
    const int64_t by = ty / g.stride_h;
    if (by >= g.blocks_h) continue;
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      const int64_t tx = x + g.pad_w - j * g.dilation_w;
      if (tx < 0 || tx % g.stride_w != 0) continue;
      const int64_t bx = tx / g.stride_w;
      if (bx >= g.blocks_w) continue;
      sum += static_cast<Acc>(base[((i * g.kernel_w + j) * g.blocks_h + by) * g.blocks_w + bx]);
    }
  }
  return sum;
}

// columns = im2col(image): every column element written (zero where the block reads padding).
// Floating dtypes.
COLONY_KERNEL(UnfoldForward, DType dtype, const FoldGeometry& g, const void* image, void* columns);

// image = col2im(columns): every image element written (zero where no block reads it), the sum of
// the column elements that read it, in float32 for float16/bfloat16. Unfold's adjoint: each is
// the other's gradient. Floating dtypes.
COLONY_KERNEL(FoldForward, DType dtype, const FoldGeometry& g, const void* columns, void* image);

}  // namespace colony::kernels
