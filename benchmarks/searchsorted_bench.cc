// torch.searchsorted's work in Colony: float32 values (the fractional parts of i times the golden
// ratio, spread evenly over [0, 1)) into sorted boundaries (evenly spaced over [0, 1]), 1-D, left;
// prints one line per shape, `searchsorted <values>x<boundaries>[ sorter] us=<median microseconds>`.
// Colony's twin of searchsorted_pytorch.py; benchmarks/searchsorted_rounds.sh alternates the two.
//   bazel run -c opt --config=cpu //benchmarks:searchsorted_bench -- --threads 2
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_timing.h"
#include "tensor/threads.h"

namespace {

using namespace colony;  // NOLINT: a benchmark program

void run(int64_t m, int64_t n, bool with_sorter, int trials) {
  std::vector<float> vals(m);
  for (int64_t i = 0; i < m; ++i) {
    double whole;
    vals[i] = static_cast<float>(std::modf(static_cast<double>(i) * 0.6180339887498949, &whole));
  }
  Tensor values = raw::from_vector(vals, {m}, TensorOptions(kFloat32));
  Tensor boundaries = raw::linspace(0.0, 1.0, n, TensorOptions(kFloat32));
  // The sorter case searches the boundaries reversed through the positions that sort them.
  Tensor sorter;
  if (with_sorter) {
    boundaries = raw::contiguous(flip(boundaries, {0}));
    sorter = raw::arange(static_cast<double>(n - 1), -1.0, -1.0, TensorOptions(kInt64));
  }
  std::vector<double> times;
  for (int t = 0; t < trials + 2; ++t) {
    auto start = std::chrono::steady_clock::now();
    Tensor out = searchsorted(boundaries, values, false, false, std::nullopt, sorter);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (t >= 2) times.push_back(us);  // 2 warm-up trials
  }
  std::printf("searchsorted %lldx%lld%s us=%.1f\n", static_cast<long long>(m), static_cast<long long>(n),
              with_sorter ? " sorter" : "", colony::bench::median(times));
}

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 10});
  set_num_threads(threads);
  std::printf("threads=%d\n", threads);
  run(1000000, 1000, false, trials);
  run(1000000, 100000, false, trials);
  run(1000000, 100000, true, trials);
  return 0;
}
