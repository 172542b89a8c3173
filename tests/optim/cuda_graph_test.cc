// Whole training steps captured as CUDA graphs (ops/cuda_graph.h) against the same steps run
// eagerly: with deterministic algorithms, N replays give the losses and weights of N eager steps
// bit for bit, dropout included, with SGD and with capturable Adam; a learning rate changed
// between replays takes effect; under GradScaler a replay whose gradients overflow is skipped on
// the device and backs the scale off exactly as the eager step does; what cannot be captured
// fails at the capture with an error naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "optim/optim.h"
#include "tensor/backends.h"
#include "runtime/caching_allocator.h"
#include "runtime/cuda.h"
#include "ops/cuda_graph.h"
#include "tests/test_util.h"

namespace colony {
namespace {

class DropLeNet : public nn::Module {
 public:
  explicit DropLeNet(double p) : p_(p) {
    conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(3, 6, 5)));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(6, 16, 5)));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(16 * 5 * 5, 32));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(32, 10));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = F::max_pool2d(F::relu(conv1->forward(x)), 2);
    h = F::max_pool2d(F::relu(conv2->forward(h)), 2);
    h = F::relu(fc1->forward(h.flatten(1)));
    if (p_ > 0) h = F::dropout(h, p_, true);
    return fc2->forward(h);
  }
  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::Linear> fc1, fc2;

 private:
  double p_;
};

// Deterministic cuDNN algorithms without benchmark trials, restored after the test.
class Deterministic {
 public:
  Deterministic() : det_(backends::cudnn::deterministic()), bench_(backends::cudnn::benchmark()) {
    backends::cudnn::set_deterministic(true);
    backends::cudnn::set_benchmark(false);
  }
  ~Deterministic() {
    backends::cudnn::set_deterministic(det_);
    backends::cudnn::set_benchmark(bench_);
  }

 private:
  bool det_, bench_;
};

struct Batches {
  std::vector<Tensor> x, y;
};

Batches make_batches(Device dev, int n) {
  manual_seed(11);
  Batches b;
  for (int i = 0; i < n; ++i) {
    b.x.push_back(raw::randn({16, 3, 32, 32}, TensorOptions(kFloat32).device(dev)));
    b.y.push_back(raw::randint(0, 10, {16}, TensorOptions(kInt64).device(dev)));
  }
  return b;
}

std::vector<double> weights(nn::Module& m) {
  std::vector<double> out;
  for (const Tensor& p : m.parameters()) {
    std::vector<double> v = testing::values(p);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

constexpr int kWarmup = 2, kSteps = 5;
const Device kDev = Device::cuda(0);

// What a run trains: SGD with momentum or Adam (capturable), with or without GradScaler, and the
// step (counted after the warm-up) whose batch holds an inf, so that its gradients overflow.
enum class Opt { kSgd, kAdam };
struct Config {
  double dropout = 0;
  Opt opt = Opt::kSgd;
  bool scaler = false;
  int poisoned = -1;
};

// `lr_at(k)`: the learning rate set before step k (k counts from 0 over warm-up and steps).
struct StepRun {
  std::vector<double> losses, scales, weights;
};

// One run's model, optimizer and scaler, made the same way for the eager and the graphed run.
struct Trainer {
  // The model's initial weights come from seed 5 in both runs.
  explicit Trainer(const Config& c) : config(c), model((manual_seed(5), c.dropout)) {
    model.to(kDev);
    if (c.opt == Opt::kSgd) {
      opt = std::make_unique<optim::SGD>(model.parameters(), optim::SGDOptions(0.05).momentum(0.9));
    } else {
      opt = std::make_unique<optim::Adam>(model.parameters(), optim::AdamOptions(1e-3).capturable(true));
    }
    if (c.scaler) scaler = std::make_unique<optim::GradScaler>(optim::GradScalerOptions().growth_interval(2));
    manual_seed(6);
  }
  Tensor step(const Tensor& x, const Tensor& y) {
    opt->zero_grad();
    Tensor loss = F::cross_entropy(model.forward(x), y);
    if (scaler) {
      scaler->scale(loss).backward();
      scaler->step(*opt);
      scaler->update();
    } else {
      loss.backward();
      opt->step();
    }
    return loss;
  }
  double scale() const { return scaler ? scaler->get_scale() : 1.0; }

  Config config;
  DropLeNet model;
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<optim::GradScaler> scaler;
};

Config with(Opt o) {
  Config c;
  c.opt = o;
  return c;
}

Batches batches_for(const Config& c) {
  Batches b = make_batches(kDev, kSteps + 1);
  if (c.poisoned >= 0) {
    Tensor x = raw::to(b.x[c.poisoned + 1], kCPU, kFloat32);
    x.data_ptr<float>()[0] = std::numeric_limits<float>::infinity();
    b.x[c.poisoned + 1] = raw::to(x, kDev, kFloat32);
  }
  return b;
}

StepRun eager(const Config& c, const Batches& b, const std::function<double(int)>& lr_at) {
  Trainer t(c);
  StepRun r;
  for (int k = 0; k < kWarmup + kSteps; ++k) {
    t.opt->set_lr(lr_at(k));
    const int batch = k < kWarmup ? 0 : k - kWarmup + 1;
    Tensor loss = t.step(b.x[batch], b.y[batch]);
    if (k >= kWarmup) {
      r.losses.push_back(loss.item<double>());
      r.scales.push_back(t.scale());
    }
  }
  r.weights = weights(t.model);
  return r;
}

// `replay_streams`: replay s runs on replay_streams[s % size] (empty: the caller's stream).
StepRun graphed(const Config& c, const Batches& b, const std::function<double(int)>& lr_at,
                const std::vector<Stream>& replay_streams = {}) {
  Trainer t(c);
  Tensor x = raw::clone(b.x[0]), y = raw::clone(b.y[0]), loss;
  int k = 0;  // the warm-up calls change the lr as the eager run does
  auto step = [&] {
    if (k < kWarmup) t.opt->set_lr(lr_at(k++));
    loss = t.step(x, y);
  };
  cuda::GraphedStep g = cuda::make_graphed_step(step, kDev, kWarmup);
  StepRun r;
  // The batch copies below run on streams that do not wait for the warm-up's reads of x and y.
  if (!replay_streams.empty()) cuda::synchronize();
  for (int s = 0; s < kSteps; ++s) {
    std::unique_ptr<StreamGuard> on;
    if (!replay_streams.empty()) on = std::make_unique<StreamGuard>(replay_streams[s % replay_streams.size()]);
    t.opt->set_lr(lr_at(kWarmup + s));
    x.copy_(b.x[s + 1]);
    y.copy_(b.y[s + 1]);
    g.replay();
    r.losses.push_back(loss.item<double>());
    r.scales.push_back(t.scale());
  }
  r.weights = weights(t.model);
  return r;
}

// Bit for bit; a NaN loss (the poisoned step) equals a NaN.
bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void expect_same(const StepRun& a, const StepRun& b) {
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_TRUE(same(a.losses[i], b.losses[i])) << "loss of step " << i << ": " << a.losses[i] << " vs " << b.losses[i];
    EXPECT_EQ(a.scales[i], b.scales[i]) << "loss scale after step " << i;
  }
  ASSERT_EQ(a.weights.size(), b.weights.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.weights.size(); ++i) differ += a.weights[i] != b.weights[i];
  EXPECT_EQ(differ, 0u) << "weights differ after the steps";
}

TEST(CudaGraph, ReplaysEqualEagerStepsBitForBit_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Deterministic det;
  const Config c;
  Batches b = batches_for(c);
  auto lr = [](int) { return 0.05; };
  expect_same(graphed(c, b, lr), eager(c, b, lr));
}

// Each replay on another stream than the last (and than the capture's): replay() orders them
// through the capture stream, whose cuBLAS workspace, memory pool and Philox state they share.
TEST(CudaGraph, ReplaysOnDifferentStreamsEqualEagerSteps_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Deterministic det;
  Config c;
  c.dropout = 0.5;
  Batches b = batches_for(c);
  auto lr = [](int) { return 0.05; };
  const std::vector<Stream> streams = {new_stream(kDev), new_stream(kDev), current_stream(kDev)};
  expect_same(graphed(c, b, lr, streams), eager(c, b, lr));
}

TEST(CudaGraph, DropoutDiffersPerReplayExactlyAsEager_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Deterministic det;
  Config c;
  c.dropout = 0.5;
  Batches b = batches_for(c);
  auto lr = [](int) { return 0.05; };
  // The eager steps draw a new mask each; equal losses and weights mean each replay did too.
  expect_same(graphed(c, b, lr), eager(c, b, lr));
}

TEST(CudaGraph, LearningRateChangedBetweenReplaysTakesEffect_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Deterministic det;
  for (Opt o : {Opt::kSgd, Opt::kAdam}) {
    SCOPED_TRACE(o == Opt::kSgd ? "SGD" : "Adam");
    const Config c = with(o);
    Batches b = batches_for(c);
    auto decaying = [](int k) { return 0.05 * (k < kWarmup ? 1.0 : 1.0 / (k + 1)); };
    const StepRun g = graphed(c, b, decaying);
    expect_same(g, eager(c, b, decaying));
    auto constant = [](int) { return 0.05; };
    EXPECT_NE(g.weights, eager(c, b, constant).weights) << "the lr changes had no effect";
  }
}

TEST(CudaGraph, CapturableAdamReplaysEqualEagerSteps_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Deterministic det;
  const Config c = with(Opt::kAdam);
  Batches b = batches_for(c);
  auto lr = [](int) { return 1e-3; };
  // Each replay takes the next step number's bias corrections, as each eager step does.
  expect_same(graphed(c, b, lr), eager(c, b, lr));
}

TEST(CudaGraph, OverflowingReplayIsSkippedOnTheDeviceAsEagerGradScalerSkips_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Deterministic det;
  for (Opt o : {Opt::kSgd, Opt::kAdam}) {
    SCOPED_TRACE(o == Opt::kSgd ? "SGD" : "Adam");
    Config c = with(o);
    c.scaler = true;
    c.poisoned = 2;
    Batches b = batches_for(c);
    auto lr = [](int) { return 1e-3; };
    const StepRun g = graphed(c, b, lr);
    expect_same(g, eager(c, b, lr));
    // The poisoned step backed the scale off (growth_interval 2 grows it on clean pairs).
    EXPECT_TRUE(std::isnan(g.losses[2]) || std::isinf(g.losses[2]));
    EXPECT_EQ(g.scales[2], g.scales[1] / 2);
    // The poisoned step's NaN gradients were never applied.
    for (double w : g.weights) ASSERT_TRUE(std::isfinite(w));
  }
}

TEST(CudaGraph, HostReadInsideTheStepIsAClearErrorAndLeavesNoCapture_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor x = raw::ones({4}, TensorOptions(kFloat32).device(kDev));
  int calls = 0;
  auto step = [&] {
    Tensor s = raw::sum(x);
    if (++calls > 1) (void)s.item<float>();  // fine in the warm-up call, not in the capture
  };
  EXPECT_TRUE(testing::throws_with<std::runtime_error>([&] { cuda::make_graphed_step(step, kDev, 1); },
                                                       "captures a CUDA graph"));
  EXPECT_EQ(cuda::CUDAGraph::capturing(), nullptr);
  // Eager work and host reads go on as before.
  EXPECT_EQ(raw::sum(x).item<float>(), 4.0f);
  cuda::synchronize();
}

TEST(CudaGraph, AdamWithoutCapturableRefusesCapture_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  manual_seed(1);
  nn::Linear lin(4, 2);
  lin.to(kDev);
  Tensor x = raw::randn({3, 4}, TensorOptions(kFloat32).device(kDev));
  optim::Adam adam(lin.parameters(), optim::AdamOptions(1e-3));
  auto adam_step = [&] {
    adam.zero_grad();
    lin.forward(x).sum().backward();
    adam.step();
  };
  EXPECT_TRUE(testing::throws_with<std::runtime_error>([&] { cuda::make_graphed_step(adam_step, kDev, 1); },
                                                       "keeps its step count on the host"));
  EXPECT_EQ(cuda::CUDAGraph::capturing(), nullptr);
}

TEST(CudaGraph, DestroyingTheGraphReturnsItsMemory_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor x = raw::ones({1 << 20}, TensorOptions(kFloat32).device(kDev));
  Tensor y;
  cuda_empty_cache();
  const int64_t reserved = cuda_caching_allocator(0)->stats().bytes_reserved;
  {
    cuda::GraphedStep g = cuda::make_graphed_step([&] { y = raw::mul(x, 2.0); }, kDev, 1);
    g.replay();
    EXPECT_EQ(raw::sum(y).item<float>(), 2.0f * (1 << 20));
    y = Tensor();  // the graph's output, freed back to its pool
  }
  cuda_empty_cache();
  EXPECT_EQ(cuda_caching_allocator(0)->stats().bytes_reserved, reserved);
}

}  // namespace
}  // namespace colony
