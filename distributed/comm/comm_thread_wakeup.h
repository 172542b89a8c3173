// How a backend's communication thread sleeps and is woken: at once (a job it must run,
// stop, abort) or at a time (a job left to waiting threads for a moment, process_group_gloo.cc's
// kInlineGrace). Internal to the backends.
//
// Why not a condition variable: the usual collective of a training step is run by the thread that
// waits for it, and the communication thread is only its fallback. With a condition variable it
// had to be woken at every enqueue to start its own timed wait, and again when that ended: two
// wake-ups a step, each preempting the computation on its core (LeNet on 2 ranks: ~3 involuntary
// context switches of the training thread a step). A timer armed by the enqueuing thread, and
// disarmed when a waiter took the job, wakes nobody in that case.
#pragma once

#include <chrono>

namespace colony::dist::comm_detail {

class CommThreadWakeup {
 public:
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC, as the timer's

  CommThreadWakeup();  // throws std::runtime_error if the kernel has no eventfd/timerfd for us
  ~CommThreadWakeup();
  CommThreadWakeup(const CommThreadWakeup&) = delete;
  CommThreadWakeup& operator=(const CommThreadWakeup&) = delete;

  // Wakes the sleeper now, or the next time it sleeps. Safe from any thread.
  void signal();
  // Wakes the sleeper at `when` (replacing an earlier arming); disarm() cancels. The caller
  // serializes arm/disarm (the backend holds its queue's mutex).
  void arm(Clock::time_point when);
  void disarm();
  // Sleeps until signal()ed or the armed time, and clears both. Wakes that came before the call
  // are not lost: it returns at once.
  void wait();

 private:
  int event_fd_ = -1;
  int timer_fd_ = -1;
};

}  // namespace colony::dist::comm_detail
