// Typed options per parameter group: each group keeps its own options struct, of the optimizer's
// type, through steps, schedulers and state_dict round trips, and inherits the optimizer's
// defaults for every option it does not set (as torch.optim's param groups do).
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
  // Group 1 has no momentum (set to 0, not inherited) and a larger lr; group 0 takes the defaults.
  SGD opt(std::vector<ParamGroup>{{{a}}, {{b}, SGDOptions(0.5).momentum(0.0)}}, SGDOptions(0.1).momentum(0.9));
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

TEST(ParamGroup, SGDGroupInheritsTheOptionsItDoesNotSet) {
  Tensor a = param({1}), b = param({1}), c = param({1});
  SGDOptions defaults = SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(0.01).maximize(true);
  SGD opt(std::vector<ParamGroup>{{{a}, SGDOptions(0.5)}, {{b}, SGDOptions(0.2).weight_decay(0.0).dampening(0.0)}},
          defaults);
  const auto& o0 = opt.param_groups()[0].options.as<SGDOptions>();
  EXPECT_EQ(o0.lr(), 0.5);
  EXPECT_EQ(o0.momentum(), 0.9);
  EXPECT_EQ(o0.dampening(), 0.1);
  EXPECT_EQ(o0.weight_decay(), 0.01);
  EXPECT_TRUE(o0.maximize());
  // Options set to the struct's own default values are kept, not replaced by the optimizer's.
  const auto& o1 = opt.param_groups()[1].options.as<SGDOptions>();
  EXPECT_EQ(o1.lr(), 0.2);
  EXPECT_EQ(o1.weight_decay(), 0.0);
  EXPECT_EQ(o1.dampening(), 0.0);
  EXPECT_EQ(o1.momentum(), 0.9);
  // A group added later inherits too.
  opt.add_param_group({{c}, SGDOptions(0.3).nesterov(true).dampening(0.0)});
  const auto& o2 = opt.param_groups()[2].options.as<SGDOptions>();
  EXPECT_EQ(o2.momentum(), 0.9);
  EXPECT_EQ(o2.weight_decay(), 0.01);
  EXPECT_TRUE(o2.nesterov());
  // ...and the step uses the inherited numbers: momentum 0.9 and maximize, as a lone SGD with them.
  Tensor ref = param({1});
  SGD lone({ref}, SGDOptions(0.5).momentum(0.9).dampening(0.1).weight_decay(0.01).maximize(true));
  for (int step = 0; step < 3; ++step) {
    set_grad(a, {0.5});
    set_grad(ref, {0.5});
    opt.step();
    lone.step();
  }
  EXPECT_EQ(values(a), values(ref));
}

TEST(ParamGroup, AdamGroupInheritsLrBetasEpsAndFlags) {
  Tensor a = param({1, -2}), b = param({1, -2});
  AdamOptions defaults = AdamOptions(0.01).betas(0.8, 0.9).eps(1e-6).amsgrad(true);
  Adam opt(std::vector<ParamGroup>{{{a}, AdamOptions().weight_decay(0.1)}}, defaults);
  const auto& o = opt.param_groups()[0].options.as<AdamOptions>();
  EXPECT_EQ(o.lr(), 0.01);  // AdamOptions() leaves lr unset
  EXPECT_EQ(o.betas(), std::make_pair(0.8, 0.9));
  EXPECT_EQ(o.eps(), 1e-6);
  EXPECT_TRUE(o.amsgrad());
  EXPECT_EQ(o.weight_decay(), 0.1);
  Adam lone({b}, AdamOptions(0.01).betas(0.8, 0.9).eps(1e-6).amsgrad(true).weight_decay(0.1));
  for (int step = 0; step < 3; ++step) {
    set_grad(a, {0.5, -1.0 + step});
    set_grad(b, {0.5, -1.0 + step});
    opt.step();
    lone.step();
  }
  EXPECT_EQ(values(a), values(b));
  // Only the options a setter touched count as set; the optimizer's defaults were never "set" by
  // the group, so they are inherited, while a group setting lr keeps it.
  EXPECT_FALSE(AdamOptions().is_set("lr"));
  EXPECT_TRUE(AdamOptions(0.5).is_set("lr"));
  EXPECT_TRUE(AdamOptions().betas(0.9, 0.95).is_set("beta2"));
  EXPECT_FALSE(AdamOptions().betas(0.9, 0.95).is_set("eps"));
}

// nanoGPT's configure_optimizers: weight decay on the 2-D weights only, betas (0.9, 0.95) given
// once, in the optimizer's defaults. Before groups inherited, both groups silently ran with the
// struct's beta2 of 0.999 and lr of 1e-3.
TEST(ParamGroup, NanoGPTRecipeBothGroupsSeeTheDefaultsBetas) {
  Tensor weight = raw::from_vector(std::vector<double>{0.5, -0.25, 1.0, 2.0}, {2, 2}, kFloat64);
  weight.requires_grad_(true);
  Tensor bias = param({0.1, -0.1});
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : {weight, bias}) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  AdamW opt(std::vector<ParamGroup>{{decay, AdamWOptions().weight_decay(0.1)},
                                    {no_decay, AdamWOptions().weight_decay(0.0)}},
            AdamWOptions(6e-4).betas({0.9, 0.95}));
  for (size_t g = 0; g < 2; ++g) {
    const auto& o = opt.param_groups()[g].options.as<AdamWOptions>();
    EXPECT_EQ(o.betas(), std::make_pair(0.9, 0.95)) << "group " << g;
    EXPECT_EQ(o.lr(), 6e-4) << "group " << g;
  }
  EXPECT_EQ(opt.param_groups()[0].options.as<AdamWOptions>().weight_decay(), 0.1);
  EXPECT_EQ(opt.param_groups()[1].options.as<AdamWOptions>().weight_decay(), 0.0);
  // The steps use them: the same as two AdamWs given every option.
  Tensor w2 = raw::clone(weight).requires_grad_(true), b2 = param({0.1, -0.1});
  AdamW ref_w({w2}, AdamWOptions(6e-4).betas({0.9, 0.95}).weight_decay(0.1));
  AdamW ref_b({b2}, AdamWOptions(6e-4).betas({0.9, 0.95}).weight_decay(0.0));
  for (int step = 0; step < 4; ++step) {
    std::vector<double> g = {1, -1, 0.5, 1.0 * step};
    for (Tensor* t : {&weight, &w2}) t->mutable_grad() = raw::from_vector(g, {2, 2}, kFloat64);
    set_grad(bias, {0.3, -0.2 * step});
    set_grad(b2, {0.3, -0.2 * step});
    opt.step();
    ref_w.step();
    ref_b.step();
  }
  EXPECT_EQ(values(weight), values(w2));
  EXPECT_EQ(values(bias), values(b2));
  // A checkpoint of the filled groups restores into an optimizer built the same way.
  NamedTensors state = opt.state_dict();
  AdamW resumed(std::vector<ParamGroup>{{{raw::clone(weight).requires_grad_(true)}, AdamWOptions().weight_decay(0.1)},
                                        {{param({0, 0})}, AdamWOptions().weight_decay(0.0)}},
                AdamWOptions(6e-4).betas({0.9, 0.95}));
  resumed.load_state_dict(state);
  EXPECT_EQ(resumed.param_groups()[1].options.as<AdamWOptions>().betas(), std::make_pair(0.9, 0.95));
}

TEST(ParamGroup, InheritingFromAnotherOptimizersOptionsIsRefused) {
  AdamWOptions own = AdamWOptions().weight_decay(0.0);
  EXPECT_TRUE(throws_with([&] { own.inherit_unset(AdamOptions()); },
                          "can't inherit unset options of AdamWOptions from AdamOptions"));
}

// A filled group counts every option as set: moved to an optimizer with other defaults (as
// ZeroRedundancyOptimizer hands its groups to the wrapped optimizer), it keeps its values.
TEST(ParamGroup, AFilledGroupKeepsItsValuesInAnotherOptimizer) {
  Tensor a = param({1}), b = param({1});
  AdamW first(std::vector<ParamGroup>{{{a}, AdamWOptions().weight_decay(0.0)}}, AdamWOptions(0.1).betas(0.5, 0.6));
  AdamW second(std::vector<ParamGroup>{{{b}, first.param_groups()[0].options}}, AdamWOptions(0.2));
  const auto& o = second.param_groups()[0].options.as<AdamWOptions>();
  EXPECT_EQ(o.lr(), 0.1);
  EXPECT_EQ(o.betas(), std::make_pair(0.5, 0.6));
}

}  // namespace
}  // namespace colony::optim
