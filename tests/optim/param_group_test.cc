// Typed options per parameter group: each group keeps its own options struct, of the optimizer's
// type, through steps, schedulers and state_dict round trips.
#include <gtest/gtest.h>

#include <algorithm>

#include "autograd/ops.h"
#include "optim/optim.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

Tensor param(std::vector<double> v) {
  Tensor t = raw::from_vector(v, {}, kFloat64);
  t.requires_grad_(true);
  return t;
}

void set_grad(Tensor& w, std::vector<double> g) { w.mutable_grad() = raw::from_vector(g, {}, kFloat64); }

TEST(ParamGroup, EachGroupStepsWithItsOwnOptions) {
  Tensor a = param({1, 1}), b = param({1, 1});
  // Group 1 has no momentum and a larger lr; group 0 takes the defaults.
  SGD opt(std::vector<ParamGroup>{{{a}}, {{b}, SGDOptions(0.5)}}, SGDOptions(0.1).momentum(0.9));
  EXPECT_EQ(opt.param_groups()[0].options.as<SGDOptions>().momentum(), 0.9);
  EXPECT_EQ(opt.param_groups()[1].options.as<SGDOptions>().momentum(), 0.0);
  for (int step = 0; step < 2; ++step) {
    set_grad(a, {1, 1});
    set_grad(b, {1, 1});
    opt.step();
  }
  // a: buf 1 then 1.9: 1 - 0.1 - 0.19; b: 1 - 0.5 - 0.5.
  EXPECT_NEAR(values(a)[0], 0.71, 1e-12);
  EXPECT_NEAR(values(b)[0], 0.0, 1e-12);
  // Changed through the typed struct, read back by the optimizer.
  opt.param_groups()[1].options.as<SGDOptions>().lr(0.25);
  EXPECT_EQ(opt.lr(1), 0.25);
  EXPECT_EQ(opt.defaults().get_lr(), 0.1);
}

TEST(ParamGroup, SchedulersAndStateDictKeepEveryGroupsOptions) {
  Tensor a = param({1}), b = param({1});
  AdamWOptions own = AdamWOptions(0.01).weight_decay(0.0).betas({0.5, 0.6});
  AdamW opt(std::vector<ParamGroup>{{{a}}, {{b}, own}}, AdamWOptions(0.1));
  StepLR sched(opt, 1, 0.5);
  sched.step();
  EXPECT_DOUBLE_EQ(opt.lr(0), 0.05);
  EXPECT_DOUBLE_EQ(opt.lr(1), 0.005);
  NamedTensors state = opt.state_dict();
  Tensor a2 = param({1}), b2 = param({1});
  AdamW restored(std::vector<ParamGroup>{{{a2}}, {{b2}}}, AdamWOptions(0.1));
  restored.load_state_dict(state);
  const auto& o = restored.param_groups()[1].options.as<AdamWOptions>();
  EXPECT_DOUBLE_EQ(o.lr(), 0.005);
  EXPECT_DOUBLE_EQ(o.weight_decay(), 0.0);
  EXPECT_EQ(o.betas(), std::make_pair(0.5, 0.6));
  EXPECT_DOUBLE_EQ(restored.param_groups()[0].options.as<AdamWOptions>().weight_decay(), 1e-2);
}

TEST(ParamGroup, AGroupWithAnotherOptimizersOptionsIsRefused) {
  Tensor a = param({1}), b = param({1});
  // AdamW given Adam's options would train without weight decay.
  EXPECT_TRUE(throws_with([&] { AdamW(std::vector<ParamGroup>{{{a}}, {{b}, AdamOptions(0.1)}}, AdamWOptions()); },
                          "a parameter group has AdamOptions, but this optimizer takes AdamWOptions"));
  SGD opt({a}, SGDOptions(0.1));
  EXPECT_TRUE(throws_with([&] { opt.add_param_group({{b}, AdamOptions()}); },
                          "a parameter group has AdamOptions, but this optimizer takes SGDOptions"));
  EXPECT_TRUE(throws_with([&] { opt.param_groups()[0].options.as<AdamOptions>(); },
                          "parameter group options are SGDOptions, not AdamOptions"));
}

TEST(ParamGroup, CheckpointNamesStayTheSame) {
  Tensor a = param({1});
  AdamW opt({a}, AdamWOptions(0.1));
  std::vector<std::string> names;
  for (const auto& [n, _] : opt.state_dict()) names.push_back(n);
  for (const char* key : {"lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize", "num_params"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), std::string("param_groups.0.") + key), names.end()) << key;
  }
}

}  // namespace
}  // namespace colony::optim
