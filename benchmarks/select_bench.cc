// median, nanmedian and kthvalue along a dim in Colony: float32 values spread pseudo-randomly over
// [0, 1) (i * 2654435761 mod 2^32, over 2^32); prints one line per case,
// `<op> <shape> dim=<d> us=<median microseconds>`. Colony's twin of select_pytorch.py;
// benchmarks/select_rounds.sh alternates the two.
//   bazel run -c opt --config=cpu //benchmarks:select_bench -- --threads 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_timing.h"
#include "tensor/threads.h"

namespace {

using namespace colony;  // NOLINT: a benchmark program

Tensor spread(int64_t rows, int64_t cols) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t h = (static_cast<uint64_t>(i) * 2654435761ull) % (uint64_t{1} << 32);
    v[i] = static_cast<float>(static_cast<double>(h) / 4294967296.0);
  }
  return raw::from_vector(v, {rows, cols}, TensorOptions(kFloat32));
}

void run(const char* op, int64_t rows, int64_t cols, int64_t dim, int trials, const std::function<void(const Tensor&)>& f) {
  Tensor x = spread(rows, cols);
  std::vector<double> times;
  for (int t = 0; t < trials + 2; ++t) {
    auto start = std::chrono::steady_clock::now();
    f(x);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (t >= 2) times.push_back(us);  // 2 warm-up trials
  }
  std::printf("%s %lldx%lld dim=%lld us=%.1f\n", op, static_cast<long long>(rows), static_cast<long long>(cols),
              static_cast<long long>(dim), colony::bench::median(times));
}

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 10});
  set_num_threads(threads);
  std::printf("threads=%d\n", threads);
  run("median", 1024, 4096, 1, trials, [](const Tensor& x) { median(x, 1); });
  run("median", 1024, 4096, 0, trials, [](const Tensor& x) { median(x, 0); });
  run("nanmedian", 1024, 4096, 1, trials, [](const Tensor& x) { nanmedian(x, 1); });
  run("kthvalue_k256", 4096, 1024, 1, trials, [](const Tensor& x) { kthvalue(x, 256, 1); });
  return 0;
}
