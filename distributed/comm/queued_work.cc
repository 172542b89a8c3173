#include "distributed/comm/queued_work.h"

#include <utility>

#include "distributed/store/store.h"

namespace colony::dist::comm_detail {

namespace {
std::string ms_str(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }
}  // namespace

QueuedWork::QueuedWork(const Fingerprint& fp, std::chrono::milliseconds timeout)
    : name_(work_name(fp)), description_(work_description(fp)), timeout_(timeout) {}

bool QueuedWork::is_completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

std::exception_ptr QueuedWork::exception() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void QueuedWork::wait(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) {
    std::function<bool()> runner;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!started_ && !done_) runner = std::move(inline_runner_);
      inline_runner_ = nullptr;
    }
    if (runner) runner();  // completes this work, or leaves it to the communication thread
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (timeout.count() >= 0) {
    if (!cv_.wait_for(lock, timeout, [&] { return done_; })) {
      throw TimeoutError(name_ + " timed out after " + ms_str(timeout) + " in wait() (" +
                         (started_ ? "still running" : "still queued behind earlier collectives") +
                         "; it goes on: wait() again, or abort() the group)");
    }
  } else {
    for (;;) {
      if (done_) break;
      if (!started_) {  // its timeout only counts once it runs
        cv_.wait(lock);
        continue;
      }
      const auto deadline = started_at() + timeout_ + kOverrunGrace;
      if (cv_.wait_until(lock, deadline, [&] { return done_; })) break;
      throw TimeoutError(name_ + " timed out after " + ms_str(timeout_) + " (and gloo had not returned " +
                         ms_str(kOverrunGrace) + " later)");
    }
  }
  if (error_) std::rethrow_exception(error_);
}

void QueuedWork::start() {
  std::lock_guard<std::mutex> lock(mu_);
  mark_started();
  started_ = true;
  cv_.notify_all();
}

bool QueuedWork::finish(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (done_) return false;
  done_ = true;
  error_ = std::move(error);
  mark_finished();
  cv_.notify_all();
  return true;
}

}  // namespace colony::dist::comm_detail
