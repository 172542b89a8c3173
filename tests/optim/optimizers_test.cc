// RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD beyond their update rules (which
// optimizers_golden_test.cc compares with torch): state named as torch's, a checkpoint resumed mid-run
// equal bit for bit to the uninterrupted run, groups inheriting every option, torch's range
// checks, OneCycleLR's momentum where torch cycles it, and CUDA against the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <set>
#include <string>
#include <vector>

#include "nn/linear.h"
#include "ops/raw_ops.h"
#include "optim/adadelta.h"
#include "optim/adagrad.h"
#include "optim/adamax.h"
#include "optim/asgd.h"
#include "optim/checkpoint.h"
#include "optim/lr_scheduler.h"
#include "optim/nadam.h"
#include "optim/radam.h"
#include "optim/rmsprop.h"
#include "optim/rprop.h"
#include "tensor/grad_mode.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

using colony::testing::throws_with;
using Factory = std::function<std::unique_ptr<Optimizer>(const std::vector<Tensor>&)>;

template <class Opt, class O>
Factory make(O options) {
  return [options](const std::vector<Tensor>& p) { return std::make_unique<Opt>(p, options); };
}

struct Named {
  std::string name;
  Factory make;
  std::set<std::string> state;  // the state keys of a parameter after a step
};

// Each optimizer with the options that give it all its state.
std::vector<Named> optimizers() {
  return {
      {"RMSprop", make<RMSprop>(RMSpropOptions().momentum(0.5).centered(true)),
       {"step", "square_avg", "momentum_buffer", "grad_avg"}},
      {"Adagrad", make<Adagrad>(AdagradOptions(0.1).lr_decay(0.1).initial_accumulator_value(0.2)), {"step", "sum"}},
      {"Adamax", make<Adamax>(AdamaxOptions().weight_decay(0.1)), {"step", "exp_avg", "exp_inf"}},
      {"NAdam", make<NAdam>(NAdamOptions().momentum_decay(0.1)), {"step", "mu_product", "exp_avg", "exp_avg_sq"}},
      // beta2 0.8 crosses the rectification threshold (rho_t > 5) at step 7, after the resume.
      {"RAdam", make<RAdam>(RAdamOptions(0.05).betas({0.9, 0.8})), {"step", "exp_avg", "exp_avg_sq"}},
      {"Adadelta", make<Adadelta>(AdadeltaOptions().weight_decay(0.1)), {"step", "square_avg", "acc_delta"}},
      {"Rprop", make<Rprop>(RpropOptions(0.05).etas({0.4, 1.3})), {"step", "prev", "step_size"}},
      // t0 2: the running average starts mid-run (mu < 1 from step 4), across the resume.
      {"ASGD", make<ASGD>(ASGDOptions(0.05).lambd(0.01).t0(2).weight_decay(0.1)), {"step", "eta", "mu", "ax"}},
  };
}

// Deterministic gradients: 0.5 * p + a wave that changes with the step.
void set_grads(const std::vector<Tensor>& params, int step) {
  NoGradGuard no_grad;
  for (size_t k = 0; k < params.size(); ++k) {
    Tensor p = params[k];
    std::vector<double> w(p.numel());
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.9 * static_cast<double>(i) + 0.37 * step + k);
    p.mutable_grad() = raw::add(raw::to(raw::from_vector(w, p.sizes()), p.device(), p.dtype()), p.detach(), 0.5);
  }
}

void steps(Optimizer& opt, const std::vector<Tensor>& params, int from, int to) {
  for (int s = from; s < to; ++s) {
    set_grads(params, s);
    opt.step();
  }
}

// A 3 -> 2 linear layer with fixed weights.
std::unique_ptr<nn::Linear> model() {
  auto m = std::make_unique<nn::Linear>(3, 2);
  NoGradGuard no_grad;
  int k = 0;
  for (Tensor p : m->parameters()) {
    std::vector<double> v(p.numel());
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::cos(0.5 * static_cast<double>(i) + k);
    raw::copy_(p, raw::from_vector(v, p.sizes()));
    ++k;
  }
  return m;
}

TEST(Optimizers, StateIsNamedAsTorchs) {
  for (const Named& o : optimizers()) {
    auto m = model();
    auto opt = o.make(m->parameters());
    steps(*opt, m->parameters(), 0, 1);
    std::set<std::string> keys;
    for (const auto& [name, t] : opt->state_dict()) {
      if (name.rfind("state.0.", 0) == 0) keys.insert(name.substr(8));
    }
    EXPECT_EQ(keys, o.state) << o.name;
  }
}

TEST(Optimizers, AdagradStartsItsStateWhenBuilt) {
  auto m = model();
  Adagrad opt(m->parameters(), AdagradOptions().initial_accumulator_value(0.25));
  int found = 0;
  for (const auto& [name, t] : opt.state_dict()) {
    if (name == "state.1.sum") {
      EXPECT_TRUE(testing::matches_values(t, std::vector<double>(2, 0.25)));
      ++found;
    }
    if (name == "state.1.step") {
      EXPECT_EQ(t.item<double>(), 0.0);
      ++found;
    }
  }
  EXPECT_EQ(found, 2);
}

// Four steps, a checkpoint, a fresh model and optimizer loading it, four more steps: the weights
// equal those of eight uninterrupted steps bit for bit.
TEST(Optimizers, CheckpointResumesBitForBit) {
  for (const Named& o : optimizers()) {
    auto straight = model();
    auto opt = o.make(straight->parameters());
    steps(*opt, straight->parameters(), 0, 8);

    const std::string path = ::testing::TempDir() + "/resume_" + o.name + ".safetensors";
    {
      auto first = model();
      auto opt1 = o.make(first->parameters());
      steps(*opt1, first->parameters(), 0, 4);
      save_checkpoint(path, *first, *opt1, TrainingState{});
    }
    auto resumed = model();
    {
      NoGradGuard no_grad;
      for (Tensor p : resumed->parameters()) raw::fill_(p, 7.0);  // the checkpoint must restore them
    }
    auto opt2 = o.make(resumed->parameters());
    load_checkpoint(path, *resumed, *opt2);
    steps(*opt2, resumed->parameters(), 4, 8);
    const auto a = straight->parameters(), b = resumed->parameters();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(testing::values(a[i].detach()), testing::values(b[i].detach())) << o.name << " parameter " << i;
    }
  }
}

// A group that sets only lr takes every other option from the optimizer's defaults; each default
// differs from its struct's own default, so a field missing from fields() fails.
template <class Opt, class O>
void expect_group_inherits(const O& defaults) {
  const HyperParams plain = O().to_map();
  for (const auto& [k, v] : defaults.to_map()) EXPECT_NE(v, plain.at(k)) << O::kName << "." << k;
  Tensor a = raw::ones({2}), b = raw::ones({2});
  a.requires_grad_(true);
  b.requires_grad_(true);
  Opt opt(std::vector<ParamGroup>{{{a}}, {{b}, O(0.125)}}, defaults);
  HyperParams want = defaults.to_map();
  want["lr"] = 0.125;
  EXPECT_EQ(opt.param_groups()[1].options.get().to_map(), want) << O::kName;
  EXPECT_EQ(opt.param_groups()[0].options.get().to_map(), defaults.to_map()) << O::kName;
}

TEST(Optimizers, GroupsInheritEveryOptionTheyDoNotSet) {
  expect_group_inherits<RMSprop>(
      RMSpropOptions(0.5).alpha(0.9).eps(1e-4).weight_decay(0.1).momentum(0.3).centered(true).maximize(true));
  expect_group_inherits<Adagrad>(
      AdagradOptions(0.5).lr_decay(0.1).weight_decay(0.1).initial_accumulator_value(0.3).eps(1e-4).maximize(true));
  expect_group_inherits<Adamax>(AdamaxOptions(0.5).betas({0.8, 0.9}).eps(1e-4).weight_decay(0.1).maximize(true));
  expect_group_inherits<NAdam>(NAdamOptions(0.5)
                                   .betas({0.8, 0.9})
                                   .eps(1e-4)
                                   .weight_decay(0.1)
                                   .momentum_decay(0.1)
                                   .decoupled_weight_decay(true)
                                   .maximize(true));
  expect_group_inherits<RAdam>(
      RAdamOptions(0.5).betas({0.8, 0.9}).eps(1e-4).weight_decay(0.1).decoupled_weight_decay(true).maximize(true));
  expect_group_inherits<Adadelta>(AdadeltaOptions(0.5).rho(0.5).eps(1e-4).weight_decay(0.1).maximize(true));
  expect_group_inherits<Rprop>(RpropOptions(0.5).etas({0.4, 1.5}).step_sizes({1e-3, 10}).maximize(true));
  expect_group_inherits<ASGD>(ASGDOptions(0.5).lambd(1e-3).alpha(0.5).t0(10).weight_decay(0.1).maximize(true));
}

TEST(Optimizers, DefaultsAreTorchs) {
  EXPECT_EQ(RMSpropOptions().to_map(), (HyperParams{{"lr", 1e-2}, {"alpha", 0.99}, {"eps", 1e-8},
                                                    {"weight_decay", 0}, {"momentum", 0}, {"centered", 0},
                                                    {"maximize", 0}}));
  EXPECT_EQ(AdagradOptions().to_map(), (HyperParams{{"lr", 1e-2}, {"lr_decay", 0}, {"weight_decay", 0},
                                                    {"initial_accumulator_value", 0}, {"eps", 1e-10},
                                                    {"maximize", 0}}));
  EXPECT_EQ(AdamaxOptions().to_map(), (HyperParams{{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
                                                   {"weight_decay", 0}, {"maximize", 0}}));
  EXPECT_EQ(NAdamOptions().to_map(), (HyperParams{{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
                                                  {"weight_decay", 0}, {"momentum_decay", 4e-3},
                                                  {"decoupled_weight_decay", 0}, {"maximize", 0}}));
  EXPECT_EQ(RAdamOptions().to_map(), (HyperParams{{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
                                                  {"weight_decay", 0}, {"decoupled_weight_decay", 0},
                                                  {"maximize", 0}}));
  EXPECT_EQ(AdadeltaOptions().to_map(),
            (HyperParams{{"lr", 1.0}, {"rho", 0.9}, {"eps", 1e-6}, {"weight_decay", 0}, {"maximize", 0}}));
  EXPECT_EQ(RpropOptions().to_map(), (HyperParams{{"lr", 1e-2}, {"etaminus", 0.5}, {"etaplus", 1.2},
                                                  {"step_size_min", 1e-6}, {"step_size_max", 50}, {"maximize", 0}}));
  EXPECT_EQ(RpropOptions().etas(), (std::pair<double, double>{0.5, 1.2}));
  EXPECT_EQ(RpropOptions().step_sizes(), (std::pair<double, double>{1e-6, 50}));
  EXPECT_EQ(ASGDOptions().to_map(), (HyperParams{{"lr", 1e-2}, {"lambd", 1e-4}, {"alpha", 0.75}, {"t0", 1e6},
                                                 {"weight_decay", 0}, {"maximize", 0}}));
}

TEST(Optimizers, RangeChecksAreTorchsAndSayWhatWasExpected) {
  Tensor w = raw::ones({2});
  w.requires_grad_(true);
  const std::vector<Tensor> p = {w};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(throws_with([&] { RMSprop(p, RMSpropOptions(-1)); }, "RMSprop: Invalid learning rate: -1, expected lr >= 0"));
  EXPECT_TRUE(throws_with([&] { RMSprop(p, RMSpropOptions().alpha(-0.5)); }, "Invalid alpha value: -0.5, expected alpha >= 0"));
  EXPECT_TRUE(throws_with([&] { RMSprop(p, RMSpropOptions().momentum(-1)); }, "Invalid momentum value: -1"));
  EXPECT_TRUE(throws_with([&] { Adagrad(p, AdagradOptions(-1)); }, "Adagrad: Invalid learning rate: -1, expected lr >= 0"));
  EXPECT_TRUE(throws_with([&] { Adagrad(p, AdagradOptions().lr_decay(-0.1)); }, "Invalid lr_decay value: -0.1, expected lr_decay >= 0"));
  EXPECT_TRUE(throws_with([&] { Adagrad(p, AdagradOptions().initial_accumulator_value(-1)); },
                          "Invalid initial_accumulator_value value: -1"));
  EXPECT_TRUE(throws_with([&] { Adamax(p, AdamaxOptions().betas({1.0, 0.9})); },
                          "Adamax: Invalid beta parameter at index 0: 1, expected 0 <= beta1 < 1"));
  EXPECT_TRUE(throws_with([&] { Adamax(p, AdamaxOptions().eps(-1e-8)); }, "Invalid epsilon value: -1e-08, expected eps >= 0"));
  EXPECT_TRUE(throws_with([&] { NAdam(p, NAdamOptions().momentum_decay(-1)); },
                          "NAdam: Invalid momentum_decay value: -1, expected momentum_decay >= 0"));
  EXPECT_TRUE(throws_with([&] { NAdam(p, NAdamOptions().betas({0.9, 1.5})); }, "Invalid beta parameter at index 1: 1.5"));
  EXPECT_TRUE(throws_with([&] { RAdam(p, RAdamOptions().weight_decay(-1)); },
                          "RAdam: Invalid weight_decay value: -1, expected weight_decay >= 0"));
  EXPECT_TRUE(throws_with([&] { Adadelta(p, AdadeltaOptions().rho(1.5)); }, "Adadelta: Invalid rho value: 1.5, expected 0 <= rho <= 1"));
  EXPECT_TRUE(throws_with([&] { Adadelta(p, AdadeltaOptions(nan)); }, "option \"lr\" is nan"));
  EXPECT_TRUE(throws_with([&] { Rprop(p, RpropOptions(-1)); }, "Rprop: Invalid learning rate: -1, expected lr >= 0"));
  EXPECT_TRUE(throws_with([&] { Rprop(p, RpropOptions().etas({1.5, 1.2})); },
                          "Rprop: Invalid eta values: 1.5, 1.2, expected 0 < etaminus < 1 < etaplus"));
  EXPECT_TRUE(throws_with([&] { Rprop(p, RpropOptions().etas({0.5, 1.0})); }, "Invalid eta values: 0.5, 1"));
  EXPECT_TRUE(throws_with([&] { ASGD(p, ASGDOptions(-1)); }, "ASGD: Invalid learning rate: -1, expected lr >= 0"));
  EXPECT_TRUE(throws_with([&] { ASGD(p, ASGDOptions().lambd(-1)); }, "ASGD: Invalid lambd value: -1, expected lambd >= 0"));
  EXPECT_TRUE(throws_with([&] { ASGD(p, ASGDOptions().alpha(-1)); }, "ASGD: Invalid alpha value: -1, expected alpha >= 0"));
  EXPECT_TRUE(throws_with([&] { ASGD(p, ASGDOptions().weight_decay(-1)); },
                          "ASGD: Invalid weight_decay value: -1, expected weight_decay >= 0"));
  // Adadelta's rho may be 1 (torch's bound is inclusive).
  Adadelta ok(p, AdadeltaOptions().rho(1.0));
  // A group's options are checked too, and so is a checkpoint's.
  Tensor v = raw::ones({2});
  v.requires_grad_(true);
  EXPECT_TRUE(throws_with([&] { RAdam(std::vector<ParamGroup>{{{w}}, {{v}, RAdamOptions(-2)}}, RAdamOptions()); },
                          "RAdam: Invalid learning rate: -2"));
  RMSprop opt(p, RMSpropOptions());
  NamedTensors sd = opt.state_dict();
  for (auto& [name, t] : sd) {
    if (name == "param_groups.0.alpha") t = raw::scalar_tensor(-3, kFloat64);
  }
  EXPECT_TRUE(throws_with([&] { opt.load_state_dict(sd); }, "group 0: RMSprop: Invalid alpha value: -3"));
}

TEST(Optimizers, OneCycleLRCyclesMomentumOrBeta1WhereTorchDoes) {
  Tensor w = raw::ones({2});
  w.requires_grad_(true);
  RMSprop rms({w}, RMSpropOptions());
  OneCycleLR a(rms, OneCycleLROptions(0.1, 10));
  EXPECT_DOUBLE_EQ(rms.param_groups()[0].options.as<RMSpropOptions>().momentum(), 0.95);
  NAdam nadam({w}, NAdamOptions());
  OneCycleLR b(nadam, OneCycleLROptions(0.1, 10));
  EXPECT_DOUBLE_EQ(nadam.param_groups()[0].options.as<NAdamOptions>().beta1(), 0.95);
  Adagrad adagrad({w}, AdagradOptions());
  EXPECT_TRUE(throws_with([&] { OneCycleLR(adagrad, OneCycleLROptions(0.1, 10)); },
                          "this one (AdagradOptions) has neither. Set cycle_momentum(false)"));
}

// The CUDA kernels against the CPU loop, float32 and float64, three steps of each optimizer.
TEST(Optimizers, CudaMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const Named& o : optimizers()) {
      std::vector<Tensor> cpu, gpu;
      for (int64_t n : {70001, 5, 131}) {  // one tensor spans two multi-tensor chunks
        std::vector<double> v(n);
        for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.3 * static_cast<double>(i) + n);
        Tensor c = raw::to(raw::from_vector(v, {n}), kCPU, dtype);
        Tensor g = raw::to(c, Device::cuda(0), dtype);
        c.requires_grad_(true);
        g.requires_grad_(true);
        cpu.push_back(c);
        gpu.push_back(g);
      }
      auto oc = o.make(cpu);
      auto og = o.make(gpu);
      steps(*oc, cpu, 0, 3);
      steps(*og, gpu, 0, 3);
      const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
      for (size_t i = 0; i < cpu.size(); ++i) {
        EXPECT_TRUE(testing::all_close(raw::to(gpu[i].detach(), kCPU, dtype), cpu[i].detach(), tol, tol))
            << o.name << " " << dtype_name(dtype) << " parameter " << i;
      }
    }
  }
}

}  // namespace
}  // namespace colony::optim
