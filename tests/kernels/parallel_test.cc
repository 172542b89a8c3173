// parallel_for: every index covered exactly once, whatever the thread count, job size, timing of the
// workers (spinning, parked, late) or number of threads calling it at once.
#include "kernels/cpu/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace colony::kernels::cpu {
namespace {

class ParallelFor : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = num_threads(); }
  void TearDown() override { set_num_threads(saved_); }
  int saved_ = 1;
};

// Runs parallel_for over n with the given grain and checks each index was visited once.
void expect_each_index_once(int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  parallel_for(n, grain, [&](int64_t b, int64_t e) {
    ASSERT_LE(0, b);
    ASSERT_LT(b, e);
    ASSERT_LE(e, n);
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
}

// 20 threads: jobs of more than 16 chunks claim them in order from a counter instead of a bitmask.
TEST_F(ParallelFor, CoversEveryIndexOnceForEachThreadCount) {
  for (int threads : {1, 2, 3, 4, 7, 20}) {
    set_num_threads(threads);
    for (int64_t n : {1, 2, 3, 5, 64, 1000, 4097})
      for (int64_t grain : {1, 7, 100}) expect_each_index_once(n, grain);
  }
}

// Thousands of tiny jobs back to back: workers finishing a job, spinning, and arriving late for a
// job that the caller already finished must never run a chunk twice or of the wrong job.
TEST_F(ParallelFor, ManyTinyJobsBackToBack) {
  set_num_threads(4);
  std::atomic<int64_t> total{0};
  for (int job = 0; job < 20000; ++job)
    parallel_for(4, 1, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
  EXPECT_EQ(total.load(), 4 * 20000);
}

// Jobs separated by pauses longer than the spin time, so workers park and must be woken.
TEST_F(ParallelFor, WakesParkedWorkers) {
  set_num_threads(3);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    expect_each_index_once(300, 1);
  }
}

// A chunk that outlasts the spin makes the caller block for the rest of the job, not return early.
TEST_F(ParallelFor, CallerWaitsForLongChunks) {
  set_num_threads(2);
  std::atomic<int> finished{0};
  parallel_for(2, 1, [&](int64_t b, int64_t) {
    if (b == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished.fetch_add(1);
  });
  EXPECT_EQ(finished.load(), 2);
}

TEST_F(ParallelFor, ConcurrentCallersEachGetTheirWholeJob) {
  set_num_threads(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int job = 0; job < 2000; ++job) {
        std::atomic<int64_t> sum{0};
        parallel_for(100, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) sum.fetch_add(i);
        });
        if (sum.load() != 99 * 100 / 2) failures.fetch_add(1);
      }
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ParallelFor, NestedCallsRunSerially) {
  set_num_threads(2);
  std::atomic<int64_t> total{0};
  parallel_for(4, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      parallel_for(10, 1, [&](int64_t ib, int64_t ie) { total.fetch_add(ie - ib); });
  });
  EXPECT_EQ(total.load(), 40);
}

TEST_F(ParallelFor, FirstExceptionReachesTheCallerAfterAllChunks) {
  set_num_threads(4);
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(4, 1,
                            [&](int64_t b, int64_t) {
                              ran.fetch_add(1);
                              if (b == 2) throw std::runtime_error("chunk 2 failed");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 4);
  expect_each_index_once(100, 1);  // the pool still works
}

// Each thread takes its own chunk first: the caller chunk 0, worker w chunk w + 1, so consecutive
// jobs split the same way run each piece on the same thread (and its cache). Every chunk here
// waits until all have started, so no thread can take two and the claims alone decide who runs
// what. Taken from one counter, the workers raced for chunks 1 and 2 (and a fast one for chunk 0).
// Workers left over from a larger thread count (the tests above use up to 7) must stay out.
TEST_F(ParallelFor, EachThreadTakesItsOwnChunkFirst) {
  constexpr int kThreads = 3;
  set_num_threads(7);
  expect_each_index_once(7, 1);  // seven threads' workers exist
  set_num_threads(kThreads);
  std::vector<std::thread::id> owner(kThreads);
  for (int job = 0; job < 200; ++job) {
    std::atomic<int> started{0};
    std::vector<std::thread::id> ran(kThreads);
    std::atomic<bool> timed_out{false};
    parallel_for(kThreads, 1, [&](int64_t b, int64_t) {
      ran[static_cast<size_t>(b)] = std::this_thread::get_id();
      started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (started.load() < kThreads) {
        if (std::chrono::steady_clock::now() > deadline) {
          timed_out = true;
          break;
        }
        std::this_thread::yield();
      }
    });
    ASSERT_FALSE(timed_out.load()) << "job " << job << ": the chunks never all ran at once";
    EXPECT_EQ(ran[0], std::this_thread::get_id()) << "job " << job << ": chunk 0 ran off the caller";
    for (int c = 1; c < kThreads; ++c) {
      if (job == 0) owner[static_cast<size_t>(c)] = ran[static_cast<size_t>(c)];
      EXPECT_EQ(ran[static_cast<size_t>(c)], owner[static_cast<size_t>(c)]) << "job " << job << ", chunk " << c;
    }
  }
  EXPECT_NE(owner[1], owner[2]);
}

TEST_F(ParallelFor, RejectsZeroThreads) {
  EXPECT_THROW(set_num_threads(0), std::invalid_argument);
}

}  // namespace
}  // namespace colony::kernels::cpu
