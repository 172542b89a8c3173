// LBFGS against torch.optim.LBFGS's trajectories (lbfgs_golden.py writes lbfgs_golden.h): with and
// without the strong-Wolfe line search, a short history, max_eval, both tolerances and maximize;
// its state_dict round trip and its refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "optim/lbfgs.h"
#include "tests/optim/lbfgs_golden.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

constexpr int kSteps = 10;

// wave(n, k) of lbfgs_golden.py.
Tensor wave(int64_t n, int k) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + 1.3 * k + 0.2);
  Tensor t = raw::from_vector(v, {n});
  t.requires_grad_(true);
  return t;
}

std::vector<Tensor> start() { return {wave(3, 0), wave(2, 1)}; }

// The Rosenbrock function of cat(params), negated when `negate`.
LBFGS::LossClosure rosenbrock(LBFGS& opt, const std::vector<Tensor>& params, bool negate = false) {
  return [&opt, params, negate] {
    opt.zero_grad();
    Tensor x = cat(params, 0);
    Tensor head = slice(x, 0, 0, 4), tail = slice(x, 0, 1, 5);
    Tensor a = tail - head * head, b = 1.0 - head;
    Tensor loss = sum(100.0 * (a * a) + b * b);
    if (negate) loss = -loss;
    loss.backward();
    return loss;
  };
}

struct Case {
  LBFGSOptions options;
  bool negate;
};

// lbfgs_golden.py's CASES.
std::map<std::string, Case> cases() {
  using O = LBFGSOptions;
  return {
      {"plain", {O().max_iter(4), false}},
      {"history2_lr", {O(0.5).max_iter(5).history_size(2), false}},
      {"max_eval", {O().max_iter(6).max_eval(4), false}},
      {"tolerance_change", {O().max_iter(20).tolerance_change(1e-3), false}},
      {"tolerance_grad", {O().max_iter(20).tolerance_grad(1e-1), false}},
      {"strong_wolfe", {O().max_iter(4).line_search_fn("strong_wolfe"), false}},
      {"strong_wolfe_history", {O(0.8).max_iter(6).history_size(3).line_search_fn("strong_wolfe"), false}},
      {"strong_wolfe_max_eval", {O().max_iter(10).max_eval(6).line_search_fn("strong_wolfe"), false}},
      {"maximize", {O().max_iter(4).maximize(true), true}},
      {"maximize_strong_wolfe", {O().max_iter(4).maximize(true).line_search_fn("strong_wolfe"), true}},
  };
}

double state_scalar(const LBFGS& opt, const std::string& key) {
  for (const auto& [name, t] : opt.state_dict()) {
    if (name == "state.0." + key) return t.item<double>();
  }
  ADD_FAILURE() << "no state.0." << key;
  return std::nan("");
}

class LBFGSGolden : public ::testing::TestWithParam<std::string> {};

// The parameters, loss and evaluation counts after each step, within float64 rounding of torch's
// (the dot products sum in another order than torch's BLAS, and Rosenbrock's narrow valley amplifies
// that over the iterations to about 1e-9 relative).
TEST_P(LBFGSGolden, MatchesTorchFloat64) {
  const Case c = cases().at(GetParam());
  const std::vector<double>& want = testing::lbfgs_golden().at(GetParam());
  ASSERT_EQ(want.size(), static_cast<size_t>(8 * kSteps));
  std::vector<Tensor> params = start();
  LBFGS opt(params, c.options);
  auto closure = rosenbrock(opt, params, c.negate);
  for (int s = 0; s < kSteps; ++s) {
    const double loss = opt.step(closure).item<double>();
    std::vector<double> got = values(params[0]);
    for (double v : values(params[1])) got.push_back(v);
    got.push_back(loss);
    got.push_back(state_scalar(opt, "func_evals"));
    got.push_back(state_scalar(opt, "n_iter"));
    for (size_t i = 0; i < got.size(); ++i) {
      const double w = want[8 * s + i];
      EXPECT_NEAR(got[i], w, 1e-11 + 1e-8 * std::abs(w)) << GetParam() << ": step " << s << ", value " << i;
    }
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, c] : cases()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Torch, LBFGSGolden, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(LBFGSGoldenCases, MatchTheScriptsCases) { EXPECT_EQ(testing::lbfgs_golden().size(), cases().size()); }

// torch's max_eval=None is max_iter * 5 / 4.
TEST(LBFGS, MaxEvalDefaultsToFiveQuartersOfMaxIter) {
  std::vector<Tensor> params = start();
  EXPECT_EQ(LBFGS(params).param_groups()[0].options.as<LBFGSOptions>().max_eval(), 25);
  EXPECT_EQ(LBFGS(params, LBFGSOptions().max_iter(10)).param_groups()[0].options.as<LBFGSOptions>().max_eval(), 12);
  EXPECT_EQ(LBFGS(params, LBFGSOptions().max_iter(10).max_eval(3)).param_groups()[0].options.as<LBFGSOptions>().max_eval(),
            3);
}

// Two steps, a state_dict into a fresh optimizer over copies of the parameters, then both go on:
// the same parameters to the bit, as the history, direction and counts carried over.
TEST(LBFGS, StateDictRoundTripContinuesTheSameTrajectory) {
  for (bool wolfe : {false, true}) {
    SCOPED_TRACE(wolfe ? "strong_wolfe" : "no line search");
    LBFGSOptions o = LBFGSOptions().max_iter(3).history_size(2);
    if (wolfe) o.line_search_fn("strong_wolfe");
    std::vector<Tensor> a = start();
    LBFGS opt_a(a, o);
    auto closure_a = rosenbrock(opt_a, a);
    opt_a.step(closure_a);
    opt_a.step(closure_a);
    std::vector<Tensor> b = {raw::clone(a[0].detach()), raw::clone(a[1].detach())};
    for (Tensor& p : b) p.requires_grad_(true);
    LBFGS opt_b(b, LBFGSOptions());
    opt_b.load_state_dict(opt_a.state_dict());
    EXPECT_EQ(opt_b.param_groups()[0].options.as<LBFGSOptions>().history_size(), 2);
    EXPECT_EQ(opt_b.param_groups()[0].options.as<LBFGSOptions>().line_search_fn().has_value(), wolfe);
    auto closure_b = rosenbrock(opt_b, b);
    for (int s = 0; s < 3; ++s) {
      opt_a.step(closure_a);
      opt_b.step(closure_b);
      EXPECT_EQ(values(a[0]), values(b[0])) << "step " << s;
      EXPECT_EQ(values(a[1]), values(b[1])) << "step " << s;
    }
    std::map<std::string, Tensor> saved;
    for (const auto& [name, t] : opt_b.state_dict()) saved[name] = t;
    for (const char* key : {"func_evals", "n_iter", "d", "t", "H_diag", "prev_flat_grad", "prev_loss", "ro", "al",
                            "old_dirs", "old_stps"}) {
      EXPECT_TRUE(saved.count(std::string("state.0.") + key)) << key;
    }
    EXPECT_EQ(saved["state.0.old_dirs"].shape(), (Shape{2, 5}));
  }
}

TEST(LBFGS, RefusesWhatTorchRefuses) {
  std::vector<Tensor> params = start();
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { LBFGS(std::vector<ParamGroup>{{{params[0]}}, {{params[1]}}}, LBFGSOptions()); },
      "LBFGS doesn't support per-parameter options (parameter groups)"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { LBFGS(params, LBFGSOptions(-1)); },
                                                 "LBFGS: Invalid learning rate: -1, expected lr >= 0"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { LBFGSOptions().line_search_fn("backtracking"); },
                                                 "only 'strong_wolfe' is supported"));
  LBFGS opt(params);
  EXPECT_TRUE(throws_with<std::logic_error>([&] { opt.step(); }, "call step(closure)"));
  // A group added later makes step refuse, as torch's assertion.
  Tensor extra = wave(2, 5);
  opt.add_param_group(ParamGroup({extra}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { opt.step(rosenbrock(opt, params)); },
                                                 "LBFGS doesn't support per-parameter options"));
}

// A gradient already within tolerance_grad: one evaluation, nothing moves (torch's early return).
TEST(LBFGS, ReturnsAtOnceWhenTheGradientIsWithinTolerance) {
  std::vector<Tensor> params = {raw::from_vector(std::vector<double>{1, 1, 1}, {3}),
                                raw::from_vector(std::vector<double>{1, 1}, {2})};
  for (Tensor& p : params) p.requires_grad_(true);
  LBFGS opt(params);
  const double loss = opt.step(rosenbrock(opt, params)).item<double>();
  EXPECT_EQ(loss, 0.0);
  EXPECT_EQ(values(params[0]), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(state_scalar(opt, "func_evals"), 1.0);
  EXPECT_EQ(state_scalar(opt, "n_iter"), 0.0);
}

}  // namespace
}  // namespace colony::optim
