// The CUDA launch geometry (kernels/common/launch_geometry.h) on the host: every .cu launch sizes
// its grid and runs its grid-stride loop through these functions, so a grid that overflows,
// launches 0 blocks or misses an element shows here without a device.
#include "kernels/common/launch_geometry.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <vector>

namespace colony::kernels {
namespace {

// Runs the grid-stride loop of a (blocks x threads) grid over n units as the device would and
// counts how often each unit is visited.
std::vector<int> visits(int64_t n, unsigned blocks, unsigned threads) {
  std::vector<int> seen(static_cast<size_t>(n), 0);
  for (unsigned b = 0; b < blocks; ++b) {
    for (unsigned t = 0; t < threads; ++t) {
      for (int64_t i = grid_stride_first(b, threads, t); i < n; i += grid_stride_step(blocks, threads)) {
        ++seen[static_cast<size_t>(i)];
      }
    }
  }
  return seen;
}

TEST(LaunchGeometry, CeilDivIsExactAndDoesNotOverflowNearInt64Max) {
  EXPECT_EQ(ceil_div(0, 256), 0);
  EXPECT_EQ(ceil_div(1, 256), 1);
  EXPECT_EQ(ceil_div(256, 256), 1);
  EXPECT_EQ(ceil_div(257, 256), 2);
  // (n + d - 1) / d would overflow here.
  EXPECT_EQ(ceil_div(INT64_MAX, 256), INT64_MAX / 256 + 1);
  EXPECT_EQ(ceil_div(INT64_MAX, 1), INT64_MAX);
}

TEST(LaunchGeometry, OddSmallShapesGetOneThreadPerElement) {
  EXPECT_EQ(grid_blocks(1), 1u);
  EXPECT_EQ(grid_blocks(255), 1u);
  EXPECT_EQ(grid_blocks(256), 1u);
  EXPECT_EQ(grid_blocks(257), 2u);
  EXPECT_EQ(grid_blocks(3 * 256 + 1), 4u);
  EXPECT_EQ(grid_blocks(1000, 32), 32u);
}

TEST(LaunchGeometry, EmptyWorkStillGivesALaunchableGrid) {
  // Launchers return early on empty work, but a 0-block grid must never be produced.
  EXPECT_EQ(grid_blocks(0), 1u);
  EXPECT_EQ(grid_blocks(-5), 1u);
  EXPECT_EQ(row_grid_blocks(0, 8), 1u);
}

TEST(LaunchGeometry, HugeShapesAreCappedAndFitInGridDimX) {
  const int64_t huge[] = {kMaxGridBlocks * kBlockThreads, kMaxGridBlocks * kBlockThreads + 1, int64_t{1} << 31,
                          (int64_t{1} << 32) + 7, int64_t{1} << 40, INT64_MAX};
  for (int64_t n : huge) {
    unsigned b = grid_blocks(n);
    EXPECT_EQ(static_cast<int64_t>(b), kMaxGridBlocks) << n;
    EXPECT_LE(static_cast<int64_t>(b), int64_t{INT32_MAX}) << n;  // gridDim.x limit
    // The loop then runs enough iterations to cover every element.
    // (In 128 bits: for n near INT64_MAX the covered range itself passes INT64_MAX.)
    const __int128 covered = static_cast<__int128>(grid_stride_iterations(n, b, kBlockThreads)) *
                             grid_stride_step(b, kBlockThreads);
    EXPECT_TRUE(covered >= n) << n;
  }
  EXPECT_EQ(grid_blocks(kMaxGridBlocks * kBlockThreads - 1), static_cast<unsigned>(kMaxGridBlocks));
  EXPECT_EQ(grid_blocks(kMaxGridBlocks * kBlockThreads - kBlockThreads), static_cast<unsigned>(kMaxGridBlocks - 1));
}

TEST(LaunchGeometry, GridStrideIndexIs64BitPastTwoTo32) {
  // With 32-bit unsigned arithmetic blockIdx.x * blockDim.x wraps at 2^24 blocks of 256.
  EXPECT_EQ(grid_stride_first(1u << 24, 256, 3), (int64_t{1} << 32) + 3);
  EXPECT_EQ(grid_stride_first(UINT32_MAX, 1024, 1023), int64_t{UINT32_MAX} * 1024 + 1023);
  EXPECT_EQ(grid_stride_step(UINT32_MAX, 1024), int64_t{UINT32_MAX} * 1024);
}

TEST(LaunchGeometry, RowsPerBlock) {
  EXPECT_EQ(row_grid_blocks(1, 8), 1u);
  EXPECT_EQ(row_grid_blocks(8, 8), 1u);
  EXPECT_EQ(row_grid_blocks(9, 8), 2u);
  EXPECT_EQ(row_grid_blocks(int64_t{1} << 40, 8), static_cast<unsigned>(kMaxGridBlocks));
  EXPECT_EQ(row_grid_blocks(100, 1), 100u);
}

TEST(LaunchGeometry, GridStrideLoopVisitsEveryElementExactlyOnce) {
  // A small cap forces the looping regime the huge shapes run in.
  const int64_t sizes[] = {1, 31, 32, 33, 255, 256, 257, 1000, 4097, 12345};
  for (int64_t cap : {int64_t{1}, int64_t{3}, int64_t{7}, kMaxGridBlocks}) {
    for (unsigned threads : {32u, 96u, 256u}) {
      for (int64_t n : sizes) {
        unsigned blocks = grid_blocks(n, threads, cap);
        ASSERT_GE(blocks, 1u);
        ASSERT_LE(static_cast<int64_t>(blocks), cap);
        std::vector<int> seen = visits(n, blocks, threads);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(seen[static_cast<size_t>(i)], 1) << "n=" << n << " cap=" << cap << " threads=" << threads << " i=" << i;
        }
        if (blocks < cap) {
          EXPECT_EQ(grid_stride_iterations(n, blocks, threads), 1) << n;
        }
      }
    }
  }
}

TEST(LaunchGeometry, FewLongRowsAreSplitOverTheDevice) {
  // A full reduction of 10^8 elements: one row, split into the target number of blocks.
  RowSplit s = split_rows(1, 100'000'000);
  EXPECT_EQ(s.splits, kReduceTargetBlocks);
  EXPECT_GE(s.chunk * s.splits, 100'000'000);
  EXPECT_LT(s.chunk * (s.splits - 1), 100'000'000);  // every block has work
  // Medium rows: as many blocks as chunks of kReduceMinChunk.
  s = split_rows(1, 5 * kReduceMinChunk);
  EXPECT_EQ(s.splits, 5);
  EXPECT_EQ(s.chunk, kReduceMinChunk);
  // Odd lengths still cover every element with no empty block.
  for (int64_t len : {2 * kReduceMinChunk, 2 * kReduceMinChunk + 1, int64_t{1234567}, int64_t{1} << 40}) {
    for (int64_t rows : {int64_t{1}, int64_t{3}, int64_t{100}}) {
      s = split_rows(rows, len);
      ASSERT_GE(s.splits, 2) << rows << " x " << len;
      EXPECT_GE(s.chunk * s.splits, len) << rows << " x " << len;
      EXPECT_LT(s.chunk * (s.splits - 1), len) << rows << " x " << len;
      EXPECT_LE(rows * s.splits, kReduceTargetBlocks + rows) << rows << " x " << len;
      EXPECT_LE(s.splits, kMaxGridBlocks);
    }
  }
}

// x.sum(0) of a tall matrix: blocks cover kColumnTile columns, so few columns mean few blocks
// unless the rows are dealt out too.
TEST(LaunchGeometry, TallColumnSumsSplitTheirRowsWhenTheColumnsAreFew) {
  RowSplit s = split_columns(1, 1'000'000, 64);  // two column tiles
  EXPECT_EQ(s.splits, ceil_div(1'000'000, kReduceMinChunk));
  EXPECT_GE(s.chunk * s.splits, 1'000'000);
  EXPECT_LT(s.chunk * (s.splits - 1), 1'000'000);
  s = split_columns(1, 100'000'000, 3);  // one tile: as many blocks as the device wants
  EXPECT_EQ(s.splits, kReduceTargetBlocks);
  // Enough column tiles fill the device alone, and short columns are not worth a second pass.
  EXPECT_EQ(split_columns(1, 1'000'000, kColumnTile * kReduceTargetBlocks).splits, 1);
  EXPECT_EQ(split_columns(kReduceTargetBlocks, 1'000'000, 5).splits, 1);
  EXPECT_EQ(split_columns(1, 1000, 64).splits, 1);
}

TEST(LaunchGeometry, ShortOrManyRowsStayOnePass) {
  EXPECT_EQ(split_rows(1, 1000).splits, 1);
  EXPECT_EQ(split_rows(1, 2 * kReduceMinChunk - 1).splits, 1);
  EXPECT_EQ(split_rows(kReduceTargetBlocks, 1'000'000).splits, 1);  // the rows fill the device
  EXPECT_EQ(split_rows(0, 1'000'000).splits, 1);
}

}  // namespace
}  // namespace colony::kernels
