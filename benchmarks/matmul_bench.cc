// CPU GEMM throughput: a 512 x 512 x 512 float32 raw::mm on 1 and 2 threads, after warm-up, as
// GFLOP/s (2 * n^3 flops per product). With 1 thread the kernel is one Eigen product; with 2 the
// rows are split over the thread pool, one single-threaded Eigen product per chunk. Optional
// argument: the matrix size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tensor/raw_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

struct Timing {
  double best, median;  // seconds per product
};

// Many short trials: the best is the one least disturbed by other processes
// on the machine (the figure to compare), the median what a busy machine gives.
Timing time_mm(const colony::Tensor& a, const colony::Tensor& b, int trials) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) colony::raw::mm(a, b);  // warm-up: page in memory, start the pool
  std::vector<double> t;
  for (int i = 0; i < trials; ++i) {
    auto start = clock::now();
    colony::raw::mm(a, b);
    t.push_back(std::chrono::duration<double>(clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : 512;
  colony::Generator gen(1);
  colony::Tensor a = colony::raw::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  colony::Tensor b = colony::raw::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  double flops = 2.0 * static_cast<double>(n) * n * n;
  std::printf("mm float32 %lld x %lld x %lld\n", static_cast<long long>(n), static_cast<long long>(n),
              static_cast<long long>(n));
  for (int threads : {1, 2}) {
    colony::set_num_threads(threads);
    Timing t = time_mm(a, b, 100);
    std::printf("threads=%d  best %.3f ms = %.1f GFLOP/s   median %.3f ms = %.1f GFLOP/s\n", threads, t.best * 1e3,
                flops / t.best * 1e-9, t.median * 1e3, flops / t.median * 1e-9);
  }
  return 0;
}
