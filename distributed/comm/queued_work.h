// The Work handle of a collective queued for a communication thread. Internal to the backends:
// callers see Work.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>

#include "distributed/comm/fingerprint.h"
#include "distributed/comm/process_group.h"

namespace colony::dist::comm_detail {

class QueuedWork final : public Work {
 public:
  // `timeout` bounds the collective once it runs (the communication thread enforces it).
  QueuedWork(const Fingerprint& fp, std::chrono::milliseconds timeout);

  bool is_completed() const override;
  // timeout >= 0: TimeoutError "allreduce #12 timed out after 200 ms in wait() (still running...)"
  // when it is not done by then (the collective itself goes on). Negative: until it completes; a
  // safety net throws should gloo overrun the collective's own timeout by kOverrunGrace.
  void wait(std::chrono::milliseconds timeout) override;
  std::exception_ptr exception() const override;
  std::string description() const override { return description_; }  // "allreduce #12 (float32, ...)"

  const std::string& name() const { return name_; }  // "allreduce #12"
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Set once, before anyone can wait: a way for an unbounded wait() to run the collective on the
  // waiting thread when the communication thread has not picked it up yet (it returns whether it
  // did). The waiter would only block meanwhile, and handing the work to another thread costs a
  // wake-up of that thread, which on a loaded machine is often longer than the collective.
  void set_inline_runner(std::function<bool()> runner) { inline_runner_ = std::move(runner); }

  // The communication thread calls these.
  void start();
  // Completes the work once; later calls are ignored, because abort() may complete a work while
  // the communication thread is still inside gloo running it. Returns whether this call did.
  bool finish(std::exception_ptr error);
  template <typename E>
  bool fail(const std::string& message) {
    return finish(std::make_exception_ptr(E(message)));
  }

  static constexpr std::chrono::milliseconds kOverrunGrace{5000};

 private:
  const std::string name_;
  std::string description_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // started or finished
  bool started_ = false;
  bool done_ = false;
  std::exception_ptr error_;
  std::function<bool()> inline_runner_;  // taken by the first unbounded wait()
};

}  // namespace colony::dist::comm_detail
