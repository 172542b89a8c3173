#include "data/worker_pool.h"

#include <utility>

namespace colony::data::detail {

WorkerPool::WorkerPool(int workers) : initialized_(static_cast<size_t>(workers), false) {
  threads_.reserve(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return running_ == 0; });
    quit_ = true;
  }
  job_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::start(std::function<void(int)> job) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return running_ == 0; });
    job_ = std::move(job);
    running_ = size();
    ++generation_;
  }
  job_cv_.notify_all();
}

void WorkerPool::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return running_ == 0; });
}

bool WorkerPool::first_job(int w) {
  std::lock_guard<std::mutex> lock(mu_);
  if (initialized_[static_cast<size_t>(w)]) return false;
  initialized_[static_cast<size_t>(w)] = true;
  return true;
}

void WorkerPool::loop(int w) {
  uint64_t seen = 0;
  while (true) {
    std::function<void(int)> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      job_cv_.wait(lock, [&] { return quit_ || generation_ != seen; });
      if (quit_) return;
      seen = generation_;
      job = job_;
    }
    job(w);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
    }
    done_cv_.notify_all();
  }
}

}  // namespace colony::data::detail
