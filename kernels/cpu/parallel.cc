#include "kernels/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace colony::kernels::cpu {
namespace {

int default_threads() {
  if (const char* env = std::getenv("COLONY_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1) return static_cast<int>(v);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// A fixed set of workers that each take one chunk of the current job. The pool is resized lazily
// when set_num_threads changes the count.
class ThreadPool {
 public:
  static ThreadPool& get() {
    static ThreadPool* pool = new ThreadPool();  // leaked: workers must outlive static destructors
    return *pool;
  }

  int threads() const { return threads_.load(); }
  void set_threads(int n) { threads_.store(n); }

  void run(int chunks, const std::function<void(int)>& chunk_fn) {
    // One parallel job at a time; another thread (a data-loader worker, say) that finds the pool
    // busy runs its chunks itself rather than waiting.
    std::unique_lock<std::mutex> job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock()) {
      for (int c = 0; c < chunks; ++c) chunk_fn(c);
      return;
    }
    ensure_workers(chunks - 1);
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = &chunk_fn;
      next_chunk_ = 1;  // chunk 0 runs on the caller
      num_chunks_ = chunks;
      pending_ = chunks - 1;
      ++generation_;
    }
    cv_work_.notify_all();
    chunk_fn(0);
    std::unique_lock<std::mutex> lk(mu_);
    cv_done_.wait(lk, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  ThreadPool() : threads_(default_threads()) {}

  void ensure_workers(int n) {
    while (static_cast<int>(workers_.size()) < n) {
      workers_.emplace_back([this] { worker_loop(); });
      workers_.back().detach();
    }
  }

  void worker_loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_work_.wait(lk, [&] { return generation_ != seen && next_chunk_ < num_chunks_; });
      seen = generation_;
      while (job_ != nullptr && next_chunk_ < num_chunks_) {
        int c = next_chunk_++;
        const std::function<void(int)>* job = job_;
        lk.unlock();
        (*job)(c);
        lk.lock();
        if (--pending_ == 0) cv_done_.notify_one();
      }
    }
  }

  std::atomic<int> threads_;
  std::mutex job_mutex_;
  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* job_ = nullptr;
  int next_chunk_ = 0, num_chunks_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
};

thread_local bool in_parallel_region = false;

}  // namespace

int num_threads() { return ThreadPool::get().threads(); }

void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads: expected n >= 1, got " + std::to_string(n));
  ThreadPool::get().set_threads(n);
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t max_chunks = std::min<int64_t>(num_threads(), (n + grain - 1) / grain);
  if (max_chunks <= 1 || in_parallel_region) {
    fn(0, n);
    return;
  }
  int chunks = static_cast<int>(max_chunks);
  int64_t per = (n + chunks - 1) / chunks;
  std::exception_ptr first_error;
  std::mutex error_mu;
  ThreadPool::get().run(chunks, [&](int c) {
    int64_t b = c * per, e = std::min(n, b + per);
    if (b >= e) return;
    bool was = in_parallel_region;
    in_parallel_region = true;
    try {
      fn(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lk(error_mu);
      if (!first_error) first_error = std::current_exception();
    }
    in_parallel_region = was;
  });
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace colony::kernels::cpu
