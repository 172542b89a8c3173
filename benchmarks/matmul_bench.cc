// CPU GEMM throughput: a 512 x 512 x 512 float32 ops::mm on 1 and 2 threads, after warm-up, as
// GFLOP/s (2 * n^3 flops per product). Optional argument: the matrix size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

double seconds_per_mm(const colony::Tensor& a, const colony::Tensor& b) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) colony::ops::mm(a, b);  // warm-up: page in memory, start the pool
  // Best of 5 batches, each at least ~0.2 s: the minimum is the least disturbed by other work.
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    int reps = 0;
    auto start = clock::now();
    double elapsed = 0;
    do {
      colony::ops::mm(a, b);
      ++reps;
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < 0.2);
    best = std::min(best, elapsed / reps);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : 512;
  colony::Generator gen(1);
  colony::Tensor a = colony::ops::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  colony::Tensor b = colony::ops::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  double flops = 2.0 * static_cast<double>(n) * n * n;
  std::printf("mm float32 %lld x %lld x %lld\n", static_cast<long long>(n), static_cast<long long>(n),
              static_cast<long long>(n));
  for (int threads : {1, 2}) {
    colony::set_num_threads(threads);
    double s = seconds_per_mm(a, b);
    std::printf("threads=%d  %.3f ms  %.1f GFLOP/s\n", threads, s * 1e3, flops / s * 1e-9);
  }
  return 0;
}
