// The communication thread's sleep (distributed/comm/comm_thread_wakeup.h).
#include "distributed/comm/comm_thread_wakeup.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace colony::dist::comm_detail {
namespace {

using Clock = CommThreadWakeup::Clock;
using std::chrono::milliseconds;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(CommThreadWakeup, ASignalBeforeTheSleepIsNotLost) {
  CommThreadWakeup w;
  w.signal();
  const auto t0 = Clock::now();
  w.wait();
  EXPECT_LT(seconds_since(t0), 1.0);
}

TEST(CommThreadWakeup, SignalFromAnotherThreadWakesTheSleeper) {
  CommThreadWakeup w;
  const auto t0 = Clock::now();
  std::thread other([&] {
    std::this_thread::sleep_for(milliseconds(50));
    w.signal();
  });
  w.wait();
  EXPECT_GE(seconds_since(t0), 0.045);
  other.join();
}

TEST(CommThreadWakeup, TheTimerWakesAtItsTimeAndDisarmingCancelsIt) {
  CommThreadWakeup w;
  auto t0 = Clock::now();
  w.arm(t0 + milliseconds(60));
  w.wait();
  EXPECT_GE(seconds_since(t0), 0.055);
  EXPECT_LT(seconds_since(t0), 2.0);

  // Disarmed: only the signal 300 ms later ends the sleep, not the timer at 30 ms.
  t0 = Clock::now();
  w.arm(t0 + milliseconds(30));
  w.disarm();
  std::thread other([&] {
    std::this_thread::sleep_for(milliseconds(300));
    w.signal();
  });
  w.wait();
  EXPECT_GE(seconds_since(t0), 0.28);
  other.join();
}

TEST(CommThreadWakeup, ATimeAlreadyPastWakesAtOnce) {
  CommThreadWakeup w;
  w.arm(Clock::now() - milliseconds(5));
  const auto t0 = Clock::now();
  w.wait();
  EXPECT_LT(seconds_since(t0), 1.0);
}

}  // namespace
}  // namespace colony::dist::comm_detail
