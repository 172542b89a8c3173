// GradScaler (optim/grad_scaler.h): PyTorch's defaults, skipping a step on inf/NaN (parameters and
// optimizer state untouched) with backoff, growth after growth_interval clean steps, the call-order
// errors, equality with float32 training when nothing overflows, accumulation, clipping after
// unscale_, state_dict, and fp16 autocast training against float32.
#include "optim/grad_scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "optim/optim.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;

Tensor randn(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(kFloat32), &gen);
}

class Mlp : public nn::Module {
 public:
  explicit Mlp(uint64_t seed) {
    manual_seed(seed);
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(12, 16));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(16, 5));
  }
  Tensor forward(const Tensor& x) override { return fc2->forward(relu(fc1->forward(x))); }
  std::shared_ptr<nn::Linear> fc1, fc2;
};

// Class labels 0, 1, .., 4, 0, 1, ...
Tensor targets(int64_t n) {
  Tensor t = raw::empty({n}, TensorOptions(kInt64));
  for (int64_t i = 0; i < n; ++i) t.data_ptr<int64_t>()[i] = i % 5;
  return t;
}

std::vector<Tensor> snapshot(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(raw::clone(t));
  return out;
}

void expect_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(all_close(a[i], b[i], 0, 0)) << i;
}

std::vector<Tensor> state_tensors(const optim::Optimizer& opt) {
  std::vector<Tensor> out;
  for (auto& [name, t] : opt.state_dict()) out.push_back(raw::clone(t));
  return out;
}

TEST(GradScaler, PyTorchDefaults) {
  optim::GradScaler s;
  EXPECT_EQ(s.get_scale(), 65536.0);
  EXPECT_EQ(s.options().growth_factor(), 2.0);
  EXPECT_EQ(s.options().backoff_factor(), 0.5);
  EXPECT_EQ(s.options().growth_interval(), 2000);
  EXPECT_TRUE(s.is_enabled());
  Tensor loss = raw::full({}, 1.5);
  EXPECT_EQ(s.scale(loss).item<double>(), 1.5 * 65536);
  EXPECT_TRUE(throws_with([] { optim::GradScaler(optim::GradScalerOptions().backoff_factor(1.5)); },
                          "GradScaler: backoff_factor should be in (0, 1), got 1.5"));
}

// One scaled backward on the Mlp; `poison` (if not 0) replaces one gradient element afterwards.
void scaled_backward(Mlp& m, optim::GradScaler& s, double poison = 0) {
  Tensor loss = F::cross_entropy(m.forward(randn({8, 12}, 3)), targets(8));
  s.scale(loss).backward();
  if (poison != 0) {
    NoGradGuard g;
    raw::narrow(raw::reshape(m.fc1->weight.grad(), {-1}), 0, 5, 1).fill_(poison);
  }
}

TEST(GradScaler, InfOrNanSkipsTheStepLeavesEverythingAndBacksOff) {
  for (double poison : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    for (int which = 0; which < 2; ++which) {  // SGD with momentum, then Adam: both keep their state
      Mlp m(1);
      std::unique_ptr<optim::Optimizer> opt;
      if (which == 0) {
        opt = std::make_unique<optim::SGD>(m.parameters(), optim::SGDOptions(0.1).momentum(0.9));
      } else {
        opt = std::make_unique<optim::Adam>(m.parameters(), optim::AdamOptions(0.01));
      }
      optim::GradScaler s;
      scaled_backward(m, s);  // a clean step first, so that the optimizer has state to protect
      EXPECT_TRUE(s.step(*opt));
      s.update();
      EXPECT_EQ(s.get_scale(), 65536.0);
      EXPECT_EQ(s.growth_tracker(), 1);
      std::vector<Tensor> params = snapshot(m.parameters()), state = state_tensors(*opt);
      opt->zero_grad();
      scaled_backward(m, s, poison);
      EXPECT_FALSE(s.step(*opt));
      expect_equal(snapshot(m.parameters()), params);
      expect_equal(state_tensors(*opt), state);
      s.update();
      EXPECT_EQ(s.get_scale(), 32768.0);
      EXPECT_EQ(s.growth_tracker(), 0);
    }
  }
}

TEST(GradScaler, GrowsAfterGrowthIntervalCleanSteps) {
  Mlp m(2);
  optim::SGD opt(m.parameters(), optim::SGDOptions(0.01));
  optim::GradScaler s(optim::GradScalerOptions().init_scale(8.0).growth_interval(3));
  std::vector<double> scales;
  for (int i = 0; i < 7; ++i) {
    opt.zero_grad();
    scaled_backward(m, s);
    s.step(opt);
    s.update();
    scales.push_back(s.get_scale());
  }
  EXPECT_EQ(scales, (std::vector<double>{8, 8, 16, 16, 16, 32, 32}));
  // An overflow restarts the count.
  opt.zero_grad();
  scaled_backward(m, s, std::numeric_limits<double>::infinity());
  s.step(opt);
  s.update();
  EXPECT_EQ(s.get_scale(), 16.0);
  EXPECT_EQ(s.growth_tracker(), 0);
}

TEST(GradScaler, CallOrderErrors) {
  Mlp m(3);
  optim::SGD opt(m.parameters(), optim::SGDOptions(0.01));
  optim::GradScaler s;
  EXPECT_TRUE(throws_with([&] { s.update(); }, "GradScaler::update: no inf checks were recorded"));
  scaled_backward(m, s);
  s.unscale_(opt);
  EXPECT_TRUE(throws_with([&] { s.unscale_(opt); }, "GradScaler::unscale_: already called on this optimizer"));
  s.step(opt);
  EXPECT_TRUE(throws_with([&] { s.step(opt); }, "GradScaler::step: already called on this optimizer"));
  EXPECT_TRUE(throws_with([&] { s.unscale_(opt); }, "GradScaler::unscale_: called after step()"));
  s.update();
  opt.zero_grad();
  scaled_backward(m, s);
  s.unscale_(opt);  // allowed again after update()
  for (Tensor p : m.parameters()) p.mutable_grad() = raw::to(p.grad(), kCPU, kFloat16);
  optim::GradScaler fresh;
  EXPECT_TRUE(throws_with([&] { fresh.unscale_(opt); }, "a parameter has a float16 gradient"));
}

// A power-of-two scale multiplies and divides exactly, so without overflow the scaled run is the
// float32 run bit for bit.
TEST(GradScaler, ScaledStepEqualsTheUnscaledStep) {
  Mlp plain(4), scaled(4);
  optim::SGD opt_a(plain.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD opt_b(scaled.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::GradScaler s;
  for (int i = 0; i < 5; ++i) {
    Tensor x = randn({8, 12}, 10 + i);
    opt_a.zero_grad();
    F::cross_entropy(plain.forward(x), targets(8)).backward();
    opt_a.step();
    opt_b.zero_grad();
    s.scale(F::cross_entropy(scaled.forward(x), targets(8))).backward();
    EXPECT_TRUE(s.step(opt_b));
    s.update();
  }
  expect_equal(snapshot(scaled.parameters()), snapshot(plain.parameters()));
}

TEST(GradScaler, AccumulatingMicroBatchesEqualsOneBigBatch) {
  const int K = 4;
  Mlp big(5), micro(5);
  optim::SGD opt_a(big.parameters(), optim::SGDOptions(0.1));
  optim::SGD opt_b(micro.parameters(), optim::SGDOptions(0.1));
  optim::GradScaler s;
  Tensor x = randn({8 * K, 12}, 20), y = targets(8 * K);
  s.scale(F::cross_entropy(big.forward(x), y)).backward();
  s.step(opt_a);
  s.update();
  for (int k = 0; k < K; ++k) {
    Tensor xs = raw::narrow(x, 0, 8 * k, 8), ys = raw::narrow(y, 0, 8 * k, 8);
    s.scale(F::cross_entropy(micro.forward(xs), ys) / static_cast<double>(K)).backward();
  }
  s.step(opt_b);
  s.update();
  std::vector<Tensor> a = snapshot(big.parameters()), b = snapshot(micro.parameters());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(all_close(a[i], b[i], 1e-5, 1e-6)) << i;
}

TEST(GradScaler, ClipGradNormAfterUnscaleSeesTheTrueGradients) {
  Mlp plain(6), scaled(6);
  Tensor x = randn({8, 12}, 30);
  F::cross_entropy(plain.forward(x), targets(8)).backward();
  const double true_norm = optim::clip_grad_norm_(plain.parameters(), 1e9);
  optim::SGD opt(scaled.parameters(), optim::SGDOptions(0.1));
  optim::GradScaler s;
  s.scale(F::cross_entropy(scaled.forward(x), targets(8))).backward();
  s.unscale_(opt);
  EXPECT_NEAR(optim::clip_grad_norm_(scaled.parameters(), 0.01), true_norm, 1e-6 * true_norm);
  EXPECT_TRUE(s.step(opt));  // no second unscale: the clipped gradients are what the step uses
  s.update();
}

TEST(GradScaler, StateDictRoundTripsAndDisabledIsAPassThrough) {
  optim::GradScaler s(optim::GradScalerOptions().init_scale(1024).growth_interval(7));
  Mlp m(7);
  optim::SGD opt(m.parameters(), optim::SGDOptions(0.01));
  scaled_backward(m, s);
  s.step(opt);
  s.update();
  optim::GradScaler t;
  t.load_state_dict(s.state_dict());
  EXPECT_EQ(t.get_scale(), 1024.0);
  EXPECT_EQ(t.growth_tracker(), 1);
  EXPECT_EQ(t.options().growth_interval(), 7);
  EXPECT_TRUE(throws_with([&] { t.load_state_dict({}); }, "the state is empty"));

  optim::GradScaler off(optim::GradScalerOptions().enabled(false));
  Tensor loss = raw::full({}, 3.0);
  EXPECT_TRUE(off.scale(loss).is_same(loss));
  EXPECT_EQ(off.get_scale(), 1.0);
  EXPECT_TRUE(off.state_dict().empty());
  opt.zero_grad();
  F::cross_entropy(m.forward(randn({8, 12}, 3)), targets(8)).backward();
  std::vector<Tensor> before = snapshot(m.parameters());
  EXPECT_TRUE(off.step(opt));
  off.update();
  EXPECT_FALSE(all_close(m.parameters()[0], before[0], 0, 0));
}

// The scale lives beside the loss: after it exists, update(new_scale) and load_state_dict write
// it there, and the next scale() multiplies by the new value.
TEST(GradScaler, SettingTheScaleReachesTheScaleInUse) {
  optim::GradScaler s(optim::GradScalerOptions().init_scale(4));
  Tensor loss = raw::full({}, 3.0);
  EXPECT_EQ(s.scale(loss).item<float>(), 12.0f);
  s.update(8.0);
  EXPECT_EQ(s.get_scale(), 8.0);
  EXPECT_EQ(s.scale(loss).item<float>(), 24.0f);
  optim::GradScaler t(optim::GradScalerOptions().init_scale(2));
  t.load_state_dict(s.state_dict());
  EXPECT_EQ(t.scale(loss).item<float>(), 24.0f);
  s.load_state_dict(optim::GradScaler(optim::GradScalerOptions().init_scale(0.5)).state_dict());
  EXPECT_EQ(s.scale(loss).item<float>(), 1.5f);
  EXPECT_EQ(s.scale(loss).dim(), 0);  // a 0-d loss stays 0-d
}

// The recipe end to end: float16 autocast + GradScaler against float32 on a fixed batch. float16
// products round to 11 bits; after 30 SGD steps the losses agree within 2 % and both fall.
TEST(GradScaler, Float16AutocastTrainingTracksFloat32) {
  const int kSteps = 30;
  Tensor x = randn({32, 12}, 40), y = targets(32);
  auto train = [&](bool amp) {
    Mlp m(8);
    optim::SGD opt(m.parameters(), optim::SGDOptions(0.1).momentum(0.9));
    optim::GradScaler s(optim::GradScalerOptions().enabled(amp));
    std::vector<double> losses;
    for (int i = 0; i < kSteps; ++i) {
      opt.zero_grad();
      Tensor loss;
      {
        AutocastGuard guard(DeviceType::CPU, kFloat16, amp);
        loss = F::cross_entropy(m.forward(x), y);
      }
      EXPECT_EQ(loss.dtype(), kFloat32);
      s.scale(loss).backward();
      EXPECT_TRUE(s.step(opt));
      s.update();
      losses.push_back(loss.item<double>());
    }
    return losses;
  };
  std::vector<double> f32 = train(false), f16 = train(true);
  for (int i = 0; i < kSteps; ++i) EXPECT_NEAR(f16[i], f32[i], 0.02 * f32[i]) << "step " << i;
  EXPECT_LT(f16.back(), 0.7 * f16.front());
}

}  // namespace
}  // namespace colony
