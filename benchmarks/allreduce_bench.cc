// All-reduce latency and bandwidth of the Gloo process group, run under the launcher:
//   colonyrun --nproc_per_node=2 --master_port=0 .bazel/bin/benchmarks/allreduce_bench
// Prints, on rank 0, the median time of an average-all-reduce for float32 sizes from LeNet's
// one bucket (62,006 elements) to 25 MiB.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "distributed/init.h"
#include "tensor/raw_ops.h"

using namespace colony;

int main() {
  dist::init_process_group();
  auto group = dist::default_process_group();
  if (!group) {
    std::fprintf(stderr, "run me under colonyrun with --nproc_per_node >= 2\n");
    return 1;
  }
  for (int64_t n : {int64_t{1}, int64_t{62006}, int64_t{131072}, int64_t{262144}, int64_t{524288}, int64_t{6553600}}) {
    Tensor t = raw::ones({n});
    std::vector<double> ms;
    const int reps = n > 1000000 ? 10 : 200;
    for (int i = 0; i < reps + 5; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      group->allreduce(t, dist::ReduceOp::kAvg)->wait();
      if (i >= 5) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    if (dist::is_main_process()) {
      const double med = ms[ms.size() / 2];
      std::printf("allreduce float32 x %lld (%.2f MiB): median %.3f ms, %.0f MB/s\n", static_cast<long long>(n),
                  n * 4.0 / (1 << 20), med, n * 4.0 / 1e6 / (med / 1e3));
    }
  }
  dist::destroy_process_group();
}
