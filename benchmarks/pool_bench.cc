// The thread pool's own cost (kernels/cpu/parallel.h): how long a parallel_for of nothing takes,
// after serial stretches of different lengths on the calling thread (the worker still spinning, or
// parked and woken through the futex), and whether the worker took its chunk or the caller did all.
//
//   bazel run -c opt --config=cpu //benchmarks:pool_bench -- --threads 2 [--trials 20000]
//
// One line per case: the median and 90th percentile of the call's wall time (from the call to its
// return, the caller's serial stretch excluded) and the share of calls in which a chunk ran on
// another thread than the caller. The last case splits 2 x 20 us of busy work, so its time minus
// 20 us is what the split costs beyond the work.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "benchmarks/bench_args.h"
#include "kernels/cpu/parallel.h"

namespace {

using Clock = std::chrono::steady_clock;

// Busy work for about `us` microseconds on the calling thread (what an op's serial part does to
// the pool: the worker spins meanwhile, then parks once its spin runs out).
void busy(double us) {
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
  while (Clock::now() < until) {
  }
}

void run_case(const char* name, int trials, double gap_us, double chunk_us) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(trials));
  int helped = 0;
  for (int t = 0; t < trials; ++t) {
    if (gap_us > 0) busy(gap_us);
    std::atomic<bool> other{false};
    const auto t0 = Clock::now();
    colony::kernels::cpu::parallel_for(2, 1, [&](int64_t, int64_t) {
      if (chunk_us > 0) busy(chunk_us);
      if (std::this_thread::get_id() != caller) other.store(true, std::memory_order_relaxed);
    });
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
    helped += other.load() ? 1 : 0;
  }
  std::sort(ns.begin(), ns.end());
  std::printf("%-28s median %8.0f ns  p90 %8.0f ns  worker took a chunk in %5.1f %% of calls\n", name,
              ns[ns.size() / 2], ns[ns.size() * 9 / 10], 100.0 * helped / trials);
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = colony::bench::parse_threads_trials(argc, argv, {2, 20000});
  if (args.threads < 2 || args.trials < 20) {
    std::fprintf(stderr, "%s: expected --threads >= 2 and --trials >= 20\n", argv[0]);
    return 2;
  }
  colony::kernels::cpu::set_num_threads(args.threads);
  std::printf("threads=%d trials=%d\n", args.threads, args.trials);
  run_case("warm-up", args.trials / 10, 0, 0);
  run_case("empty, back to back", args.trials, 0, 0);
  run_case("empty, after 5 us serial", args.trials, 5, 0);
  run_case("empty, after 30 us serial", args.trials / 2, 30, 0);
  run_case("empty, after 80 us serial", args.trials / 4, 80, 0);
  run_case("empty, after 300 us serial", args.trials / 20, 300, 0);
  run_case("2 x 20 us, back to back", args.trials / 4, 0, 20);
  run_case("2 x 20 us, after 300 us", args.trials / 20, 300, 20);
  return 0;
}
