#include "kernels/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#if defined(__linux__)
#include <sched.h>
#endif
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

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waiting threads spin for about kSpin before they block: a LeNet step at batch 32 issues a few
// dozen parallel jobs of 10-100 us each, and waking a thread parked in futex_wait costs 10-50 us on
// a VM (16 % of a 2-thread step went to futex wake/wait when the pool always blocked). Spinning
// this briefly keeps a worker ready between consecutive ops; it still parks during longer serial
// stretches, so it does not hold a core that data-loader or communication threads need.
//
// Every 64 pauses (about 1.1 us on the Sapphire Rapids VM) a waiting thread checks whether the
// thread it waits for last ran on its own CPU (a worker waiting for a job: the caller, as of its
// last job; a caller waiting for a chunk: the worker that claimed it), and if so yields the CPU.
// Where the two threads of a 2-thread pool end up on one CPU (the futex wake puts the woken
// thread on the waker's CPU when the other core is busy with another process), spinning with
// pauses alone holds that CPU for the whole kSpin while the thread it waits for sits runnable
// behind it: perf sched showed the caller and its worker taking turns on CPU 0 for 300 / 140 us,
// and a parallel_for of nothing after a 300 us serial stretch took 104 us (its median; under
// 0.5 us with the yield). Yielding in every case was tried: a worker that gives its CPU to
// another process is not there for the next job (2 x 20 us of work then ran on the caller alone
// in 99 % of the calls under load), and a caller that does waits a whole time slice to get it
// back. sched_yield costs 0.22-0.25 us when nothing else is runnable.
constexpr auto kSpin = std::chrono::microseconds(100);
constexpr int kPausesPerYield = 64;

// The CPU the calling thread runs on, -1 where the platform does not say (then nobody yields).
int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// Spins until ready() or for about kSpin; yields the CPU every kPausesPerYield pauses where
// should_yield() says so.
template <typename Ready, typename ShouldYield>
bool spin_until(Ready ready, ShouldYield should_yield) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % kPausesPerYield == 0) {
      if (std::chrono::steady_clock::now() - start > kSpin) return ready();
      if (should_yield()) std::this_thread::yield();
    }
  }
}

// The current job in one word, so that claiming a chunk and checking that it belongs to the job a
// worker woke for is a single compare-and-swap: generation (32 bits), chunk count (16 bits) and the
// claims (16 bits). A worker that wakes late for a finished job sees another generation and leaves.
//
// The claims of a job of at most kMaskChunks chunks are a bitmask, so each thread can take its own
// chunk first: the caller chunk 0, worker w chunk w + 1 (then any chunk left, so a late worker's
// chunk is still done by whoever is free). Consecutive ops split the same rows the same way (an
// elementwise pass, LayerNorm and the products' row splits cut [B*T, C] tensors into equal halves),
// so with a fixed owner per chunk a thread reads the rows it wrote itself from its own L2. Claimed
// in order from one counter, the caller and the worker raced for chunk 0, so about half the time
// the rows sat in the other core's cache: the char-level GPT's float32 step on 2 threads ran 2-3 %
// faster with the claims fixed (6 alternating rounds, per-round ratios 0.99-1.08, median 1.02;
// docs/benchmarks.md, branch gpt2t, 2026-12-06). Larger jobs count the next chunk.
struct JobWord {
  static uint64_t pack(uint32_t gen, uint32_t chunks, uint32_t claims) {
    return (uint64_t{gen} << 32) | (uint64_t{chunks} << 16) | claims;
  }
  static uint32_t gen(uint64_t w) { return static_cast<uint32_t>(w >> 32); }
  static uint32_t chunks(uint64_t w) { return static_cast<uint32_t>(w >> 16) & 0xffff; }
  static uint32_t claims(uint64_t w) { return static_cast<uint32_t>(w) & 0xffff; }
};
constexpr int kMaxChunks = 0xffff;
constexpr uint32_t kMaskChunks = 16;

// The chunk a thread claims next from job word w, -1 when none is left: for a masked job its own
// chunk `self` if free, else the lowest free one; otherwise the next in order.
int next_chunk(uint64_t w, int self) {
  const uint32_t chunks = JobWord::chunks(w), claims = JobWord::claims(w);
  if (chunks > kMaskChunks) return claims < chunks ? static_cast<int>(claims) : -1;
  const uint32_t free = ~claims & ((uint32_t{1} << chunks) - 1);
  if (free == 0) return -1;
  if (self >= 0 && static_cast<uint32_t>(self) < chunks && ((free >> self) & 1u)) return self;
  return __builtin_ctz(free);
}

// w with chunk c claimed.
uint64_t with_claim(uint64_t w, int c) {
  return JobWord::chunks(w) > kMaskChunks ? w + 1 : w | (uint64_t{1} << c);
}

// A fixed set of workers that take chunks of the current job; the caller takes chunks too, so a
// worker that is slow to wake costs at most doing its chunk on the caller. The pool is resized
// lazily when set_num_threads changes the count.
class ThreadPool {
 public:
  static ThreadPool& get() {
    static ThreadPool* pool = new ThreadPool();  // leaked: workers must outlive static destructors
    return *pool;
  }

  int threads() const { return threads_.load(); }
  void set_threads(int n) {
    threads_.store(n);
    std::lock_guard<std::mutex> lk(mu_);
    cv_work_.notify_all();  // workers set aside by a lower count (worker_loop)
  }

  void run(int chunks, const std::function<void(int)>& chunk_fn) {
    // One parallel job at a time; another thread (a data-loader worker, say) that finds the pool
    // busy runs its chunks itself rather than waiting.
    std::unique_lock<std::mutex> job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock()) {
      for (int c = 0; c < chunks; ++c) chunk_fn(c);
      return;
    }
    ensure_workers(chunks - 1);
    job_ = &chunk_fn;
    remaining_.store(chunks, std::memory_order_relaxed);
    const uint32_t gen = JobWord::gen(job_word_.load(std::memory_order_relaxed)) + 1;
    // seq_cst publish, paired with the workers' seq_cst sleeper count: either a worker sees the
    // new job before it parks, or this thread sees it parked and wakes it.
    caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
    job_word_.store(JobWord::pack(gen, static_cast<uint32_t>(chunks), 0), std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lk(mu_);
      cv_work_.notify_all();
    }
    take_chunks(gen, /*self=*/0);
    auto done = [&] { return remaining_.load(std::memory_order_acquire) == 0; };
    auto worker_here = [&] {
      const int cpu = current_cpu();
      return cpu >= 0 && claim_cpu_.load(std::memory_order_relaxed) == cpu;
    };
    if (!spin_until(done, worker_here)) {
      std::unique_lock<std::mutex> lk(mu_);
      caller_waiting_ = true;
      cv_done_.wait(lk, done);
      caller_waiting_ = false;
    }
  }

 private:
  ThreadPool() : threads_(default_threads()) {}

  void ensure_workers(int n) {
    while (static_cast<int>(workers_.size()) < n) {
      // The new worker counts the job about to be published (run() publishes it after this) as
      // fresh, so it helps with the job that needed it.
      const int self = static_cast<int>(workers_.size()) + 1;
      const uint32_t seen = JobWord::gen(job_word_.load(std::memory_order_acquire));
      workers_.emplace_back([this, self, seen] { worker_loop(self, seen); });
      workers_.back().detach();
    }
  }

  // Runs chunks of job `gen` until none is left, its own chunk `self` first (0: the caller; worker
  // w: w + 1). A chunk is claimed before it runs and counted in remaining_ after, so the job (and
  // job_) outlives every claimed chunk.
  void take_chunks(uint32_t gen, int self) {
    uint64_t w = job_word_.load(std::memory_order_acquire);
    for (;;) {
      if (JobWord::gen(w) != gen) return;
      const int c = next_chunk(w, self);
      if (c < 0) return;
      if (!job_word_.compare_exchange_weak(w, with_claim(w, c), std::memory_order_acq_rel,
                                           std::memory_order_acquire))
        continue;
      if (self != 0) claim_cpu_.store(current_cpu(), std::memory_order_relaxed);
      (*job_)(c);
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lk(mu_);
        if (caller_waiting_) cv_done_.notify_one();
      }
      w = job_word_.load(std::memory_order_acquire);
    }
  }

  void worker_loop(int self, uint32_t seen) {
    for (;;) {
      // A worker past the thread count (set_num_threads lowered it) parks until the count grows
      // again, instead of spinning through every job and taking the chunks meant for the others.
      if (self >= threads_.load(std::memory_order_relaxed)) {
        std::unique_lock<std::mutex> lk(mu_);
        cv_work_.wait(lk, [&] { return self < threads_.load(std::memory_order_relaxed); });
        continue;  // `seen` kept: a job published while it woke is still fresh to it
      }
      auto fresh = [&] { return JobWord::gen(job_word_.load(std::memory_order_acquire)) != seen; };
      auto caller_here = [&] {
        const int cpu = current_cpu();
        return cpu >= 0 && caller_cpu_.load(std::memory_order_relaxed) == cpu;
      };
      if (!spin_until(fresh, caller_here)) {
        std::unique_lock<std::mutex> lk(mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        cv_work_.wait(lk, [&] {
          return JobWord::gen(job_word_.load(std::memory_order_seq_cst)) != seen;
        });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = JobWord::gen(job_word_.load(std::memory_order_acquire));
      if (self < threads_.load(std::memory_order_relaxed)) take_chunks(seen, self);
    }
  }

  std::atomic<int> threads_;
  std::mutex job_mutex_;
  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* job_ = nullptr;  // written only under job_mutex_, before job_word_
  std::atomic<uint64_t> job_word_{0};
  std::atomic<int> remaining_{0}, sleepers_{0};
  // Hints for the spin's yield: the CPU the last chunk a worker claimed ran on, the caller's CPU
  // when it published the last job.
  std::atomic<int> claim_cpu_{-2}, caller_cpu_{-2};
  bool caller_waiting_ = false;  // guarded by mu_
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
  int chunks = static_cast<int>(std::min<int64_t>(max_chunks, kMaxChunks));
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
