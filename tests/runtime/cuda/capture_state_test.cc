// The capture check of the runtime layer, on the host: the "is this thread capturing" query is
// replaced by a fake, so the check runs without a GPU (and in CPU-only builds).
#include "runtime/cuda/capture_state.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "runtime/cuda/runtime_counters.h"

namespace colony::kernels::cuda {
namespace {

bool always_capturing() { return true; }

// Installs the fake for one test and restores the default after it.
class FakeCapture {
 public:
  explicit FakeCapture(CaptureQuery q) : prev_(set_capture_query_for_testing(q)) {}
  ~FakeCapture() { set_capture_query_for_testing(prev_); }

 private:
  CaptureQuery prev_;
};

TEST(CaptureState, NotCapturingByDefault) {
  EXPECT_FALSE(thread_is_capturing());
  EXPECT_NO_THROW(check_not_capturing("item()"));
}

TEST(CaptureState, NotedCaptureIsPerThread) {
  note_capture_begin();
  EXPECT_TRUE(thread_is_capturing());
  bool other = true;
  std::thread([&] { other = thread_is_capturing(); }).join();
  EXPECT_FALSE(other) << "thread-local capture mode restricts the capturing thread only";
  note_capture_end();
  EXPECT_FALSE(thread_is_capturing());
}

// A wait for the whole device fails, and invalidates the capture, while any stream of the device is
// captured, whichever thread waits: so those calls are refused on every thread.
TEST(CaptureState, DeviceWideWaitsAreRefusedWhileAnotherThreadCaptures) {
  EXPECT_FALSE(any_thread_capturing());
  EXPECT_NO_THROW(check_no_capture_anywhere("cudaDeviceSynchronize"));
  std::mutex mu;
  std::condition_variable cv;
  bool begun = false, end = false;
  std::thread capturer([&] {
    note_capture_begin();
    {
      std::unique_lock<std::mutex> lock(mu);
      begun = true;
      cv.notify_all();
      cv.wait(lock, [&] { return end; });
    }
    note_capture_end();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return begun; });
  }
  EXPECT_FALSE(thread_is_capturing());
  EXPECT_TRUE(any_thread_capturing());
  EXPECT_NO_THROW(check_not_capturing("cudaStreamSynchronize")) << "another stream may still be waited for";
  try {
    check_no_capture_anywhere("cudaDeviceSynchronize");
    ADD_FAILURE() << "did not throw";
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("cudaDeviceSynchronize: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("another thread captures a CUDA graph"), std::string::npos) << msg;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    end = true;
  }
  cv.notify_all();
  capturer.join();
  EXPECT_FALSE(any_thread_capturing());
  EXPECT_NO_THROW(check_no_capture_anywhere("cudaDeviceSynchronize"));
  note_capture_end();  // an end without a begin changes nothing
  EXPECT_FALSE(any_thread_capturing());
}

TEST(CaptureState, CheckNamesTheOp) {
  FakeCapture fake(always_capturing);
  try {
    check_not_capturing("item()");
    FAIL() << "did not throw";
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("item(): ", 0), 0u) << msg;
    EXPECT_NE(msg.find("captures a CUDA graph"), std::string::npos) << msg;
    EXPECT_NE(msg.find("after replay()"), std::string::npos) << msg;
  }
}

TEST(CaptureState, HostSyncIsRefusedAndNotCountedWhileCapturing) {
  const int64_t before = host_sync_count();
  {
    FakeCapture fake(always_capturing);
    EXPECT_THROW(count_host_sync("cudaStreamSynchronize"), std::runtime_error);
  }
  EXPECT_EQ(host_sync_count(), before);
  count_host_sync("cudaStreamSynchronize");
  EXPECT_EQ(host_sync_count(), before + 1);
}

TEST(CaptureState, FakeCanBeRemoved) {
  CaptureQuery prev = set_capture_query_for_testing(always_capturing);
  EXPECT_EQ(prev, nullptr);
  EXPECT_TRUE(thread_is_capturing());
  EXPECT_EQ(set_capture_query_for_testing(nullptr), &always_capturing);
  EXPECT_FALSE(thread_is_capturing());
}

}  // namespace
}  // namespace colony::kernels::cuda
