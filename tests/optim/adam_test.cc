// AdamW's own options (weight decay 1e-2 by default) and betas as a pair; capturable Adam (step
// counts kept beside the parameters and read by the kernels) against host-counted Adam; steps
// skipped on the device with step_unless (SGD, and Adam either way).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/ops.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "tensor/random.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

TEST(AdamWOptions, WeightDecayDefaultsToPyTorchs) {
  EXPECT_DOUBLE_EQ(AdamWOptions().weight_decay(), 1e-2);
  EXPECT_DOUBLE_EQ(AdamWOptions(0.1).lr(), 0.1);
  EXPECT_DOUBLE_EQ(AdamOptions().weight_decay(), 0.0);
  // AdamW cannot be built from AdamOptions (a static_assert names AdamWOptions); from AdamWOptions
  // and from a learning rate it can.
  static_assert(std::is_constructible_v<AdamW, std::vector<Tensor>, AdamWOptions>);
  static_assert(std::is_convertible_v<double, AdamWOptions>);
}

TEST(AdamW, DefaultOptionsDecayTheWeights) {
  // With a zero gradient Adam's step is 0, so the only change is the decoupled decay:
  // p *= 1 - lr * weight_decay = 1 - 1e-3 * 1e-2.
  Tensor w = raw::ones({3}, kFloat64);
  w.requires_grad_(true);
  AdamW opt({w});
  w.mutable_grad() = raw::zeros({3}, kFloat64);
  opt.step();
  EXPECT_TRUE(testing::all_close(w.detach(), raw::full({3}, 1.0 - 1e-5, kFloat64), 1e-15));
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options.as<AdamWOptions>().weight_decay(), 1e-2);
}

TEST(AdamOptions, BetasTakeAPair) {
  AdamOptions o = AdamOptions().betas({0.8, 0.95});
  EXPECT_DOUBLE_EQ(o.beta1(), 0.8);
  EXPECT_DOUBLE_EQ(o.beta2(), 0.95);
  EXPECT_EQ(AdamWOptions().betas(std::make_pair(0.5, 0.6)).betas(), std::make_pair(0.5, 0.6));
}

// Two float32 parameters with fixed gradients per step (seeded), for optimizers to chew on.
struct Params {
  std::vector<Tensor> params;
  explicit Params(uint64_t seed) {
    Generator gen(seed);
    for (const Shape& s : {Shape{5, 3}, Shape{7}}) {
      Tensor p = raw::randn(s, TensorOptions(kFloat32), &gen);
      p.requires_grad_(true);
      params.push_back(p);
    }
  }
  void set_grads(uint64_t step) {
    Generator gen(1000 + step);
    for (Tensor& p : params) p.mutable_grad() = raw::randn(p.sizes(), TensorOptions(kFloat32), &gen);
  }
  std::vector<std::vector<double>> values() const {
    std::vector<std::vector<double>> out;
    for (const Tensor& p : params) out.push_back(testing::values(p.detach()));
    return out;
  }
};

TEST(Adam, CapturableStepsEqualHostCountedStepsBitForBit) {
  for (bool decoupled : {false, true}) {
    for (bool amsgrad : {false, true}) {
      SCOPED_TRACE(std::string(decoupled ? "AdamW" : "Adam") + (amsgrad ? " amsgrad" : ""));
      Params host(1), dev(1);
      auto make = [&](Params& ps, bool capturable) -> std::unique_ptr<Optimizer> {
        if (decoupled) {
          return std::make_unique<AdamW>(ps.params, AdamWOptions(0.01).amsgrad(amsgrad).capturable(capturable));
        }
        return std::make_unique<Adam>(ps.params,
                                      AdamOptions(0.01).weight_decay(0.1).amsgrad(amsgrad).capturable(capturable));
      };
      auto a = make(host, false), b = make(dev, true);
      for (uint64_t step = 0; step < 4; ++step) {
        host.set_grads(step);
        dev.set_grads(step);
        a->step();
        b->step();
      }
      EXPECT_EQ(host.values(), dev.values());
      // The counts are tensors beside the parameters (here the CPU), with the same value.
      auto sa = a->state_dict(), sb = b->state_dict();
      ASSERT_EQ(sa.size(), sb.size());
      for (size_t i = 0; i < sa.size(); ++i) {
        EXPECT_EQ(sa[i].first, sb[i].first);
        if (sa[i].first.find("capturable") != std::string::npos) continue;
        EXPECT_EQ(testing::values(sa[i].second), testing::values(sb[i].second)) << sa[i].first;
      }
    }
  }
}

TEST(Adam, CapturableIsAnOptionCheckpointsKeep) {
  Params ps(2);
  Adam opt(ps.params, AdamOptions(0.01).capturable(true));
  ps.set_grads(0);
  opt.step();
  Adam loaded(ps.params, AdamOptions(0.01));
  loaded.load_state_dict(opt.state_dict());
  EXPECT_TRUE(loaded.param_groups()[0].options.as<AdamOptions>().capturable());
  ps.set_grads(1);
  loaded.step();  // the loaded count continues: step 2
  for (const auto& [name, t] : loaded.state_dict()) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".step") == 0) {
      EXPECT_EQ(t.item<double>(), 2.0) << name;
    }
  }
}

// found_inf nonzero: nothing moves, no state starts and no step is counted; zero: the plain step.
TEST(Optimizer, StepUnlessSkipsOnTheFlagAndOtherwiseSteps) {
  const Tensor inf_found = raw::ones({1}), clean = raw::zeros({1});
  auto check = [&](const std::function<std::unique_ptr<Optimizer>(Params&)>& make) {
    Params a(3), b(3);
    auto oa = make(a), ob = make(b);
    ASSERT_TRUE(ob->supports_step_unless());
    for (uint64_t step = 0; step < 3; ++step) {
      a.set_grads(step);
      b.set_grads(step);
      const auto before = b.values();
      ob->step_unless(inf_found);  // skipped, also as the first step (no state is started)
      EXPECT_EQ(b.values(), before);
      oa->step();
      ob->step_unless(clean);
      EXPECT_EQ(a.values(), b.values()) << "step " << step;
    }
    // The counted steps agree: the skipped ones were not counted.
    EXPECT_EQ(testing::values(oa->state_dict().front().second), testing::values(ob->state_dict().front().second));
  };
  {
    SCOPED_TRACE("SGD with momentum");
    check([](Params& p) { return std::make_unique<SGD>(p.params, SGDOptions(0.1).momentum(0.9).dampening(0.1)); });
  }
  {
    SCOPED_TRACE("Adam");
    check([](Params& p) { return std::make_unique<Adam>(p.params, AdamOptions(0.01)); });
  }
  {
    SCOPED_TRACE("capturable AdamW");
    check([](Params& p) { return std::make_unique<AdamW>(p.params, AdamWOptions(0.01).capturable(true)); });
  }
  Params p(4);
  SGD sgd(p.params, SGDOptions(0.1));
  p.set_grads(0);
  EXPECT_TRUE(testing::throws_with([&] { sgd.step_unless(raw::zeros({1}, kFloat64)); },
                                   "found_inf must be a 1-element float32 tensor, got float64 [1]"));
}

}  // namespace
}  // namespace colony::optim
