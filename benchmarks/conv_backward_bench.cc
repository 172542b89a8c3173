// An ordinary backward (no create_graph) through the autograd nodes of conv2d, conv_transpose2d,
// max_pool2d, avg_pool2d, adaptive_avg_pool2d and training-mode batch_norm, float32 on LeNet-sized
// layers: the median microseconds of forward + backward per call, on 1 thread. Run the binaries
// built before and after a change to those nodes' closures, alternating, to see that the backward
// kept its speed (the nodes became differentiable twice; an ordinary backward must still run the
// same fused kernels).
//
//   bazel build -c opt --config=cpu //benchmarks:conv_backward_bench
//   COLONY_BENCH_CPU_TIME=1 bazel-bin/benchmarks/conv_backward_bench [trials]
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "autograd/autograd.h"
#include "benchmarks/bench_timing.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using colony::Tensor;
namespace raw = colony::raw;

Tensor leaf(const colony::Shape& shape, uint64_t seed) {
  colony::Generator gen(seed);
  Tensor t = raw::randn(shape, colony::kFloat32, &gen);
  t.requires_grad_(true);
  return t;
}

// forward(...) then backward of sum(out * g), g fixed; the median over `trials` calls.
void time_backward(const char* name, int trials, const std::function<Tensor()>& forward) {
  Tensor g;
  const double us = colony::bench::median_call_us(
      [&] {
        Tensor y = forward();
        if (!g.defined()) g = raw::ones_like(y);
        colony::sum(colony::mul(y, g)).backward();
      },
      trials);
  std::printf("%-44s %10.1f us\n", name, us);
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 50;
  colony::set_num_threads(1);
  using namespace colony;
  Tensor x1 = leaf({32, 3, 32, 32}, 1), w1 = leaf({6, 3, 5, 5}, 2), b1 = leaf({6}, 3);
  Tensor x2 = leaf({32, 6, 14, 14}, 4), w2 = leaf({16, 6, 5, 5}, 5), b2 = leaf({16}, 6);
  Tensor xd = leaf({32, 16, 16, 16}, 7), wd = leaf({16, 1, 3, 3}, 8);
  Tensor xt = leaf({32, 16, 5, 5}, 9), wt = leaf({16, 6, 5, 5}, 10);
  Tensor bw = leaf({16}, 11), bb = leaf({16}, 12);
  time_backward("conv2d 3->6 k5 32x32 +bias, batch 32", trials, [&] { return conv2d(x1, w1, b1); });
  time_backward("conv2d 6->16 k5 14x14 +bias, batch 32", trials, [&] { return conv2d(x2, w2, b2); });
  time_backward("conv2d depthwise 16 k3 16x16 pad 1", trials, [&] { return conv2d(xd, wd, Tensor(), 1, 1, 1, 16); });
  time_backward("conv_transpose2d 16->6 k5 5x5 stride 2", trials, [&] { return conv_transpose2d(xt, wt, Tensor(), 2); });
  time_backward("max_pool2d 2x2, [32, 16, 16, 16]", trials, [&] { return max_pool2d(xd, 2); });
  time_backward("avg_pool2d 3x3 stride 2, [32, 16, 16, 16]", trials, [&] { return avg_pool2d(xd, 3, 2); });
  {
    // The forward alone, to tell a change in the backward from the forward's.
    const double us = colony::bench::median_call_us([&] { avg_pool2d(xd, 3, 2); }, trials);
    std::printf("%-44s %10.1f us\n", "  its forward alone", us);
  }
  time_backward("adaptive_avg_pool2d 5x5, [32, 16, 16, 16]", trials, [&] { return adaptive_avg_pool2d(xd, {5, 5}); });
  time_backward("batch_norm training, [32, 16, 16, 16]", trials,
                [&] { return batch_norm(xd, bw, bb, Tensor(), Tensor(), true); });
  return 0;
}
