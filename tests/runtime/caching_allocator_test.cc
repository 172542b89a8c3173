// The caching allocator's policy, run over host memory: a fake raw allocator counts calls, can be
// told to fail, and lets each test decide when an event has completed.
#include "runtime/caching_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ops/raw_ops.h"
#include "tensor/storage.h"
#include "runtime/stream.h"
#include "tensor/tensor.h"

namespace colony {
namespace {

constexpr size_t kKiB = 1 << 10;
constexpr size_t kMiB = 1 << 20;

// Shared between the fake (owned by the allocator) and the test, so the test can also look after
// the allocator is gone.
struct FakeState {
  std::map<void*, size_t> live;         // raw allocations not yet freed
  std::vector<size_t> alloc_sizes;      // every successful raw_alloc, in order
  int fail_next = 0;                    // raw_alloc returns nullptr this many times
  int failed = 0;
  std::map<void*, bool> events;         // live events -> completed?
  std::map<void*, void*> event_stream;  // event -> stream it was recorded on
  void* stream = reinterpret_cast<void*>(0x100);  // what current_stream() answers
  std::map<void*, uint64_t> capturing;  // stream -> id of the graph capture it belongs to
  int capture_queries = 0;
};

class FakeRaw final : public RawDeviceAllocator {
 public:
  explicit FakeRaw(std::shared_ptr<FakeState> s) : s_(std::move(s)) {}
  ~FakeRaw() override {
    for (auto& [e, done] : s_->events) delete static_cast<int*>(e);
  }
  void* raw_alloc(size_t nbytes) override {
    if (s_->fail_next > 0) {
      --s_->fail_next;
      ++s_->failed;
      return nullptr;
    }
    void* p = std::aligned_alloc(512, nbytes);
    s_->live[p] = nbytes;
    s_->alloc_sizes.push_back(nbytes);
    return p;
  }
  void raw_free(void* ptr) override {
    EXPECT_EQ(s_->live.count(ptr), 1u) << "raw_free of a pointer the fake did not hand out";
    s_->live.erase(ptr);
    std::free(ptr);
  }
  void* record_event(void* stream) override {
    void* e = new int(0);
    s_->events[e] = false;
    s_->event_stream[e] = stream;
    return e;
  }
  bool event_done(void* event) override { return s_->events.at(event); }
  void destroy_event(void* event) override {
    EXPECT_EQ(s_->events.erase(event), 1u);
    s_->event_stream.erase(event);
    delete static_cast<int*>(event);
  }
  void* current_stream() override { return s_->stream; }
  Device device() const override { return Device::cuda(0); }
  uint64_t capture_id(void* stream) override {
    ++s_->capture_queries;
    auto it = s_->capturing.find(stream);
    return it == s_->capturing.end() ? 0 : it->second;
  }

 private:
  std::shared_ptr<FakeState> s_;
};

void* const kStreamA = reinterpret_cast<void*>(0x100);
void* const kStreamB = reinterpret_cast<void*>(0x200);

class CachingAllocatorTest : public ::testing::Test {
 protected:
  CachingAllocatorTest()
      : state(std::make_shared<FakeState>()),
        alloc(std::make_unique<CachingAllocator>(std::make_unique<FakeRaw>(state))) {}

  char* allocate(size_t n) { return static_cast<char*>(alloc->allocate(n)); }
  void deallocate(void* p) { alloc->deallocate(p, 0); }
  int64_t raw_allocs() const { return alloc->stats().num_raw_allocs; }

  std::shared_ptr<FakeState> state;
  std::unique_ptr<CachingAllocator> alloc;
};

TEST_F(CachingAllocatorTest, FreedBlockIsReusedWithoutRawAlloc) {
  char* p = allocate(1000);
  deallocate(p);
  char* q = allocate(1000);
  EXPECT_EQ(q, p);
  EXPECT_EQ(raw_allocs(), 1);
  EXPECT_EQ(state->live.size(), 1u);
  EXPECT_EQ(alloc->device(), Device::cuda(0));
}

TEST_F(CachingAllocatorTest, SizesRoundUpTo512) {
  char* a = allocate(1);
  EXPECT_EQ(alloc->stats().bytes_in_use, 512);
  char* b = allocate(513);
  EXPECT_EQ(alloc->stats().bytes_in_use, 512 + 1024);
  // Small blocks are cut from one segment in order, so their addresses show the rounded sizes.
  EXPECT_EQ(b, a + 512);
  char* c = allocate(0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c, b + 1024);
  EXPECT_EQ(alloc->stats().bytes_in_use, 512 + 1024 + 512);
  EXPECT_EQ(raw_allocs(), 1);
}

TEST_F(CachingAllocatorTest, SmallRequestsShareOneTwoMiBSegment) {
  std::vector<char*> ps;
  for (int i = 0; i < 8; ++i) ps.push_back(allocate(256 * kKiB));  // exactly fills 2 MiB
  ASSERT_EQ(state->alloc_sizes, std::vector<size_t>{2 * kMiB});
  for (int i = 1; i < 8; ++i) EXPECT_EQ(ps[i], ps[i - 1] + 256 * kKiB);
  allocate(512);  // the segment is full: a second one
  EXPECT_EQ(state->alloc_sizes, (std::vector<size_t>{2 * kMiB, 2 * kMiB}));
}

TEST_F(CachingAllocatorTest, SplitBlocksMergeWithFreeNeighbours) {
  char* a = allocate(256 * kKiB);
  char* b = allocate(256 * kKiB);
  char* c = allocate(256 * kKiB);
  deallocate(b);
  // b alone is too small for 512 KiB: the request is cut from the free tail after c.
  char* d = allocate(512 * kKiB);
  EXPECT_EQ(d, c + 256 * kKiB);
  deallocate(a);  // a merges with b: 512 KiB free at a
  char* e = allocate(512 * kKiB);
  EXPECT_EQ(e, a);
  EXPECT_EQ(raw_allocs(), 1);
  deallocate(e);
  deallocate(c);
  deallocate(d);
  // Everything merged back into the whole segment: one allocation can take all of it, and
  // empty_cache can return it.
  char* whole = allocate(kMiB);  // the largest small request
  EXPECT_EQ(whole, a);
  deallocate(whole);
  alloc->empty_cache();
  EXPECT_EQ(alloc->stats().num_raw_frees, 1);
  EXPECT_TRUE(state->live.empty());
}

TEST_F(CachingAllocatorTest, SmallAndLargePoolsAreSeparate) {
  char* s = allocate(1000);  // small segment with almost 2 MiB free
  char* l = allocate(1536 * kKiB);  // large: would fit in that free space, gets its own segment
  EXPECT_EQ(raw_allocs(), 2);
  EXPECT_TRUE(l < s || l >= s + 2 * kMiB);
  deallocate(l);
  // A small request does not take the cached large block either.
  char* s2 = allocate(1000);
  EXPECT_EQ(s2, s + 1024);
  deallocate(s);
  deallocate(s2);
  deallocate(allocate(2 * kMiB));  // reuses the large block
  EXPECT_EQ(raw_allocs(), 2);
}

TEST_F(CachingAllocatorTest, LargeSegmentsRoundTo2MiBAndSplitOnlyLargeRemainders) {
  char* a = allocate(3 * kMiB);
  EXPECT_EQ(state->alloc_sizes.back(), 4 * kMiB);
  // The 1 MiB tail would be a fragment no large request fits: it stays with the block.
  EXPECT_EQ(alloc->stats().bytes_in_use, static_cast<int64_t>(4 * kMiB));
  deallocate(a);
  allocate(5 * kMiB + 1);
  EXPECT_EQ(state->alloc_sizes.back(), 6 * kMiB);
  alloc->empty_cache();  // drops the free 4 MiB segment
  EXPECT_EQ(alloc->stats().bytes_reserved, static_cast<int64_t>(6 * kMiB));

  auto fresh = std::make_shared<FakeState>();
  CachingAllocator big(std::make_unique<FakeRaw>(fresh));
  void* x = big.allocate(8 * kMiB);
  big.deallocate(x, 0);
  // From the free 8 MiB block, 5 MiB leaves 3 MiB (more than 1 MiB): split, and the rest serves
  // the next 3 MiB request without a raw allocation.
  void* y = big.allocate(5 * kMiB);
  void* z = big.allocate(3 * kMiB);
  EXPECT_EQ(y, x);
  EXPECT_EQ(z, static_cast<char*>(x) + 5 * kMiB);
  EXPECT_EQ(big.stats().num_raw_allocs, 1);
}

TEST_F(CachingAllocatorTest, StatsTrackUseReservePeakAndCalls) {
  char* a = allocate(kMiB);
  char* b = allocate(3 * kMiB);
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.bytes_in_use, static_cast<int64_t>(kMiB + 4 * kMiB));
  EXPECT_EQ(s.peak_bytes_in_use, s.bytes_in_use);
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(2 * kMiB + 4 * kMiB));
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.num_raw_allocs, 2);
  EXPECT_EQ(s.num_raw_frees, 0);

  deallocate(b);
  s = alloc->stats();
  EXPECT_EQ(s.bytes_in_use, static_cast<int64_t>(kMiB));
  EXPECT_EQ(s.peak_bytes_in_use, static_cast<int64_t>(5 * kMiB));
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(6 * kMiB));  // cached, not returned

  alloc->reset_peak_stats();
  EXPECT_EQ(alloc->stats().peak_bytes_in_use, static_cast<int64_t>(kMiB));
  deallocate(a);
  alloc->empty_cache();
  s = alloc->stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.bytes_reserved, 0);
  EXPECT_EQ(s.num_raw_frees, 2);
  EXPECT_EQ(s.num_allocs, 2);
}

TEST_F(CachingAllocatorTest, ThousandCyclesOfMixedSizesDoNotGrow) {
  // One "training step": the same mixed sizes each time, freed in a different order each time.
  const std::vector<size_t> sizes = {100,     5000,     70000,   kMiB,   3 * kMiB,  700,
                                     12345,   kMiB + 1, 300000,  64,     9 * kMiB,  4096};
  std::mt19937 rng(7);
  int64_t reserved_after_first = 0, raw_after_first = 0;
  for (int cycle = 0; cycle < 1000; ++cycle) {
    std::vector<char*> ptrs;
    for (size_t n : sizes) ptrs.push_back(allocate(n));
    std::shuffle(ptrs.begin(), ptrs.end(), rng);
    for (char* p : ptrs) deallocate(p);
    if (cycle == 0) {
      reserved_after_first = alloc->stats().bytes_reserved;
      raw_after_first = raw_allocs();
    } else {
      ASSERT_EQ(alloc->stats().bytes_reserved, reserved_after_first) << "cycle " << cycle;
      ASSERT_EQ(raw_allocs(), raw_after_first) << "cycle " << cycle;
    }
  }
  EXPECT_EQ(alloc->stats().bytes_in_use, 0);
  EXPECT_EQ(alloc->stats().num_allocs, static_cast<int64_t>(1000 * sizes.size()));
}

TEST_F(CachingAllocatorTest, RecordStreamDefersReuseUntilEventCompletes) {
  char* p = allocate(1000);  // on stream A
  alloc->record_stream(p, kStreamA);  // its own stream: nothing to wait for
  alloc->record_stream(p, kStreamB);
  deallocate(p);
  ASSERT_EQ(state->events.size(), 1u);
  void* event = state->events.begin()->first;
  EXPECT_EQ(state->event_stream[event], kStreamB);
  // Until stream B's work is done the block still counts as in use and is not handed out.
  EXPECT_EQ(alloc->stats().bytes_in_use, 1024);
  char* q = allocate(1000);
  EXPECT_NE(q, p);
  EXPECT_EQ(q, p + 1024);

  state->events[event] = true;
  char* r = allocate(1000);  // processes the event first, then the freed block is the best fit
  EXPECT_EQ(r, p);
  EXPECT_TRUE(state->events.empty());  // the event was destroyed
  EXPECT_EQ(alloc->stats().bytes_in_use, 2048);
  EXPECT_EQ(raw_allocs(), 1);
}

// Tensor::record_stream reaches the allocator that owns the tensor's memory, and skips memory no
// caching allocator owns (from_blob of a CUDA pointer): the NCCL group records every tensor it
// sends, and an exception here failed the collective and aborted the job.
TEST_F(CachingAllocatorTest, TensorRecordStreamReachesItsAllocatorAndSkipsForeignMemory) {
  {
    Tensor t(std::make_shared<TensorImpl>(std::make_shared<StorageImpl>(1000, alloc.get()), Shape{250}, Shape{1}, 0,
                                          kFloat32));
    ASSERT_TRUE(t.is_cuda());
    t.record_stream(Stream(Device::cuda(0), kStreamB));
  }  // freed: its block waits for stream B
  ASSERT_EQ(state->events.size(), 1u);
  EXPECT_EQ(state->event_stream.begin()->second, kStreamB);

  float device_memory[4] = {};  // stands for a CUDA pointer from elsewhere
  Tensor blob = raw::from_blob(device_memory, {4}, kFloat32, Device::cuda(0));
  EXPECT_NO_THROW(blob.record_stream(Stream(Device::cuda(0), kStreamB)));
}

TEST_F(CachingAllocatorTest, BlockUsedOnSeveralStreamsWaitsForAllOfThem) {
  void* const stream_c = reinterpret_cast<void*>(0x300);
  char* p = allocate(1000);
  char* guard = allocate(1000);  // keeps p from merging with the segment tail
  alloc->record_stream(p, kStreamB);
  alloc->record_stream(p, stream_c);
  deallocate(p);
  ASSERT_EQ(state->events.size(), 2u);
  std::vector<void*> events;
  for (auto& [e, done] : state->events) events.push_back(e);
  state->events[events[0]] = true;  // one of the two streams finished
  EXPECT_NE(allocate(1000), p);
  state->events[events[1]] = true;
  EXPECT_EQ(allocate(1000), p);
  (void)guard;
}

TEST_F(CachingAllocatorTest, BlocksFreedOnOneStreamAreNotGivenToAnother) {
  char* p = allocate(1000);
  deallocate(p);
  state->stream = kStreamB;
  char* q = allocate(1000);
  EXPECT_NE(q, p);
  EXPECT_EQ(raw_allocs(), 2);  // stream B gets its own segment
  deallocate(q);
  state->stream = kStreamA;
  EXPECT_EQ(allocate(1000), p);
  state->stream = kStreamB;
  EXPECT_EQ(allocate(1000), q);
  EXPECT_EQ(raw_allocs(), 2);

  // And the other way round: a stream ordered before B in the pool finds nothing of B's.
  void* const stream_0 = reinterpret_cast<void*>(0x10);
  state->stream = stream_0;
  char* r = allocate(1000);
  EXPECT_TRUE(r < q || r >= q + 2 * kMiB);
  EXPECT_TRUE(r < p || r >= p + 2 * kMiB);
  EXPECT_EQ(raw_allocs(), 3);
}

TEST_F(CachingAllocatorTest, OutOfMemoryReleasesCacheAndRetriesOnce) {
  deallocate(allocate(1000));  // one cached 2 MiB segment
  state->fail_next = 1;
  char* p = allocate(3 * kMiB);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(state->failed, 1);
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.num_raw_frees, 1);  // the cached segment went back before the retry
  EXPECT_EQ(s.num_raw_allocs, 2);
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(4 * kMiB));
  EXPECT_EQ(state->live.size(), 1u);
}

TEST_F(CachingAllocatorTest, OutOfMemoryTwiceThrowsWithUsageInTheMessage) {
  char* live = allocate(1000);  // in use 1024 of a 2 MiB segment
  // A cached large segment too small for the request below: the retry releases it.
  deallocate(allocate(1536 * kKiB));
  state->fail_next = 2;
  try {
    allocate(3 * kMiB);
    FAIL() << "expected an out-of-memory error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "CUDA out of memory: tried to allocate 3145728 bytes on cuda:0 "
                 "(in use: 1024, reserved: 2097152)");
  }
  EXPECT_EQ(state->failed, 2);
  // Still usable afterwards, and the live block is untouched.
  char* p = allocate(3 * kMiB);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(alloc->stats().bytes_in_use, static_cast<int64_t>(1024 + 4 * kMiB));
  deallocate(live);
}

TEST_F(CachingAllocatorTest, AbsurdSizesAreOutOfMemoryNotOverflow) {
  size_t absurd = ~size_t(0) - 100;  // rounding up to 512 would wrap to a tiny size
  EXPECT_THROW(allocate(absurd), std::runtime_error);
  EXPECT_TRUE(state->alloc_sizes.empty());
}

TEST_F(CachingAllocatorTest, EmptyCacheReturnsOnlyWhollyFreeSegments) {
  char* a = allocate(1000);
  char* b = allocate(1000);  // same segment as a
  char* c = allocate(5 * kMiB);
  char* d = allocate(1536 * kKiB);
  deallocate(b);
  deallocate(c);
  deallocate(d);
  alloc->empty_cache();
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.num_raw_frees, 2);  // c's and d's segments; a's is partly in use
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(2 * kMiB));
  EXPECT_EQ(state->live.size(), 1u);
  deallocate(a);
  alloc->empty_cache();
  EXPECT_EQ(alloc->stats().bytes_reserved, 0);
  EXPECT_TRUE(state->live.empty());
  // The allocator starts afresh afterwards.
  allocate(1000);
  EXPECT_EQ(alloc->stats().num_raw_allocs, 4);
}

TEST_F(CachingAllocatorTest, UnknownOrDoubleFreedPointersAreRejected) {
  int local = 0;
  EXPECT_THROW(alloc->deallocate(&local, 4), std::invalid_argument);
  char* p = allocate(100);
  deallocate(p);
  EXPECT_THROW(deallocate(p), std::invalid_argument);
  EXPECT_THROW(alloc->record_stream(p, kStreamB), std::invalid_argument);
  alloc->deallocate(nullptr, 0);  // like free(nullptr)
}

TEST_F(CachingAllocatorTest, DestructorReturnsEverySegmentAndEvent) {
  allocate(1000);
  char* p = allocate(2000);
  alloc->record_stream(p, kStreamB);
  deallocate(p);  // pending on an event
  deallocate(allocate(7 * kMiB));
  ASSERT_EQ(state->live.size(), 2u);
  alloc.reset();
  EXPECT_TRUE(state->live.empty());
  EXPECT_TRUE(state->events.empty());
}

TEST_F(CachingAllocatorTest, ConcurrentUseKeepsConsistentStats) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([this, t] {
      for (int i = 0; i < 500; ++i) {
        void* p = alloc->allocate(512 * (1 + (i + t) % 7));
        alloc->deallocate(p, 0);
      }
    });
  for (auto& th : threads) th.join();
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocs, 2000);
  EXPECT_EQ(s.num_raw_allocs, 1);  // at most four small blocks live at once: one segment
}

// ---- CUDA graph captures: private pools ----------------------------------------------------------

constexpr uint64_t kCapture = 7;
void* const kSide = reinterpret_cast<void*>(0x300);  // the capture stream

class CapturePoolTest : public CachingAllocatorTest {
 protected:
  // What cuda::CUDAGraph does: the side stream becomes current and is captured.
  void begin() {
    state->stream = kSide;
    state->capturing[kSide] = kCapture;
    alloc->begin_capture(kCapture);
  }
  void end() {
    state->capturing.erase(kSide);
    alloc->end_capture(kCapture);
    state->stream = kStreamA;
  }
};

TEST_F(CapturePoolTest, EagerAllocationsNeverQueryCaptureState) {
  deallocate(allocate(1000));
  EXPECT_EQ(state->capture_queries, 0) << "the per-allocation query is only paid while a capture is underway";
}

TEST_F(CapturePoolTest, CaptureDoesNotReuseEagerCacheAndEagerDoesNotReuseCaptured) {
  // An eager block on the side stream is cached before the capture.
  state->stream = kSide;
  char* eager = allocate(1000);
  deallocate(eager);
  begin();
  char* captured = allocate(1000);
  EXPECT_NE(captured, eager) << "the capture drew from the eager cache";
  EXPECT_EQ(raw_allocs(), 2);
  EXPECT_EQ(alloc->pool_segments(kCapture), 1u);
  deallocate(captured);  // freed during the capture: back to the private pool
  char* again = allocate(1000);
  EXPECT_EQ(again, captured) << "a block freed during the capture is reused by the same capture";
  deallocate(again);
  end();
  // After the capture, on the same stream and size, eager work gets the eager block, never the
  // graph's: a replay writes the graph's addresses.
  state->stream = kSide;
  char* later = allocate(1000);
  EXPECT_EQ(later, eager);
  char* more = allocate(1000);
  EXPECT_NE(more, captured);
  EXPECT_TRUE(more < captured || more >= captured + 2 * kMiB) << "eager block cut from the graph's segment";
}

TEST_F(CapturePoolTest, OtherStreamsDuringCaptureUseTheDefaultPool) {
  begin();
  char* captured = allocate(1000);
  state->stream = kStreamB;  // another thread's (uncaptured) stream
  char* other = allocate(1000);
  EXPECT_TRUE(other < captured || other >= captured + 2 * kMiB);
  EXPECT_EQ(alloc->pool_segments(kCapture), 1u);
  deallocate(other);
  state->stream = kSide;
  end();
}

TEST_F(CapturePoolTest, ReleasingThePoolFreesItsSegments) {
  begin();
  char* a = allocate(3 * kMiB);  // large: its own segment
  char* b = allocate(1000);
  deallocate(a);
  end();
  EXPECT_EQ(alloc->pool_segments(kCapture), 2u);
  alloc->empty_cache();
  EXPECT_EQ(state->live.size(), 2u) << "empty_cache freed a live graph's memory";
  // The graph is destroyed while the user still holds b (a static output).
  alloc->release_pool(kCapture);
  EXPECT_EQ(alloc->pool_segments(kCapture), 1u) << "the free segment goes back at once";
  EXPECT_EQ(state->live.size(), 1u);
  deallocate(b);
  alloc->empty_cache();
  EXPECT_EQ(alloc->pool_segments(kCapture), 0u);
  EXPECT_TRUE(state->live.empty());
  EXPECT_EQ(alloc->stats().bytes_reserved, 0);
}

TEST_F(CapturePoolTest, NoEventsAndNoFreesWhileCapturing) {
  // An eager block used on stream B, freed during a capture: its event must wait for the end.
  state->stream = kStreamA;
  char* shared = allocate(1000);
  alloc->record_stream(shared, kStreamB);
  // A cached free segment that an out-of-memory would normally release.
  deallocate(allocate(3 * kMiB));
  begin();
  deallocate(shared);
  EXPECT_TRUE(state->events.empty()) << "an event was recorded during the capture";
  state->fail_next = 1;
  EXPECT_THROW(allocate(5 * kMiB), std::runtime_error);
  EXPECT_EQ(alloc->stats().num_raw_frees, 0) << "cudaFree during a capture";
  alloc->empty_cache();
  EXPECT_EQ(alloc->stats().num_raw_frees, 0) << "empty_cache freed during a capture";
  end();
  ASSERT_EQ(state->events.size(), 1u);
  EXPECT_EQ(state->event_stream.begin()->second, kStreamB);
  state->events.begin()->second = true;
  alloc->empty_cache();
  EXPECT_EQ(alloc->stats().num_raw_frees, 2) << "the eager segments go once the capture is over";
}

TEST_F(CapturePoolTest, MisuseIsAClearError) {
  EXPECT_THROW(alloc->begin_capture(0), std::invalid_argument);
  EXPECT_THROW(alloc->end_capture(kCapture), std::logic_error);
  EXPECT_THROW(alloc->release_pool(kCapture), std::logic_error);
  begin();
  EXPECT_THROW(alloc->begin_capture(kCapture), std::logic_error);
  EXPECT_THROW(alloc->release_pool(kCapture), std::logic_error);
  // A stream captured without begin_capture.
  state->capturing[kStreamB] = 99;
  state->stream = kStreamB;
  try {
    allocate(10);
    FAIL() << "did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("capture 99"), std::string::npos) << e.what();
  }
  state->capturing.erase(kStreamB);
  end();
  alloc->release_pool(kCapture);
  EXPECT_THROW(alloc->release_pool(kCapture), std::logic_error);
}

TEST_F(CapturePoolTest, DestructorFreesPrivatePoolsToo) {
  begin();
  allocate(1000);  // never freed: the allocator's destructor returns it
  end();
  alloc.reset();
  EXPECT_TRUE(state->live.empty());
}

}  // namespace
}  // namespace colony
