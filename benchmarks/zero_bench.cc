// ZeRO stages 1 and 2 against plain DDP with AdamW, on LeNet or on the character-level GPT
// (examples/char_gpt/gpt.h, its default size: 4 layers of width 128, context 64, 65 tokens): the
// optimizer-state and gradient bytes each rank holds after backward (the counters of
// distributed/zero/zero_redundancy_optimizer.h), the bytes each rank sends per step, and the step
// time in alternating rounds (DDP, ZeRO-1, ZeRO-2, ZeRO-1 and ZeRO-2 with overlap_all_gather, DDP,
// ...: on a shared machine all see the same load; the ratios are the figures to read).
//
//   colonyrun --nproc_per_node=N --master_port=0 .bazel/bin/benchmarks/zero_bench [--model lenet|gpt]
//       [--steps 20] [--rounds 5] [--batch 32 for LeNet, 12 for the GPT]
//
// Prints, on rank 0, one table row per optimizer: the largest rank's state and gradient bytes,
// that as a fraction of DDP's, the goal 1/N + 5 %, and the bytes sent per step; then the median
// step times, their ratios, and the median of the per-round ratios. A step is timed from
// zero_grad to the end of opt.step(); with overlap_all_gather the all-gathers step() starts are
// waited for by the next forward, so their wait is in the next step's time.
//
// Bytes sent are counted by a process group wrapped around the default one (CountingGroup), from
// the collectives each setup calls, at what a bandwidth-optimal ring sends per rank: an all-reduce
// of B bytes 2(N-1)/N B, a reduce-scatter of N blocks of b bytes (N-1) b, an all-gather into N
// blocks of b bytes (N-1) b, a broadcast B (as its root; the ring's pipeline sends B per rank too).
// The shared-memory path moves the same data through copies instead of sockets; the figure is the
// algorithm's, the same whichever transport carries it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/bench_timing.h"
#include "colony.h"
#include "examples/char_gpt/gpt.h"
#include "examples/lenet_cifar10/lenet.h"

namespace {

using namespace colony;

// The default group, counting what each collective sends (see above) and how many it called.
class CountingGroup : public dist::ProcessGroup {
 public:
  explicit CountingGroup(std::shared_ptr<dist::ProcessGroup> inner) : inner_(std::move(inner)) {
    set_timeout(inner_->timeout());
  }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend_name() const override { return inner_->backend_name(); }
  std::shared_ptr<dist::Work> allreduce(Tensor& t, dist::ReduceOp op, const dist::CollectiveOptions& o) override {
    count(2.0 * (size() - 1) / size() * static_cast<double>(t.nbytes()));
    return inner_->allreduce(t, op, o);
  }
  std::shared_ptr<dist::Work> broadcast(Tensor& t, int root, const dist::CollectiveOptions& o) override {
    count(static_cast<double>(t.nbytes()));
    return inner_->broadcast(t, root, o);
  }
  std::shared_ptr<dist::Work> allgather(std::vector<Tensor>& outs, const Tensor& in,
                                        const dist::CollectiveOptions& o) override {
    count(static_cast<double>(size() - 1) * static_cast<double>(in.nbytes()));
    return inner_->allgather(outs, in, o);
  }
  std::shared_ptr<dist::Work> reduce_scatter(Tensor& out, const std::vector<Tensor>& ins, dist::ReduceOp op,
                                             const dist::CollectiveOptions& o) override {
    count(static_cast<double>(size() - 1) * static_cast<double>(out.nbytes()));
    return inner_->reduce_scatter(out, ins, op, o);
  }
  std::shared_ptr<dist::Work> allgather_into_tensor(Tensor& out, const Tensor& in,
                                                    const dist::CollectiveOptions& o) override {
    count(static_cast<double>(size() - 1) * static_cast<double>(in.nbytes()));
    return inner_->allgather_into_tensor(out, in, o);
  }
  std::shared_ptr<dist::Work> reduce_scatter_tensor(Tensor& out, const Tensor& in, dist::ReduceOp op,
                                                    const dist::CollectiveOptions& o) override {
    count(static_cast<double>(size() - 1) * static_cast<double>(out.nbytes()));
    return inner_->reduce_scatter_tensor(out, in, op, o);
  }
  std::shared_ptr<dist::Work> barrier(const dist::CollectiveOptions& o) override { return inner_->barrier(o); }
  void abort(const std::string& reason) override { inner_->abort(reason); }
  uint64_t collectives_started() const override { return inner_->collectives_started(); }

  double bytes = 0;
  int64_t collectives = 0;

 private:
  void count(double b) {
    bytes += b;
    ++collectives;
  }
  std::shared_ptr<dist::ProcessGroup> inner_;
};

const char* string_arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

int int_arg(int argc, char** argv, const char* name, int fallback) {
  const char* v = string_arg(argc, argv, name, nullptr);
  return v ? std::atoi(v) : fallback;
}

// The model under test: LeNet on CIFAR-shaped images, or the character-level GPT on token blocks.
struct Model {
  bool gpt = false;
  std::shared_ptr<nn::Module> make() const {
    if (gpt) return std::make_shared<char_gpt::GPT>(char_gpt::GPTConfig{});
    return std::make_shared<lenet::LeNet>();
  }
  Tensor loss(const Tensor& out, const Tensor& y) const {
    return gpt ? char_gpt::lm_loss(out, y) : F::cross_entropy(out, y);
  }
  std::pair<Tensor, Tensor> batch(int64_t n, Generator& g) const {
    if (!gpt) return {raw::randn({n, 3, 32, 32}, {}, &g), raw::randint(0, 10, {n}, TensorOptions(kInt64), &g)};
    const char_gpt::GPTConfig c;
    const std::vector<int64_t> shape{n, c.block_size};
    return {raw::randint(0, c.vocab_size, shape, TensorOptions(kInt64), &g),
            raw::randint(0, c.vocab_size, shape, TensorOptions(kInt64), &g)};
  }
};

// One model, its DDP and its optimizer.
struct Setup {
  std::string name;
  Model kind;
  std::shared_ptr<nn::Module> model;
  std::shared_ptr<dist::DistributedDataParallel> ddp;
  std::unique_ptr<optim::Optimizer> opt;
  std::shared_ptr<CountingGroup> group;  // null without a process group
  std::vector<double> step_ms;
  std::vector<double> round_ms;  // each round's median
  std::vector<double> backward_ms, step_only_ms;  // zero_grad + forward + backward; opt.step()
  // overlap_all_gather: the wait for the last step's all-gathers, at the forward's start (taken
  // out of the forward by calling wait_for_parameters() just before it).
  std::vector<double> wait_ms;

  size_t state_bytes() const {
    if (auto* z = dynamic_cast<dist::ZeroRedundancyOptimizer*>(opt.get())) return z->state_bytes();
    return dist::optimizer_state_bytes(*opt);
  }
  size_t gradient_bytes() const {
    if (auto* z = dynamic_cast<dist::ZeroRedundancyOptimizer*>(opt.get())) return z->gradient_bytes();
    return dist::gradient_bytes(ddp->parameters());
  }
};

enum Kind { kDdp, kStage1OverDdpByParameter, kStage1OverDdpByElement, kStage1, kStage2 };

Setup make(const Model& model, const std::string& name, Kind kind, bool overlap = false) {
  Setup s;
  s.name = name;
  s.kind = model;
  manual_seed(1);
  s.model = model.make();
  if (auto g = dist::default_process_group()) s.group = std::make_shared<CountingGroup>(g);
  // Stage 1 over a plain DDP (all-reduce, then ZeRO's all-gather), or with DDP's reduce-scatter.
  const int stage = kind == kStage1 ? 1 : kind == kStage2 ? 2 : 0;
  s.ddp = std::make_shared<dist::DistributedDataParallel>(
      s.model, dist::DistributedDataParallelOptions().zero_stage(stage).process_group(s.group));
  const auto adamw = optim::AdamWOptions(1e-3);
  if (kind == kDdp) {
    s.opt = std::make_unique<optim::AdamW>(s.ddp->parameters(), adamw);
  } else {
    auto o = dist::ZeroRedundancyOptimizerOptions()
                 .shard_by(kind == kStage1OverDdpByParameter ? dist::ShardBy::kParameter : dist::ShardBy::kElement)
                 .process_group(s.group)
                 .overlap_all_gather(overlap);
    if (stage > 0) o.ddp(s.ddp);
    s.opt = std::make_unique<dist::ZeroRedundancyOptimizer>(
        s.ddp->parameters(), adamw, dist::optimizer_factory<optim::AdamW, optim::AdamWOptions>(), o);
  }
  return s;
}

void run_steps(Setup& s, const std::vector<std::pair<Tensor, Tensor>>& batches, int steps, bool timed) {
  const size_t first = s.step_ms.size();
  for (int i = 0; i < steps; ++i) {
    const auto& [x, y] = batches[static_cast<size_t>(i) % batches.size()];
    const auto t0 = std::chrono::steady_clock::now();
    s.opt->zero_grad();
    const auto tw = std::chrono::steady_clock::now();
    auto* zero = dynamic_cast<dist::ZeroRedundancyOptimizer*>(s.opt.get());
    if (zero) zero->wait_for_parameters();
    const double wait = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tw).count();
    s.kind.loss(s.ddp->forward(x), y).backward();
    const auto t1 = std::chrono::steady_clock::now();
    s.opt->step();
    if (timed) {
      const auto t2 = std::chrono::steady_clock::now();
      s.step_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
      s.backward_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      s.step_only_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
      s.wait_ms.push_back(wait);
    }
  }
  if (timed) {
    std::vector<double> round(s.step_ms.begin() + static_cast<std::ptrdiff_t>(first), s.step_ms.end());
    std::sort(round.begin(), round.end());
    s.round_ms.push_back(round[round.size() / 2]);
  }
}

// The largest value over the ranks.
int64_t max_over_ranks(int64_t v) {
  return static_cast<int64_t>(dist::all_reduce(static_cast<double>(v), dist::ReduceOp::kMax));
}

}  // namespace

// The 1-minute load average (/proc/loadavg), printed beside the times: on a shared machine it
// says how much the ranks were fought over.
double load_average() {
  double v = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &v) != 1) v = -1;
    std::fclose(f);
  }
  return v;
}

int main(int argc, char** argv) {
  const std::string model_name = string_arg(argc, argv, "--model", "lenet");
  Model model;
  model.gpt = model_name == "gpt";
  const int steps = int_arg(argc, argv, "--steps", 20);
  const int rounds = int_arg(argc, argv, "--rounds", 5);
  const int batch = int_arg(argc, argv, "--batch", model.gpt ? 12 : 32);
  if (steps <= 0 || rounds <= 0 || batch <= 0 || (model_name != "lenet" && model_name != "gpt")) {
    std::fprintf(stderr, "usage: zero_bench [--model lenet|gpt] [--steps N] [--rounds N] [--batch N] (positive)\n");
    return 2;
  }
  dist::init_process_group();
  const int world = dist::get_world_size();
  const int rank = dist::get_rank();
  std::vector<std::pair<Tensor, Tensor>> batches;
  Generator g(static_cast<uint64_t>(100 + rank));
  for (int i = 0; i < 4; ++i) batches.push_back(model.batch(batch, g));
  std::vector<Setup> setups;
  setups.push_back(make(model, "DDP + AdamW", kDdp));
  setups.push_back(make(model, "ZeRO-1 over plain DDP, by parameter", kStage1OverDdpByParameter));
  setups.push_back(make(model, "ZeRO-1 over plain DDP, by element", kStage1OverDdpByElement));
  setups.push_back(make(model, "ZeRO-1 (DDP zero_stage(1))", kStage1));
  setups.push_back(make(model, "ZeRO-2 (DDP zero_stage(2))", kStage2));
  setups.push_back(make(model, "ZeRO-1, overlap_all_gather", kStage1, true));
  setups.push_back(make(model, "ZeRO-2, overlap_all_gather", kStage2, true));
  for (auto& s : setups) run_steps(s, batches, 3, false);  // state allocated, buckets rebuilt
  // Bytes sent in one step, after those (DDP's rebuild broadcast is behind).
  std::vector<double> step_bytes(setups.size(), 0);
  std::vector<int64_t> step_collectives(setups.size(), 0);
  for (size_t k = 0; k < setups.size(); ++k) {
    Setup& s = setups[k];
    if (!s.group) continue;
    const double b0 = s.group->bytes;
    const int64_t c0 = s.group->collectives;
    run_steps(s, batches, 1, false);
    step_bytes[k] = s.group->bytes - b0;
    step_collectives[k] = s.group->collectives - c0;
  }
  const double ddp_state = static_cast<double>(max_over_ranks(static_cast<int64_t>(setups[0].state_bytes())));
  const double ddp_grads = static_cast<double>(max_over_ranks(static_cast<int64_t>(setups[0].gradient_bytes())));
  if (rank == 0) {
    int64_t n = 0;
    for (const Tensor& p : setups[0].model->parameters()) n += p.numel();
    std::printf("zero_bench: %d rank(s), %s (%lld parameters), AdamW, batch %d per rank, backend %s\n", world,
                model.gpt ? "char GPT" : "LeNet", static_cast<long long>(n), batch,
                world > 1 ? dist::default_process_group()->backend_name().c_str() : "none");
    std::printf("| N | optimizer | state bytes, largest rank | of DDP's | goal 1/N + 5 %% | gradient bytes, largest rank "
                "| of DDP's | bytes sent per step per rank | of DDP's | collectives per step |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  }
  for (size_t k = 0; k < setups.size(); ++k) {
    Setup& s = setups[k];
    const double state = static_cast<double>(max_over_ranks(static_cast<int64_t>(s.state_bytes())));
    const double grads = static_cast<double>(max_over_ranks(static_cast<int64_t>(s.gradient_bytes())));
    if (rank == 0)
      std::printf("| %d | %s | %.0f | %.3f | %.3f | %.0f | %.3f | %.0f | %.3f | %lld |\n", world, s.name.c_str(), state,
                  state / ddp_state, 1.0 / world + 0.05, grads, grads / ddp_grads, step_bytes[k],
                  step_bytes[0] > 0 ? step_bytes[k] / step_bytes[0] : 0.0, static_cast<long long>(step_collectives[k]));
  }
  // Alternating rounds: DDP, ZeRO-1 (zero_stage(1)), ZeRO-2, both with overlap_all_gather,
  // `rounds` times, each round starting one further along (DDP first, then ZeRO-1 first, ...), so
  // that no setup always follows the same one (after ZeRO with overlap_all_gather its last
  // all-gathers are still queued ahead of the next setup's first collective).
  const size_t timed[] = {0, 3, 4, 5, 6};
  const size_t n_timed = sizeof(timed) / sizeof(timed[0]);
  const double load_before = load_average();
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < n_timed; ++i) run_steps(setups[timed[(i + static_cast<size_t>(r)) % n_timed]], batches, steps, true);
  const double load_after = load_average();
  auto round_ratio = [&](size_t k) {
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) ratios.push_back(setups[k].round_ms[r] / setups[0].round_ms[r]);
    return colony::bench::median(ratios);
  };
  const double ddp_ms = colony::bench::median(setups[0].step_ms);
  if (rank == 0) {
    std::printf("step time, median of %d x %d steps in alternating rounds (load average %.2f before, %.2f after): "
                "DDP %.3f ms\n",
                rounds, steps, load_before, load_after, ddp_ms);
    for (size_t k : timed) {
      if (k == 0) continue;
      const double ms = colony::bench::median(setups[k].step_ms);
      std::printf("  %s: %.3f ms, %.3f x DDP; median of the rounds' ratios %.3f\n", setups[k].name.c_str(), ms,
                  ms / ddp_ms, round_ratio(k));
    }
  }
  // Where the time goes: the medians of forward + backward (DDP's all-reduce or reduce-scatter
  // included; with overlap_all_gather the wait for the last step's all-gathers too) and of the
  // optimizer's step (ZeRO's all-gather included, or only started with overlap_all_gather).
  if (rank == 0)
    for (size_t k : timed)
      std::printf("  %s: zero_grad + forward + backward %.3f ms (of which waiting for the all-gathers %.3f ms), "
                  "step %.3f ms\n",
                  setups[k].name.c_str(), colony::bench::median(setups[k].backward_ms), colony::bench::median(setups[k].wait_ms),
                  colony::bench::median(setups[k].step_only_ms));
  setups.clear();
  dist::destroy_process_group();
}
