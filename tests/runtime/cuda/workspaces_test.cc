// The per-stream cuBLAS workspaces (runtime/cuda/workspaces.h) over a fake allocation function.
#include "runtime/cuda/workspaces.h"

#include <gtest/gtest.h>

#include <vector>

namespace colony::kernels::cuda {
namespace {

void* const kStreamA = reinterpret_cast<void*>(0x100);
void* const kStreamB = reinterpret_cast<void*>(0x200);

// A device that has room for `free_blocks` workspaces; releasing the cache frees `released` more.
struct FakeDevice {
  int free_blocks = 0;
  int released = 0;
  int allocs = 0, releases = 0;
  char memory[8][16] = {};

  StreamWorkspaces::Alloc alloc() {
    return [this](size_t) -> void* {
      ++allocs;
      return free_blocks > 0 ? memory[--free_blocks] : nullptr;
    };
  }
  StreamWorkspaces::Release release() {
    return [this] {
      ++releases;
      free_blocks += released;
      released = 0;
    };
  }
};

// Out of memory, the null workspace used to be kept for good: that thread and stream ran without
// a workspace for the rest of the process.
TEST(StreamWorkspaces, AFailedAllocationIsNotKeptAndIsTriedAgainLater) {
  FakeDevice device;
  StreamWorkspaces ws;
  EXPECT_EQ(ws.get(kStreamA, 1024, device.alloc(), device.release()), nullptr);
  EXPECT_EQ(device.allocs, 2);  // tried, released the cache (nothing there), tried again
  EXPECT_EQ(device.releases, 1);
  device.free_blocks = 1;  // memory was freed meanwhile
  void* w = ws.get(kStreamA, 1024, device.alloc(), device.release());
  EXPECT_NE(w, nullptr);
  EXPECT_EQ(ws.get(kStreamA, 1024, device.alloc(), device.release()), w);  // kept from now on
  EXPECT_EQ(device.allocs, 3);
}

TEST(StreamWorkspaces, OutOfMemoryReleasesTheCachingAllocatorsCacheAndRetries) {
  FakeDevice device;
  device.released = 1;  // the caching allocator holds one block's worth unused
  StreamWorkspaces ws;
  void* w = ws.get(kStreamA, 1024, device.alloc(), device.release());
  EXPECT_NE(w, nullptr);
  EXPECT_EQ(device.releases, 1);
  EXPECT_EQ(device.allocs, 2);
}

TEST(StreamWorkspaces, EachStreamHasItsOwnAndAZeroSizeAllocatesNothing) {
  FakeDevice device;
  device.free_blocks = 2;
  StreamWorkspaces ws;
  void* a = ws.get(kStreamA, 1024, device.alloc(), device.release());
  void* b = ws.get(kStreamB, 1024, device.alloc(), device.release());
  EXPECT_NE(a, nullptr);
  EXPECT_NE(b, nullptr);
  EXPECT_NE(a, b);
  StreamWorkspaces none;
  EXPECT_EQ(none.get(kStreamA, 0, device.alloc(), device.release()), nullptr);  // CUBLAS_WORKSPACE_CONFIG=:0:0
  EXPECT_EQ(device.allocs, 2);
}

TEST(StreamWorkspaces, ReleasingWithoutARegisteredHookDoesNothing) {
  release_cached_memory(0);  // no caching allocator in this test binary
  set_release_cached_memory([](int) {});
  release_cached_memory(0);
  set_release_cached_memory(nullptr);
}

}  // namespace
}  // namespace colony::kernels::cuda
