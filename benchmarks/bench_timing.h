// Timing helpers the kernel benchmarks share, defined once: the median of a list of times, and the
// median time of repeated calls.
#pragma once

#include <algorithm>
#include <chrono>
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

// The median wall time, in microseconds, of `trials` calls of fn after `warmup` untimed ones.
inline double median_call_us(const std::function<void()>& fn, int trials, int warmup = 2) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  for (int i = 0; i < trials; ++i) {
    const auto start = clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::micro>(clock::now() - start).count());
  }
  return median(std::move(times));
}

}  // namespace colony::bench
