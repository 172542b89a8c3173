// ZeRO stages 1 and 2 against plain DDP on LeNet with AdamW: the optimizer-state and gradient bytes
// each rank holds after backward (the counters of distributed/zero/zero_redundancy_optimizer.h),
// and the step time in alternating rounds (DDP, ZeRO-1, ZeRO-2, DDP, ...: on a shared machine all
// see the same load; the ratios are the figures to read).
//
//   colonyrun --nproc_per_node=N --master_port=0 .bazel/bin/benchmarks/zero_bench [--steps 20] [--rounds 5] [--batch 32]
//
// Prints, on rank 0, one table row per optimizer: the largest rank's state and gradient bytes,
// that as a fraction of DDP's, and the goal 1/N + 5 %; then the median step times and their ratio.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "colony.h"
#include "examples/lenet_cifar10/lenet.h"

namespace {

using namespace colony;

int int_arg(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

// One model, its DDP and its optimizer.
struct Setup {
  std::string name;
  std::shared_ptr<lenet::LeNet> model;
  std::shared_ptr<dist::DistributedDataParallel> ddp;
  std::unique_ptr<optim::Optimizer> opt;
  std::vector<double> step_ms;

  size_t state_bytes() const {
    if (auto* z = dynamic_cast<dist::ZeroRedundancyOptimizer*>(opt.get())) return z->state_bytes();
    return dist::optimizer_state_bytes(*opt);
  }
  size_t gradient_bytes() const {
    if (auto* z = dynamic_cast<dist::ZeroRedundancyOptimizer*>(opt.get())) return z->gradient_bytes();
    return dist::gradient_bytes(ddp->parameters());
  }
};

Setup make(const std::string& name, int kind) {
  Setup s;
  s.name = name;
  manual_seed(1);
  s.model = std::make_shared<lenet::LeNet>();
  // kind: 0 DDP, 1 ZeRO-1 by parameter, 2 ZeRO-1 by element, 3 ZeRO-2.
  s.ddp = std::make_shared<dist::DistributedDataParallel>(
      s.model, dist::DistributedDataParallelOptions().zero_stage(kind == 3 ? 2 : 0));
  const auto adamw = optim::AdamWOptions(1e-3);
  if (kind == 0) {
    s.opt = std::make_unique<optim::AdamW>(s.ddp->parameters(), adamw);
  } else {
    auto o = dist::ZeroRedundancyOptimizerOptions().shard_by(kind == 1 ? dist::ShardBy::kParameter
                                                                        : dist::ShardBy::kElement);
    if (kind == 3) o.ddp(s.ddp);
    s.opt = std::make_unique<dist::ZeroRedundancyOptimizer>(
        s.ddp->parameters(), adamw, dist::optimizer_factory<optim::AdamW, optim::AdamWOptions>(), o);
  }
  return s;
}

void run_steps(Setup& s, const std::vector<std::pair<Tensor, Tensor>>& batches, int steps, bool timed) {
  for (int i = 0; i < steps; ++i) {
    const auto& [x, y] = batches[static_cast<size_t>(i) % batches.size()];
    const auto t0 = std::chrono::steady_clock::now();
    s.opt->zero_grad();
    F::cross_entropy(s.ddp->forward(x), y).backward();
    s.opt->step();
    if (timed)
      s.step_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
}

// The largest value over the ranks.
int64_t max_over_ranks(int64_t v) {
  return static_cast<int64_t>(dist::all_reduce(static_cast<double>(v), dist::ReduceOp::kMax));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = int_arg(argc, argv, "--steps", 20);
  const int rounds = int_arg(argc, argv, "--rounds", 5);
  const int batch = int_arg(argc, argv, "--batch", 32);
  if (steps <= 0 || rounds <= 0 || batch <= 0) {
    std::fprintf(stderr, "usage: zero_bench [--steps N] [--rounds N] [--batch N] (positive)\n");
    return 2;
  }
  dist::init_process_group();
  const int world = dist::get_world_size();
  const int rank = dist::get_rank();
  std::vector<std::pair<Tensor, Tensor>> batches;
  Generator g(static_cast<uint64_t>(100 + rank));
  for (int i = 0; i < 4; ++i)
    batches.emplace_back(raw::randn({batch, 3, 32, 32}, {}, &g), raw::randint(0, 10, {batch}, TensorOptions(kInt64), &g));
  std::vector<Setup> setups;
  setups.push_back(make("DDP + AdamW", 0));
  setups.push_back(make("ZeRO-1 by parameter", 1));
  setups.push_back(make("ZeRO-1 by element", 2));
  setups.push_back(make("ZeRO-2", 3));
  for (auto& s : setups) run_steps(s, batches, 3, false);  // state allocated, buckets rebuilt
  const double ddp_state = static_cast<double>(max_over_ranks(static_cast<int64_t>(setups[0].state_bytes())));
  const double ddp_grads = static_cast<double>(max_over_ranks(static_cast<int64_t>(setups[0].gradient_bytes())));
  if (rank == 0) {
    std::printf("zero_bench: %d rank(s), LeNet (62,006 parameters), AdamW, batch %d per rank, backend %s\n", world,
                batch, world > 1 ? dist::default_process_group()->backend_name().c_str() : "none");
    std::printf("| N | optimizer | state bytes, largest rank | of DDP's | goal 1/N + 5 %% | gradient bytes, largest rank | of DDP's |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
  }
  for (auto& s : setups) {
    const double state = static_cast<double>(max_over_ranks(static_cast<int64_t>(s.state_bytes())));
    const double grads = static_cast<double>(max_over_ranks(static_cast<int64_t>(s.gradient_bytes())));
    if (rank == 0)
      std::printf("| %d | %s | %.0f | %.3f | %.3f | %.0f | %.3f |\n", world, s.name.c_str(), state, state / ddp_state,
                  1.0 / world + 0.05, grads, grads / ddp_grads);
  }
  // Alternating rounds: DDP, ZeRO-1 by element, ZeRO-2, `rounds` times.
  for (int r = 0; r < rounds; ++r)
    for (size_t k : {size_t{0}, size_t{2}, size_t{3}}) run_steps(setups[k], batches, steps, true);
  const double ddp_ms = median(setups[0].step_ms), one_ms = median(setups[2].step_ms), two_ms = median(setups[3].step_ms);
  if (rank == 0)
    std::printf("step time, median of %d x %d steps in alternating rounds: DDP %.3f ms, ZeRO-1 by element %.3f ms "
                "(%.3f x DDP), ZeRO-2 %.3f ms (%.3f x DDP)\n",
                rounds, steps, ddp_ms, one_ms, one_ms / ddp_ms, two_ms, two_ms / ddp_ms);
  setups.clear();
  dist::destroy_process_group();
}
