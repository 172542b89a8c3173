// Launch geometry of every CUDA kernel: how many blocks a launch over n elements gets, and where
// a grid-stride loop starts and steps. Plain constexpr C++ (no CUDA headers), so host tests check
// the sizing for huge and odd shapes and the .cu files use the very same functions.
#pragma once

#include <cstdint>

#include "kernels/common/macros.h"

namespace colony::kernels {

// Threads per block of the 1-D kernels: 8 resident blocks fill an H100/H200 SM (2048 threads),
// and 256 keeps registers per thread at up to 255/thread x 256 = 64K, one SM's register file.
constexpr int kBlockThreads = 256;

// The one grid cap of every 1-D launch. An H200 holds 132 SMs x 8 blocks of 256 threads = 1056
// blocks at once; 65536 blocks (16.7M threads) keep any current GPU busy many waves over, while
// larger tensors loop (grid-stride), so each thread does >= 1 element and index math stays cheap.
// Far below the hardware limit of gridDim.x (2^31 - 1).
constexpr int64_t kMaxGridBlocks = int64_t{1} << 16;

// gridDim.y and gridDim.z are limited to 65535 by the hardware.
constexpr int64_t kMaxGridY = 65535;

// ceil(n / d) for n >= 0, d > 0, without the overflow of (n + d - 1) / d near INT64_MAX.
COLONY_INLINE constexpr int64_t ceil_div(int64_t n, int64_t d) { return n / d + (n % d != 0 ? 1 : 0); }

// Blocks of `threads` threads for `units` independent work units (elements, rows, ...): one unit
// per thread up to `cap` blocks, grid-stride beyond. Never 0 (a 0-block launch is a CUDA error),
// so callers return early on empty work; negative counts are treated as empty.
COLONY_INLINE constexpr unsigned grid_blocks(int64_t units, int64_t threads = kBlockThreads,
                                             int64_t cap = kMaxGridBlocks) {
  if (units <= 0) return 1u;
  const int64_t b = ceil_div(units, threads);
  return static_cast<unsigned>(b < cap ? b : cap);
}

// Blocks for `rows` rows where each block owns `rows_per_block` rows at a time (8 with a warp per
// row and 256 threads, 1 with a block per row).
COLONY_INLINE constexpr unsigned row_grid_blocks(int64_t rows, int64_t rows_per_block, int64_t cap = kMaxGridBlocks) {
  return grid_blocks(rows, rows_per_block, cap);
}

// The grid-stride loop's first index and step for thread `thread` of block `block`, in 64 bits:
// blockIdx.x * blockDim.x in 32-bit unsigned arithmetic would wrap from 2^24 blocks of 256 on.
COLONY_INLINE constexpr int64_t grid_stride_first(unsigned block, unsigned threads, unsigned thread) {
  return static_cast<int64_t>(block) * static_cast<int64_t>(threads) + static_cast<int64_t>(thread);
}
COLONY_INLINE constexpr int64_t grid_stride_step(unsigned blocks, unsigned threads) {
  return static_cast<int64_t>(blocks) * static_cast<int64_t>(threads);
}

// Iterations the busiest thread of a grid-stride loop runs: the work per thread a launch implies.
COLONY_INLINE constexpr int64_t grid_stride_iterations(int64_t units, unsigned blocks, unsigned threads) {
  return units <= 0 ? 0 : ceil_div(units, grid_stride_step(blocks, threads));
}

// ---- splitting long rows over many blocks (two-pass reductions) -------------------------------

// Blocks a reduction wants in flight to fill the device: 132 SMs x 8 resident blocks on an H200.
constexpr int64_t kReduceTargetBlocks = 1024;
// Fewest elements one block of a split row sums: below ~16K (64 per thread) the second pass and
// the partials' round trip cost more than the extra blocks win.
constexpr int64_t kReduceMinChunk = 16384;

struct RowSplit {
  int64_t splits = 1;  // blocks per row in the first pass; 1: no split, one pass
  int64_t chunk = 0;   // elements per block (the last one may get fewer)
};

// How a reduction of `rows` rows of `len` elements splits each row so that few long rows (a full
// reduction is one row) still occupy the whole device: pass 1 writes rows x splits partials,
// pass 2 reduces each row's partials. Many rows, or short ones, already fill it: no split.
COLONY_INLINE constexpr RowSplit split_rows(int64_t rows, int64_t len) {
  RowSplit s;
  if (rows <= 0 || len < 2 * kReduceMinChunk || rows * 2 > kReduceTargetBlocks) return s;
  const int64_t by_size = ceil_div(len, kReduceMinChunk);
  const int64_t by_device = ceil_div(kReduceTargetBlocks, rows);
  s.splits = by_size < by_device ? by_size : by_device;
  if (s.splits < 2) {
    s.splits = 1;
    return s;
  }
  s.chunk = ceil_div(len, s.splits);
  s.splits = ceil_div(len, s.chunk);  // no empty block at the end
  return s;
}

// Columns one block of a column sum covers (one warp wide: its reads coalesce).
constexpr int64_t kColumnTile = 32;

// How a column sum of [outer, len, inner] (x.sum(0) of a tall matrix) splits `len`: a block
// covers kColumnTile columns of one slab, and when those tiles are too few to fill the device,
// each tile's rows are dealt to several blocks, as split_rows deals a long row; a second column
// sum adds their partial sums.
COLONY_INLINE constexpr RowSplit split_columns(int64_t outer, int64_t len, int64_t inner) {
  return split_rows(outer * ceil_div(inner, kColumnTile), len);
}

}  // namespace colony::kernels
