// RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD against torch.optim's trajectories
// (optimizers_golden.py writes optimizers_golden.h): every option that changes the math, two
// parameter groups with their own options, and OneCycleLR driving the rate and momentum or beta1;
// and for some cases the state after the last step (Rprop's prev and step_size, ASGD's ax, eta, mu).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/raw_ops.h"
#include "optim/adadelta.h"
#include "optim/adagrad.h"
#include "optim/adamax.h"
#include "optim/asgd.h"
#include "optim/lr_scheduler.h"
#include "optim/nadam.h"
#include "optim/radam.h"
#include "optim/rmsprop.h"
#include "optim/rprop.h"
#include "tensor/grad_mode.h"
#include "tests/optim/optimizers_golden.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

constexpr int kSteps = 8;
const std::vector<Shape> kShapes = {{5}, {2, 3}, {4}};

using Factory = std::function<std::unique_ptr<Optimizer>(const std::vector<Tensor>&)>;

// One group of every parameter.
template <class Opt, class O>
Factory one(O options) {
  return [options](const std::vector<Tensor>& p) { return std::make_unique<Opt>(p, options); };
}
// The last parameter in a second group with its own options (inheriting the rest).
template <class Opt, class O>
Factory two(O defaults, O second) {
  return [defaults, second](const std::vector<Tensor>& p) {
    return std::make_unique<Opt>(std::vector<ParamGroup>{{{p[0], p[1]}}, {{p[2]}, second}}, defaults);
  };
}

struct Case {
  std::string name;
  Factory make;
  std::optional<OneCycleLROptions> onecycle;
};

OneCycleLROptions onecycle(double max_lr, bool cycle_momentum = true) {
  return OneCycleLROptions(max_lr, kSteps + 2).cycle_momentum(cycle_momentum);
}

// optimizers_golden.py's CASES, in its order.
std::vector<Case> cases() {
  using R = RMSpropOptions;
  using G = AdagradOptions;
  using X = AdamaxOptions;
  using N = NAdamOptions;
  using A = RAdamOptions;
  using D = AdadeltaOptions;
  using P = RpropOptions;
  using S = ASGDOptions;
  return {
      {"rmsprop", one<RMSprop>(R()), {}},
      {"rmsprop_alpha_wd", one<RMSprop>(R(0.05).alpha(0.9).weight_decay(0.1)), {}},
      {"rmsprop_momentum", one<RMSprop>(R().momentum(0.9)), {}},
      {"rmsprop_centered", one<RMSprop>(R().centered(true).eps(1e-3)), {}},
      {"rmsprop_all", one<RMSprop>(R().centered(true).momentum(0.5).weight_decay(0.2).maximize(true)), {}},
      {"rmsprop_groups", two<RMSprop>(R(0.02), R().momentum(0.8).centered(true)), {}},
      {"rmsprop_onecycle", one<RMSprop>(R()), onecycle(0.05)},
      {"adagrad", one<Adagrad>(G()), {}},
      {"adagrad_lr_decay", one<Adagrad>(G(0.1).lr_decay(0.3)), {}},
      {"adagrad_wd_init", one<Adagrad>(G().weight_decay(0.1).initial_accumulator_value(0.5).eps(1e-3)), {}},
      {"adagrad_maximize", one<Adagrad>(G().maximize(true).lr_decay(0.05)), {}},
      {"adagrad_groups", two<Adagrad>(G(0.05), G().lr_decay(0.5).weight_decay(0.3)), {}},
      {"adagrad_onecycle", one<Adagrad>(G()), onecycle(0.1, false)},
      {"adamax", one<Adamax>(X()), {}},
      {"adamax_wd", one<Adamax>(X().weight_decay(0.1).eps(1e-3)), {}},
      {"adamax_betas_maximize", one<Adamax>(X().betas({0.3, 0.5}).maximize(true)), {}},
      {"adamax_groups", two<Adamax>(X(0.01), X().betas({0.5, 0.9})), {}},
      {"adamax_onecycle", one<Adamax>(X()), onecycle(0.01)},
      {"nadam", one<NAdam>(N()), {}},
      {"nadam_wd", one<NAdam>(N().weight_decay(0.1)), {}},
      {"nadam_decoupled", one<NAdam>(N(0.05).weight_decay(0.1).decoupled_weight_decay(true)), {}},
      {"nadam_momentum_decay", one<NAdam>(N().momentum_decay(0.1).betas({0.4, 0.6}).maximize(true)), {}},
      {"nadam_groups", two<NAdam>(N(0.01), N().momentum_decay(0.2).weight_decay(0.1)), {}},
      {"nadam_onecycle", one<NAdam>(N()), onecycle(0.01)},
      {"radam", one<RAdam>(A()), {}},
      {"radam_beta2", one<RAdam>(A(0.05).betas({0.3, 0.8})), {}},
      {"radam_wd", one<RAdam>(A().weight_decay(0.1).betas({0.9, 0.8})), {}},
      {"radam_decoupled", one<RAdam>(A(0.05).weight_decay(0.1).decoupled_weight_decay(true)), {}},
      {"radam_maximize", one<RAdam>(A().maximize(true).betas({0.9, 0.7}).eps(1e-3)), {}},
      {"radam_groups", two<RAdam>(A(0.01), A().betas({0.8, 0.7}).weight_decay(0.2)), {}},
      {"radam_onecycle", one<RAdam>(A().betas({0.9, 0.8})), onecycle(0.01)},
      {"adadelta", one<Adadelta>(D()), {}},
      {"adadelta_rho", one<Adadelta>(D(0.5).rho(0.5).eps(1e-3)), {}},
      {"adadelta_wd_maximize", one<Adadelta>(D().weight_decay(0.1).maximize(true)), {}},
      {"adadelta_groups", two<Adadelta>(D(2.0), D().rho(0.7).weight_decay(0.1)), {}},
      {"adadelta_onecycle", one<Adadelta>(D()), onecycle(2.0, false)},
      {"rprop", one<Rprop>(P()), {}},
      {"rprop_etas_sizes", one<Rprop>(P(0.1).etas({0.3, 1.5}).step_sizes({0.02, 0.15})), {}},
      {"rprop_maximize", one<Rprop>(P(0.05).maximize(true)), {}},
      {"rprop_groups", two<Rprop>(P(0.02), P().etas({0.4, 1.1}).step_sizes({1e-3, 0.03})), {}},
      {"rprop_onecycle", one<Rprop>(P()), onecycle(0.05, false)},
      {"asgd", one<ASGD>(S()), {}},
      {"asgd_t0", one<ASGD>(S(0.1).lambd(0.05).alpha(0.5).t0(3)), {}},
      {"asgd_wd_maximize", one<ASGD>(S(0.05).weight_decay(0.1).maximize(true).t0(1)), {}},
      {"asgd_groups", two<ASGD>(S(0.05).t0(2), S().lambd(0.1).weight_decay(0.2)), {}},
      {"asgd_onecycle", one<ASGD>(S().t0(2)), onecycle(0.1, false)},
  };
}

// wave(shape, k) of optimizers_golden.py.
Tensor wave(const Shape& shape, int k, DType dtype) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + 1.3 * k + 0.2);
  return raw::to(raw::from_vector(v, shape), kCPU, dtype);
}

// Every parameter's values after each step, as optimizers_golden.py lists them; with state_keys,
// instead every parameter's state tensors `state_keys` after the last step (its STATES).
std::vector<double> trajectory(const Case& c, DType dtype, const std::vector<std::string>& state_keys = {}) {
  std::vector<Tensor> params;
  for (size_t k = 0; k < kShapes.size(); ++k) {
    Tensor p = wave(kShapes[k], static_cast<int>(k), dtype);
    p.requires_grad_(true);
    params.push_back(p);
  }
  std::unique_ptr<Optimizer> opt = c.make(params);
  std::unique_ptr<OneCycleLR> sched;
  if (c.onecycle) sched = std::make_unique<OneCycleLR>(*opt, *c.onecycle);
  std::vector<double> out;
  for (int s = 0; s < kSteps; ++s) {
    {
      NoGradGuard no_grad;
      for (size_t k = 0; k < params.size(); ++k) {
        params[k].mutable_grad() =
            raw::add(wave(kShapes[k], 10 * (s + 1) + static_cast<int>(k), dtype), params[k].detach(), 0.5);
      }
    }
    opt->step();
    if (sched) sched->step();
    for (const Tensor& p : params) {
      const std::vector<double> v = testing::values(p.detach());
      out.insert(out.end(), v.begin(), v.end());
    }
  }
  if (state_keys.empty()) return out;
  // state_dict's "state.<i>.<key>", parameter i in order.
  std::map<std::string, Tensor> saved;
  for (const auto& [name, t] : opt->state_dict()) saved[name] = t;
  std::vector<double> state;
  for (size_t i = 0; i < params.size(); ++i) {
    for (const std::string& key : state_keys) {
      auto it = saved.find("state." + std::to_string(i) + "." + key);
      if (it == saved.end()) {
        ADD_FAILURE() << c.name << ": no state." << i << "." << key;
        return {};
      }
      const std::vector<double> v = testing::values(it->second);
      state.insert(state.end(), v.begin(), v.end());
    }
  }
  return state;
}

// Within float rounding of torch's: float64 to 1e-12 relative; float32, whose roundings the
// later steps amplify (and whose NAdam mu_product torch keeps in float32, Colony in float64),
// to 2e-5.
void expect_trajectory(const std::string& name, DType dtype, const std::vector<std::string>& state_keys = {}) {
  const bool f64 = dtype == kFloat64;
  const std::string key = name + (f64 ? ".float64" : ".float32");
  const auto& golden = state_keys.empty() ? testing::optimizers_golden() : testing::optimizer_states_golden();
  auto it = golden.find(key);
  ASSERT_NE(it, golden.end()) << key << " is not in optimizers_golden.h; rerun optimizers_golden.py";
  const std::vector<double>& want = it->second;
  const Case* c = nullptr;
  static const std::vector<Case> all = cases();
  for (const Case& x : all) {
    if (x.name == name) c = &x;
  }
  ASSERT_NE(c, nullptr);
  const std::vector<double> got = trajectory(*c, dtype, state_keys);
  ASSERT_EQ(got.size(), want.size()) << key;
  const double rtol = f64 ? 1e-12 : 2e-5, atol = f64 ? 1e-14 : 2e-6;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i])) && reported++ < 3) {
      ADD_FAILURE() << key << ": value " << i << " (step " << i / 15 << ") is " << got[i] << ", torch's "
                    << want[i];
    }
  }
}

class OptimizerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerGolden, MatchesTorchFloat64) { expect_trajectory(GetParam(), kFloat64); }
TEST_P(OptimizerGolden, MatchesTorchFloat32) { expect_trajectory(GetParam(), kFloat32); }

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const Case& c : cases()) names.push_back(c.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Torch, OptimizerGolden, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// optimizers_golden.py's STATES.
const std::map<std::string, std::vector<std::string>> kStates = {
    {"rprop_etas_sizes", {"prev", "step_size"}},
    {"rprop_groups", {"prev", "step_size"}},
    {"asgd_t0", {"ax", "eta", "mu"}},
    {"asgd_groups", {"ax", "eta", "mu"}},
};

class OptimizerStateGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerStateGolden, MatchesTorchFloat64) { expect_trajectory(GetParam(), kFloat64, kStates.at(GetParam())); }
TEST_P(OptimizerStateGolden, MatchesTorchFloat32) { expect_trajectory(GetParam(), kFloat32, kStates.at(GetParam())); }

std::vector<std::string> state_case_names() {
  std::vector<std::string> names;
  for (const auto& [name, keys] : kStates) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Torch, OptimizerStateGolden, ::testing::ValuesIn(state_case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Every case the script wrote is run here (a case added to one list only is caught).
TEST(OptimizerGoldenCases, MatchTheScriptsCases) {
  EXPECT_EQ(testing::optimizers_golden().size(), 2 * cases().size());
  EXPECT_EQ(testing::optimizer_states_golden().size(), 2 * kStates.size());
}

}  // namespace
}  // namespace colony::optim
