// LeNet training on one GPU: images/s at batch 32, 128 and 1024, and the kernel launches and host
// synchronizations of one training step (forward, cross-entropy, backward, SGD with momentum), as
// counted by the CUDA runtime layer (runtime/cuda.h). Batches live in device memory, so the step is
// all that is timed; benchmarks/lenet_gpu_pytorch.py is the PyTorch reference on the same GPU.
//
//   bazel run -c opt //benchmarks:lenet_gpu -- [--steps N] [--warmup N] [--batch_sizes 32 128 1024] [--cuda_graph]
//
// --cuda_graph captures the step once (cuda::make_graphed_step, after the warm-up steps) and times
// replays instead: each step copies its batch into the static input tensors and launches the graph.
//
// Without a usable GPU it prints why and exits 0. One line per batch size:
//   colony batch=32 images_per_s=... step_ms=... launches_per_step=... host_syncs_per_step=...
// (colony-graph batch=... with --cuda_graph; launches_per_step then counts the batch copies, the
// Philox-state write and the graph launch: the graph's kernels are not counted one by one).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "colony.h"
#include "examples/lenet_cifar10/lenet.h"

namespace {

using namespace colony;

struct Result {
  double images_per_s, step_ms, launches_per_step, syncs_per_step;
};

Result bench(int64_t batch, int steps, int warmup, Device dev, bool graph) {
  manual_seed(0);
  auto model = std::make_shared<lenet::LeNet>();
  model->to(dev);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.001).momentum(0.9));
  // 8 different batches, cycled, made on the device.
  std::vector<Tensor> data, target;
  for (int i = 0; i < 8; ++i) {
    data.push_back(raw::randn({batch, 3, 32, 32}, TensorOptions(kFloat32).device(dev)));
    target.push_back(raw::randint(0, 10, {batch}, TensorOptions(kInt64).device(dev)));
  }
  std::function<void(int)> step = [&](int i) {
    opt.zero_grad();
    Tensor loss = F::cross_entropy(model->forward(data[i % 8]), target[i % 8]);
    loss.backward();
    opt.step();
  };
  // The graph reads the static x, y; a replay is preceded by copying the batch into them.
  Tensor x = raw::clone(data[0]), y = raw::clone(target[0]), loss;
  cuda::GraphedStep graphed;
  if (graph) {
    graphed = cuda::make_graphed_step(
        [&] {
          opt.zero_grad();
          loss = F::cross_entropy(model->forward(x), y);
          loss.backward();
          opt.step();
        },
        dev, std::max(warmup, 1));
    step = [&](int i) {
      x.copy_(data[i % 8]);
      y.copy_(target[i % 8]);
      graphed.replay();
    };
  }
  for (int i = 0; i < warmup; ++i) step(i);
  cuda::synchronize();
  const int64_t launches = cuda::kernel_launch_count(), syncs = cuda::host_sync_count();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step(i);
  const int64_t step_launches = cuda::kernel_launch_count() - launches;
  const int64_t step_syncs = cuda::host_sync_count() - syncs;
  cuda::synchronize();  // the timed work ends when the device has finished it
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {batch * steps / s, 1e3 * s / steps, double(step_launches) / steps, double(step_syncs) / steps};
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300, warmup = 30;
  std::vector<int64_t> batches = {32, 128, 1024};
  bool graph = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (a == "--warmup" && i + 1 < argc) {
      warmup = std::atoi(argv[++i]);
    } else if (a == "--cuda_graph") {
      graph = true;
    } else if (a == "--batch_sizes") {
      batches.clear();
      while (i + 1 < argc && argv[i + 1][0] != '-') batches.push_back(std::atoll(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: lenet_gpu [--steps N] [--warmup N] [--batch_sizes B...] [--cuda_graph]\n");
      return 2;
    }
  }
  if (steps <= 0 || warmup < 0 || batches.empty()) {
    std::fprintf(stderr, "lenet_gpu: --steps must be positive, --warmup non-negative, and one batch size given\n");
    return 2;
  }
  if (!colony::cuda::is_available()) {
    std::printf("lenet_gpu: skipped: %s\n", colony::cuda::unavailable_reason().c_str());
    return 0;
  }
  std::printf("lenet_gpu: %d timed steps after %d warm-up steps; COLONY_CUDA_SYNC=%s\n", steps, warmup,
              colony::cuda::sync_after_launch() ? "1 (debug: timings meaningless)" : "0");
  for (int64_t b : batches) {
    Result r = bench(b, steps, warmup, colony::Device::cuda(0), graph);
    std::printf("%s batch=%lld images_per_s=%.1f step_ms=%.3f launches_per_step=%.1f host_syncs_per_step=%.2f\n",
                graph ? "colony-graph" : "colony", static_cast<long long>(b), r.images_per_s, r.step_ms,
                r.launches_per_step, r.syncs_per_step);
    std::fflush(stdout);
  }
  return 0;
}
