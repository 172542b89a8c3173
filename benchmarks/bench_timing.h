// Timing helpers the kernel benchmarks share, defined once: the median of a list of times, and the
// median time of repeated calls. With COLONY_BENCH_CPU_TIME=1 in the environment the calls are
// timed by the calling thread's CPU time instead of the wall clock (bench_timing.py reads the same
// variable): on a machine other processes load, that leaves out the time they held the core. It
// measures the whole call only when the call runs on that thread, so use it with --threads 1.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace colony::bench {

// The median of v: for an even count the upper of the two middle values (v[size / 2]), as every
// benchmark's figures in docs/benchmarks.md were taken; 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Microseconds on the benchmarks' clock: the wall clock, or with COLONY_BENCH_CPU_TIME=1 the
// calling thread's CPU time.
inline double clock_us() {
  static const bool thread_cpu = [] {
    const char* v = std::getenv("COLONY_BENCH_CPU_TIME");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  if (thread_cpu) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The median time, in microseconds, of `trials` calls of fn after `warmup` untimed ones.
inline double median_call_us(const std::function<void()>& fn, int trials, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  for (int i = 0; i < trials; ++i) {
    const double start = clock_us();
    fn();
    times.push_back(clock_us() - start);
  }
  return median(std::move(times));
}

}  // namespace colony::bench
