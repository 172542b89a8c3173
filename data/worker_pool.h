// Internal to the DataLoader: the threads a pass runs its workers on. Without persistent_workers each
// pass makes a pool and joins it when it ends; with persistent_workers the loader keeps one pool for
// all its passes, so the worker threads (and what worker_init_fn set up in them, thread_local state
// included) live on from epoch to epoch and worker_init_fn runs once per worker, as PyTorch's
// persistent worker processes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace colony::data::detail {

class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();  // joins the threads; no job may be running
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }
  // Runs job(w) on thread w, for every w, and returns at once (after the previous job has finished on
  // every thread). The job must not throw.
  void start(std::function<void(int)> job);
  // Returns once every thread has finished the current job.
  void wait();
  // True the first time thread w's job asks: worker_init_fn runs then, and only then.
  bool first_job(int w);
  // A worker_init_fn failed: the loader replaces this pool before its next pass.
  void set_broken() { broken_ = true; }
  bool broken() const { return broken_; }

 private:
  void loop(int w);

  std::mutex mu_;
  std::condition_variable job_cv_, done_cv_;
  std::function<void(int)> job_;
  uint64_t generation_ = 0;  // jobs started
  int running_ = 0;          // threads still in the current job
  bool quit_ = false;
  std::vector<bool> initialized_;
  std::atomic<bool> broken_{false};
  std::vector<std::thread> threads_;
};

}  // namespace colony::data::detail
