// The pinned caching allocator's policy over host memory: a fake raw allocator counts calls, can
// be told to fail, and lets each test decide when a stream's copies have finished.
#include "runtime/caching_host_allocator.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cuda/capture_state.h"

namespace colony {
namespace {

struct FakeState {
  std::map<void*, size_t> live;          // raw allocations not yet freed
  int raw_allocs = 0;
  int fail_next = 0;                     // raw_alloc throws this many times
  std::map<void*, bool> events;          // live events -> completed?
  std::map<void*, Stream> event_stream;  // event -> stream it was recorded on
  std::vector<Stream> capturing;         // streams being captured into a CUDA graph
};

class FakeRaw final : public RawHostAllocator {
 public:
  explicit FakeRaw(std::shared_ptr<FakeState> s) : s_(std::move(s)) {}
  void* raw_alloc(size_t nbytes) override {
    if (s_->fail_next > 0) {
      --s_->fail_next;
      throw std::runtime_error("cudaHostAlloc: out of memory (fake)");
    }
    void* p = std::aligned_alloc(4096, nbytes);
    s_->live[p] = nbytes;
    s_->raw_allocs += 1;
    return p;
  }
  void raw_free(void* ptr) override {
    EXPECT_EQ(s_->live.erase(ptr), 1u) << "raw_free of a pointer the fake did not hand out";
    std::free(ptr);
  }
  void* record_event(const Stream& stream) override {
    void* e = new int(0);
    s_->events[e] = false;
    s_->event_stream[e] = stream;
    return e;
  }
  bool capturing(const Stream& stream) override {
    for (const Stream& s : s_->capturing)
      if (s == stream) return true;
    return false;
  }
  bool event_done(void* event) override { return s_->events.at(event); }
  void destroy_event(void* event) override {
    EXPECT_EQ(s_->events.erase(event), 1u);
    s_->event_stream.erase(event);
    delete static_cast<int*>(event);
  }

 private:
  std::shared_ptr<FakeState> s_;
};

// Stream objects are plain values: building one touches no runtime.
const Stream kCopyStream(Device::cuda(0), reinterpret_cast<void*>(0x100));
const Stream kOtherStream(Device::cuda(1), reinterpret_cast<void*>(0x200));

class CachingHostAllocatorTest : public ::testing::Test {
 protected:
  CachingHostAllocatorTest()
      : state(std::make_shared<FakeState>()), alloc(std::make_unique<CachingHostAllocator>(std::make_unique<FakeRaw>(state))) {}
  void complete_events_on(const Stream& s) {
    for (auto& [e, done] : state->events)
      if (state->event_stream.at(e) == s) done = true;
  }
  std::shared_ptr<FakeState> state;
  std::unique_ptr<CachingHostAllocator> alloc;
};

TEST_F(CachingHostAllocatorTest, SizesRoundUpToPowersOfTwoFromFourKiB) {
  void* a = alloc->allocate(1);
  void* b = alloc->allocate(5000);
  void* c = alloc->allocate(1 << 20);
  EXPECT_EQ(state->live.at(a), 4096u);
  EXPECT_EQ(state->live.at(b), 8192u);
  EXPECT_EQ(state->live.at(c), size_t(1) << 20);
  EXPECT_EQ(alloc->stats().bytes_in_use, 4096 + 8192 + (1 << 20));
  alloc->deallocate(a, 1);
  alloc->deallocate(b, 5000);
  alloc->deallocate(c, 1 << 20);
  EXPECT_EQ(alloc->stats().bytes_in_use, 0);
  EXPECT_EQ(alloc->stats().bytes_reserved, 4096 + 8192 + (1 << 20));
}

TEST_F(CachingHostAllocatorTest, AFreedBlockServesTheNextRequestOfItsSizeClass) {
  void* a = alloc->allocate(6000);
  alloc->deallocate(a, 6000);
  EXPECT_EQ(alloc->allocate(8000), a);  // same class (8 KiB): no new cudaHostAlloc
  EXPECT_EQ(state->raw_allocs, 1);
  void* other = alloc->allocate(3000);  // another class
  EXPECT_NE(other, a);
  EXPECT_EQ(state->raw_allocs, 2);
}

TEST_F(CachingHostAllocatorTest, ABlockACopyStillUsesIsNotReusedUntilTheCopyFinishes) {
  void* a = alloc->allocate(4096);
  alloc->record_use(a, kCopyStream);
  alloc->deallocate(a, 4096);
  ASSERT_EQ(state->events.size(), 1u);
  EXPECT_EQ(state->event_stream.begin()->second, kCopyStream);
  EXPECT_EQ(alloc->stats().bytes_in_use, 4096) << "still in use until the copy is done";
  void* b = alloc->allocate(4096);
  EXPECT_NE(b, a) << "reused while the copy may still read it";
  complete_events_on(kCopyStream);
  EXPECT_EQ(alloc->allocate(4096), a);
  EXPECT_TRUE(state->events.empty()) << "completed events are destroyed";
}

TEST_F(CachingHostAllocatorTest, EveryStreamThatUsedTheBlockMustFinish) {
  void* a = alloc->allocate(4096);
  alloc->record_use(a, kCopyStream);
  alloc->record_use(a, kCopyStream);  // recorded once
  alloc->record_use(a, kOtherStream);
  alloc->record_use(a, Stream());     // the CPU is synchronous: nothing to wait for
  alloc->deallocate(a, 4096);
  EXPECT_EQ(state->events.size(), 2u);
  complete_events_on(kCopyStream);
  EXPECT_NE(alloc->allocate(4096), a);
  complete_events_on(kOtherStream);
  EXPECT_EQ(alloc->allocate(4096), a);
}

TEST_F(CachingHostAllocatorTest, UsesAreForgottenOnceTheBlockIsReused) {
  void* a = alloc->allocate(4096);
  alloc->record_use(a, kCopyStream);
  alloc->deallocate(a, 4096);
  complete_events_on(kCopyStream);
  void* again = alloc->allocate(4096);
  ASSERT_EQ(again, a);
  alloc->deallocate(again, 4096);  // no use recorded this time: straight back to the free list
  EXPECT_TRUE(state->events.empty());
  EXPECT_EQ(alloc->allocate(4096), a);
}

TEST_F(CachingHostAllocatorTest, WrongPointersAreClearErrors) {
  int x = 0;
  EXPECT_THROW(alloc->record_use(&x, kCopyStream), std::invalid_argument);
  EXPECT_THROW(alloc->deallocate(&x, 4), std::invalid_argument);
  void* a = alloc->allocate(10);
  EXPECT_TRUE(alloc->owns(a));
  alloc->deallocate(a, 10);
  EXPECT_FALSE(alloc->owns(a));
  try {
    alloc->deallocate(a, 10);
    FAIL() << "a double free was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("freed already"), std::string::npos) << e.what();
  }
  EXPECT_THROW(alloc->record_use(a, kCopyStream), std::invalid_argument);
}

TEST_F(CachingHostAllocatorTest, OutOfMemoryReleasesTheCacheAndRetriesOnce) {
  void* small = alloc->allocate(4096);
  alloc->deallocate(small, 4096);
  state->fail_next = 1;
  void* big = alloc->allocate(1 << 20);
  EXPECT_NE(big, nullptr);
  EXPECT_EQ(state->live.count(small), 0u) << "the free block was not released before the retry";
  EXPECT_EQ(alloc->stats().num_raw_frees, 1);
  state->fail_next = 2;
  EXPECT_THROW(alloc->allocate(1 << 21), std::runtime_error);
  EXPECT_EQ(alloc->stats().bytes_in_use, 1 << 20);
}

TEST_F(CachingHostAllocatorTest, EmptyCacheReleasesFreeBlocksOnlyAndDestructionEverything) {
  void* a = alloc->allocate(4096);
  void* b = alloc->allocate(4096);
  void* c = alloc->allocate(4096);
  alloc->record_use(c, kCopyStream);
  alloc->deallocate(a, 4096);
  alloc->deallocate(c, 4096);
  alloc->empty_cache();
  EXPECT_EQ(state->live.count(a), 0u);
  EXPECT_EQ(state->live.count(b), 1u) << "a live block was released";
  EXPECT_EQ(state->live.count(c), 1u) << "a block a copy may still read was released";
  EXPECT_EQ(alloc->stats().bytes_reserved, 2 * 4096);
  alloc->deallocate(b, 4096);
  alloc.reset();
  EXPECT_TRUE(state->live.empty());
  EXPECT_TRUE(state->events.empty());
}

// A copy captured into a CUDA graph reads or writes its pinned block at every replay: once freed
// (inside or after the capture) the block is never handed out again, and no event is recorded on
// the capturing stream (it could never be queried).
TEST_F(CachingHostAllocatorTest, ABlockACapturedCopyUsesIsKeptForTheGraph) {
  state->capturing.push_back(kCopyStream);
  void* a = alloc->allocate(4096);
  alloc->record_use(a, kCopyStream);
  alloc->record_use(a, kOtherStream);
  alloc->deallocate(a, 4096);
  EXPECT_TRUE(state->events.empty()) << "an event was recorded on a capturing stream";
  EXPECT_FALSE(alloc->owns(a));
  EXPECT_THROW(alloc->deallocate(a, 4096), std::invalid_argument);
  state->capturing.clear();
  EXPECT_NE(alloc->allocate(4096), a) << "a block the graph replays into was reused";
  alloc->empty_cache();
  EXPECT_EQ(state->live.count(a), 1u) << "a block the graph replays into was released";
  EXPECT_EQ(alloc->stats().bytes_in_use, 2 * 4096);
}

// Releasing pinned memory (cudaFreeHost) waits for the whole device, which fails and invalidates a
// capture running on any thread: meanwhile nothing is released, not even to retry an allocation.
TEST_F(CachingHostAllocatorTest, NothingIsReleasedWhileAnyThreadCaptures) {
  void* a = alloc->allocate(4096);
  alloc->deallocate(a, 4096);
  std::mutex mu;
  std::condition_variable cv;
  bool begun = false, end = false;
  std::thread capturer([&] {
    kernels::cuda::note_capture_begin();
    {
      std::unique_lock<std::mutex> lock(mu);
      begun = true;
      cv.notify_all();
      cv.wait(lock, [&] { return end; });
    }
    kernels::cuda::note_capture_end();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return begun; });
  }
  alloc->empty_cache();
  EXPECT_EQ(state->live.count(a), 1u) << "released during another thread's capture";
  state->fail_next = 1;
  EXPECT_THROW(alloc->allocate(1 << 20), std::runtime_error);
  EXPECT_EQ(state->live.count(a), 1u) << "released to retry during another thread's capture";
  {
    std::lock_guard<std::mutex> lock(mu);
    end = true;
  }
  cv.notify_all();
  capturer.join();
  alloc->empty_cache();
  EXPECT_EQ(state->live.count(a), 0u);
}

TEST_F(CachingHostAllocatorTest, ThreadsShareTheCacheSafely) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < 500; ++i) {
        void* p = alloc->allocate(4096 << (i % 3));
        static_cast<char*>(p)[0] = static_cast<char>(t);
        if (i % 5 == 0) alloc->record_use(p, kCopyStream);
        alloc->deallocate(p, 0);
      }
    });
  }
  for (auto& th : threads) th.join();
  complete_events_on(kCopyStream);
  alloc->empty_cache();
  EXPECT_EQ(alloc->stats().bytes_in_use, 0);
  EXPECT_TRUE(state->live.empty());
}

}  // namespace
}  // namespace colony
