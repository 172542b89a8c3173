// The per-thread library handles' pool (runtime/cuda/handle_pool.h) over fake handles: threads
// give their handles back when they exit, so handles made = threads that ran at once.
#include "runtime/cuda/handle_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace colony::kernels::cuda {
namespace {

struct FakeHandle {
  int device;
  int serial;
};

// Makes numbered handles and counts them.
struct Factory {
  std::atomic<int> made{0};
  HandlePool<FakeHandle>::Create create() {
    return [this](int device) { return std::make_unique<FakeHandle>(FakeHandle{device, made++}); };
  }
};

TEST(HandlePool, AThreadKeepsItsHandlePerDevice) {
  HandlePool<FakeHandle> pool;
  Factory f;
  HandlePool<FakeHandle>::Lease lease(pool);
  FakeHandle& a = lease.get(0, f.create());
  FakeHandle& b = lease.get(1, f.create());
  EXPECT_EQ(&lease.get(0, f.create()), &a);
  EXPECT_EQ(&lease.get(1, f.create()), &b);
  EXPECT_EQ(a.device, 0);
  EXPECT_EQ(b.device, 1);
  EXPECT_EQ(f.made, 2);
  EXPECT_EQ(pool.created(0), 1u);
  EXPECT_EQ(pool.created(1), 1u);
  EXPECT_EQ(pool.idle(0), 0u);
}

TEST(HandlePool, ThreadsOneAfterAnotherShareOneHandle) {
  HandlePool<FakeHandle> pool;
  Factory f;
  std::vector<int> serials;
  for (int i = 0; i < 20; ++i) {
    std::thread([&] {
      HandlePool<FakeHandle>::Lease lease(pool);
      serials.push_back(lease.get(0, f.create()).serial);
    }).join();
  }
  EXPECT_EQ(f.made, 1);
  EXPECT_EQ(pool.created(0), 1u);
  EXPECT_EQ(pool.idle(0), 1u);
  for (int s : serials) EXPECT_EQ(s, 0);
}

// The way blas.cc and cudnn_conv.cc hold a lease: thread_local, ended by the thread's exit.
HandlePool<FakeHandle>* thread_exit_pool = nullptr;
Factory* thread_exit_factory = nullptr;
int serial_on_this_thread() {
  thread_local HandlePool<FakeHandle>::Lease lease(*thread_exit_pool);
  return lease.get(0, thread_exit_factory->create()).serial;
}

TEST(HandlePool, AThreadLocalLeaseGivesBackAtThreadExit) {
  HandlePool<FakeHandle> pool;
  Factory f;
  thread_exit_pool = &pool;
  thread_exit_factory = &f;
  for (int i = 0; i < 5; ++i) {
    std::thread([] {
      EXPECT_EQ(serial_on_this_thread(), 0);
      EXPECT_EQ(serial_on_this_thread(), 0);
    }).join();
    EXPECT_EQ(pool.idle(0), 1u);
  }
  EXPECT_EQ(f.made, 1);
}

TEST(HandlePool, ThreadsAtOnceGetTheirOwnAndLaterThreadsReuseThem) {
  HandlePool<FakeHandle> pool;
  Factory f;
  constexpr int kAtOnce = 4;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::vector<const FakeHandle*> seen(kAtOnce);
  std::vector<std::thread> threads;
  for (int t = 0; t < kAtOnce; ++t) {
    threads.emplace_back([&, t] {
      HandlePool<FakeHandle>::Lease lease(pool);
      seen[t] = &lease.get(0, f.create());
      // Hold the handle until every thread has one, so that none can be reused meanwhile.
      std::unique_lock<std::mutex> lock(mu);
      ++arrived;
      cv.notify_all();
      cv.wait(lock, [&] { return arrived == kAtOnce; });
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(f.made, kAtOnce);
  for (int a = 0; a < kAtOnce; ++a)
    for (int b = a + 1; b < kAtOnce; ++b) EXPECT_NE(seen[a], seen[b]);
  EXPECT_EQ(pool.idle(0), static_cast<size_t>(kAtOnce));

  threads.clear();
  for (int t = 0; t < 10; ++t) {
    threads.emplace_back([&] {
      HandlePool<FakeHandle>::Lease lease(pool);
      lease.get(0, f.create());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(f.made, kAtOnce) << "later threads take idle handles";
  EXPECT_EQ(pool.idle(0), static_cast<size_t>(kAtOnce));
}

TEST(HandlePool, DevicesHaveSeparateHandles) {
  HandlePool<FakeHandle> pool;
  Factory f;
  {
    HandlePool<FakeHandle>::Lease lease(pool);
    lease.get(1, f.create());
  }
  HandlePool<FakeHandle>::Lease lease(pool);
  EXPECT_EQ(lease.get(0, f.create()).device, 0) << "an idle device-1 handle is not handed out for device 0";
  EXPECT_EQ(lease.get(1, f.create()).device, 1);
  EXPECT_EQ(f.made, 2);
  EXPECT_EQ(pool.idle(1), 0u);
}

TEST(HandlePool, AFailedCreateKeepsNothingAndIsRetried) {
  HandlePool<FakeHandle> pool;
  HandlePool<FakeHandle>::Lease lease(pool);
  int calls = 0;
  auto failing = [&](int) -> std::unique_ptr<FakeHandle> {
    ++calls;
    throw std::runtime_error("cublasCreate failed: CUBLAS_STATUS_ALLOC_FAILED");
  };
  EXPECT_THROW(lease.get(0, failing), std::runtime_error);
  EXPECT_EQ(pool.created(0), 0u);
  EXPECT_THROW(lease.get(0, [](int) { return std::unique_ptr<FakeHandle>(); }), std::runtime_error);
  EXPECT_EQ(lease.get(0, [](int d) { return std::make_unique<FakeHandle>(FakeHandle{d, 7}); }).serial, 7);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(pool.created(0), 1u);
}

TEST(HandlePool, ANegativeDeviceIsRefused) {
  HandlePool<FakeHandle> pool;
  HandlePool<FakeHandle>::Lease lease(pool);
  Factory f;
  EXPECT_THROW(lease.get(-1, f.create()), std::invalid_argument);
}

}  // namespace
}  // namespace colony::kernels::cuda
