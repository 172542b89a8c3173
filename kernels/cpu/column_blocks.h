// The walk the CPU scans share (cumsum.cc, scan.cc): a contiguous [outer, dim, inner] array is cut
// into blocks of up to kScanWidth adjacent columns, each scanned row by row by one thread, so every
// read and write along the axis touches consecutive memory even when the axis is not the last one.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {

// Columns per block: the width cumsum.cc has used since it was written (a running accumulator per
// column lives in a stack array of this size).
constexpr int64_t kScanWidth = 256;

// Calls fn(base, w) for every block, in parallel: `base` is the offset of the block's first
// element in row 0 of its outer slice, `w` (<= kScanWidth) its number of columns; the element of
// row r, column j is at base + r * inner + j. About 16384 elements per task, as the other CPU
// kernels' grain.
template <typename F>
void for_each_column_block(int64_t outer, int64_t dim, int64_t inner, F&& fn) {
  const int64_t width = std::min(inner, kScanWidth);
  const int64_t blocks = width == 0 ? 0 : (inner + width - 1) / width;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, dim * width));
  parallel_for(outer * blocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t o = task / blocks, c0 = (task % blocks) * width;
      fn(o * dim * inner + c0, std::min(width, inner - c0));
    }
  });
}

}  // namespace colony::kernels::cpu
