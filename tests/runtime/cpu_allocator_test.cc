// The CPU allocator: alignment, reuse of large freed blocks, the cache's bound and empty_cache.
// Tests share the process-wide allocator, so each starts from an emptied cache and reads
// differences of its counters.
#include "runtime/allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace colony {
namespace {

constexpr size_t kKiB = 1 << 10;
constexpr size_t kMiB = 1 << 20;

TEST(CpuAllocator, BlocksAre64ByteAlignedAndUsable) {
  Allocator* a = cpu_allocator();
  for (size_t n : {size_t(0), size_t(1), size_t(63), size_t(4097), 64 * kKiB + 1, 3 * kMiB}) {
    void* p = a->allocate(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    std::memset(p, 0xAB, n);
    a->deallocate(p, n);
  }
}

TEST(CpuAllocator, AFreedLargeBlockServesTheNextRequestOfItsSize) {
  Allocator* a = cpu_allocator();
  cpu_empty_cache();
  const AllocatorStats before = a->stats();
  void* p = a->allocate(600 * kKiB);
  a->deallocate(p, 600 * kKiB);
  EXPECT_EQ(a->stats().bytes_reserved - a->stats().bytes_in_use, int64_t(600 * kKiB));
  // A training step asks for the same sizes every iteration: no new system allocation.
  for (int step = 0; step < 10; ++step) {
    void* q = a->allocate(600 * kKiB - 100);  // the same 4 KiB-rounded size
    EXPECT_EQ(q, p) << "step " << step;
    a->deallocate(q, 600 * kKiB - 100);
  }
  const AllocatorStats after = a->stats();
  EXPECT_EQ(after.num_raw_allocs - before.num_raw_allocs, 1);
  EXPECT_EQ(after.num_allocs - before.num_allocs, 11);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
}

TEST(CpuAllocator, SmallBlocksAndOtherSizesAreNotServedFromTheCache) {
  Allocator* a = cpu_allocator();
  cpu_empty_cache();
  void* big = a->allocate(1 * kMiB);
  a->deallocate(big, 1 * kMiB);
  const int64_t raw = a->stats().num_raw_allocs;
  void* other = a->allocate(2 * kMiB);  // a different size: a fresh block
  EXPECT_NE(other, big);
  void* small = a->allocate(1000);  // below the cached range: malloc's business
  EXPECT_EQ(a->stats().num_raw_allocs - raw, 2);
  a->deallocate(other, 2 * kMiB);
  a->deallocate(small, 1000);
  cpu_empty_cache();
}

TEST(CpuAllocator, AStepOfMoreThan256MiBFindsItsBlocksAgain) {
  Allocator* a = cpu_allocator();
  cpu_empty_cache();
  const AllocatorStats before = a->stats();
  // A step that holds 40 blocks of 8 MiB (320 MiB) at once, then frees them: the footprint stays
  // within 1.25x that peak, so every block is kept and the next step allocates nothing new.
  // (Untouched, the blocks cost address space only.)
  for (int step = 0; step < 3; ++step) {
    std::vector<void*> blocks;
    for (int i = 0; i < 40; ++i) blocks.push_back(a->allocate(8 * kMiB));
    for (void* p : blocks) a->deallocate(p, 8 * kMiB);
    const AllocatorStats freed = a->stats();
    EXPECT_EQ(freed.bytes_in_use, before.bytes_in_use) << "step " << step;
    EXPECT_EQ(freed.bytes_reserved - freed.bytes_in_use, int64_t(320 * kMiB)) << "step " << step;
    EXPECT_EQ(freed.num_raw_allocs - before.num_raw_allocs, 40) << "step " << step;
    EXPECT_EQ(freed.num_raw_frees - before.num_raw_frees, 0) << "step " << step;
  }
  cpu_empty_cache();
  const AllocatorStats emptied = a->stats();
  EXPECT_EQ(emptied.bytes_reserved, emptied.bytes_in_use);
  EXPECT_EQ(emptied.num_raw_frees - before.num_raw_frees, 40);
}

TEST(CpuAllocator, TheFootprintStaysWithinItsBoundAsSizesChange) {
  Allocator* a = cpu_allocator();
  cpu_empty_cache();
  // The bound is at most 1.25x the process's peak in use plus each live block's rounding to
  // 4 KiB (one block of this test is live at a time; earlier tests' peaks are at most a few
  // hundred blocks), and at least 256 MiB.
  const AllocatorStats before = a->stats();
  const int64_t bound_at_most =
      std::max<int64_t>(256 * kMiB, (before.peak_bytes_in_use + 1024 * 4 * kKiB) * 5 / 4) + 9 * kMiB;
  // Blocks of ever new sizes, each freed before the next: every request misses the cache, so
  // without a bound the freed blocks would pile up. Enough of them to pass the bound twice.
  const int blocks = static_cast<int>(2 * bound_at_most / (8 * kMiB)) + 8;
  int64_t most_reserved = 0;
  for (int i = 0; i < blocks; ++i) {
    const size_t n = 8 * kMiB + static_cast<size_t>(i) * 4 * kKiB;
    void* p = a->allocate(n);
    a->deallocate(p, n);
    const AllocatorStats now = a->stats();
    most_reserved = std::max(most_reserved, now.bytes_reserved - before.bytes_in_use);
    ASSERT_LE(now.bytes_reserved - before.bytes_in_use, bound_at_most) << "block " << i;
  }
  // The oldest sizes went back to the system to make room for the newer ones.
  const AllocatorStats after = a->stats();
  EXPECT_GT(after.num_raw_frees - before.num_raw_frees, 0);
  EXPECT_GE(most_reserved, int64_t(256 * kMiB));  // up to the bound, not fewer
  EXPECT_EQ(after.num_raw_allocs - before.num_raw_allocs, blocks);
  // The cache is full of sizes nobody asks for now; 16 live blocks of yet other sizes (128 MiB,
  // below the peak) take their place instead of adding to them.
  std::vector<void*> live;
  for (int i = 0; i < 16; ++i) {
    live.push_back(a->allocate(8 * kMiB + static_cast<size_t>(blocks + i) * 4 * kKiB));
    ASSERT_LE(a->stats().bytes_reserved - before.bytes_in_use, bound_at_most) << "live block " << i;
  }
  for (int i = 0; i < 16; ++i) a->deallocate(live[i], 8 * kMiB + static_cast<size_t>(blocks + i) * 4 * kKiB);
  cpu_empty_cache();
  EXPECT_EQ(a->stats().bytes_reserved, a->stats().bytes_in_use);
}

TEST(CpuAllocator, ConcurrentThreadsNeverShareALiveBlock) {
  Allocator* a = cpu_allocator();
  cpu_empty_cache();
  std::vector<std::thread> threads;
  std::vector<int> errors(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([a, t, &errors] {
      for (int i = 0; i < 200; ++i) {
        const size_t n = (64 + 4 * (i % 3)) * kKiB;
        auto* p = static_cast<uint8_t*>(a->allocate(n));
        std::memset(p, t + 1, n);
        std::this_thread::yield();
        for (size_t k = 0; k < n; k += 4096) errors[t] += p[k] != t + 1;
        a->deallocate(p, n);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;
  cpu_empty_cache();
}

}  // namespace
}  // namespace colony
