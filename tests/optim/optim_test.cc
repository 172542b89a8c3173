#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "optim/optim.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

// Loss sum(w * c) has gradient c: a fixed, known gradient every step.
void set_grad(Tensor& w, std::vector<double> g) { w.mutable_grad() = raw::from_vector(g, {}, kFloat64); }

// Every combination the CPU kernel treats separately (flags fixed at compile time or read per
// element), on 37 elements so that the vectorized loop body runs, not only its remainder.
TEST(SGD, MomentumNesterovWeightDecayMaximizeMatchTheFormula) {
  const int n = 37;
  for (double mom : {0.0, 0.9})
    for (double wd : {0.0, 0.01})
      for (bool nesterov : {false, true})
        for (bool maximize : {false, true}) {
          if (nesterov && mom == 0) continue;
          SCOPED_TRACE(::testing::Message() << "momentum " << mom << " weight_decay " << wd << " nesterov "
                                            << nesterov << " maximize " << maximize);
          std::vector<double> p(n), buf(n);
          for (int i = 0; i < n; ++i) p[i] = 1.0 - 0.1 * i;
          Tensor w = raw::from_vector(p, {n}, kFloat64);
          w.requires_grad_(true);
          const double lr = 0.1, damp = 0.0;
          SGD opt({w}, SGDOptions(lr).momentum(mom).weight_decay(wd).nesterov(nesterov).dampening(damp).maximize(maximize));
          for (int step = 0; step < 5; ++step) {
            std::vector<double> g(n);
            for (int i = 0; i < n; ++i) g[i] = 0.5 + step - 0.25 * step * i;
            set_grad(w, g);
            opt.step();
            for (int i = 0; i < n; ++i) {
              double d = maximize ? -g[i] : g[i];
              d += wd * p[i];
              if (mom != 0) {
                buf[i] = step == 0 ? d : mom * buf[i] + (1 - damp) * d;
                d = nesterov ? d + mom * buf[i] : buf[i];
              }
              p[i] -= lr * d;
            }
            std::vector<double> got = values(w);
            for (int i = 0; i < n; ++i) ASSERT_NEAR(got[i], p[i], 1e-12) << "step " << step << " element " << i;
          }
        }
}

TEST(SGD, DampeningAndPlainSgd) {
  Tensor w = raw::tensor({1.0}, TensorOptions(kFloat64).requires_grad(true));
  SGD opt({w}, SGDOptions(0.5).momentum(0.5).dampening(0.5));
  set_grad(w, {1.0});
  opt.step();  // buf = 1, p = 1 - 0.5
  set_grad(w, {1.0});
  opt.step();  // buf = 0.5 + 0.5 = 1, p = 0.5 - 0.5
  EXPECT_NEAR(values(w)[0], 0.0, 1e-12);
  Tensor v = raw::tensor({1.0}, TensorOptions(kFloat32).requires_grad(true));
  SGD plain({v}, SGDOptions(0.1));
  v.mutable_grad() = raw::tensor({2.0});
  plain.step();
  EXPECT_NEAR(values(v)[0], 0.8, 1e-7);
}

TEST(SGD, SkipsParametersWithoutGradAndValidates) {
  Tensor a = raw::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  SGD opt({a}, SGDOptions(0.1).momentum(0.9));
  opt.step();  // no grad: untouched
  EXPECT_EQ(values(a), (std::vector<double>{1, 1}));
  EXPECT_TRUE(throws_with([&] { SGD(std::vector<Tensor>{a}, SGDOptions(-1)); }, "SGD: invalid learning rate"));
  EXPECT_TRUE(throws_with([&] { SGD(std::vector<Tensor>{a}, SGDOptions(0.1).nesterov(true)); }, "nesterov momentum requires a momentum"));
  EXPECT_TRUE(throws_with([&] { SGD(std::vector<Tensor>{}, SGDOptions(0.1)); }, "empty parameter list"));
}

TEST(Adam, MatchesTheFormulaWithAndWithoutAmsgradAndAdamW) {
  for (int variant = 0; variant < 3; ++variant) {
    bool amsgrad = variant == 1, decoupled = variant == 2;
    Tensor w = raw::tensor({0.5, -1.5}, TensorOptions(kFloat64).requires_grad(true));
    double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
    std::unique_ptr<Optimizer> opt;
    if (decoupled) {
      opt = std::make_unique<AdamW>(std::vector<Tensor>{w}, AdamWOptions(lr).weight_decay(wd));
    } else {
      opt = std::make_unique<Adam>(std::vector<Tensor>{w}, AdamOptions(lr).weight_decay(wd).amsgrad(amsgrad));
    }
    std::vector<double> p = {0.5, -1.5}, m(2), v(2), vmax(2);
    for (int t = 1; t <= 6; ++t) {
      std::vector<double> g = {std::sin(t), t % 2 ? 0.3 : -2.0};
      set_grad(w, g);
      opt->step();
      for (int i = 0; i < 2; ++i) {
        double gi = g[i];
        if (decoupled) {
          p[i] *= 1 - lr * wd;
        } else {
          gi += wd * p[i];
        }
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        vmax[i] = std::max(vmax[i], v[i]);
        double second = amsgrad ? vmax[i] : v[i];
        double denom = std::sqrt(second) / std::sqrt(1 - std::pow(b2, t)) + eps;
        p[i] -= lr / (1 - std::pow(b1, t)) * m[i] / denom;
      }
      std::vector<double> got = values(w);
      EXPECT_NEAR(got[0], p[0], 1e-12) << "variant " << variant << " step " << t;
      EXPECT_NEAR(got[1], p[1], 1e-12);
    }
  }
}

TEST(Optimizer, ParamGroupsAndStateDictRoundTrip) {
  Tensor a = raw::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  Tensor b = raw::ones({3}, TensorOptions(kFloat64).requires_grad(true));
  SGD opt(std::vector<ParamGroup>{{{a}, {}}, {{b}, SGDOptions(0.5).momentum(0.9)}}, SGDOptions(0.1).momentum(0.9));
  EXPECT_EQ(opt.lr(0), 0.1);
  EXPECT_EQ(opt.lr(1), 0.5);
  set_grad(a, {1, 2});
  set_grad(b, {1, 1, 1});
  opt.step();
  NamedTensors state = opt.state_dict();

  Tensor a2 = raw::clone(a).requires_grad_(true);
  Tensor b2 = raw::clone(b).requires_grad_(true);
  SGD opt2(std::vector<ParamGroup>{{{a2}, {}}, {{b2}, {}}}, SGDOptions(0.1).momentum(0.9));
  opt2.load_state_dict(state);
  EXPECT_EQ(opt2.lr(1), 0.5);  // group options restored
  set_grad(a, {3, 4});
  set_grad(a2, {3, 4});
  opt.step();
  opt2.step();  // same momentum buffer, same result
  EXPECT_TRUE(raw::equal(a, a2));

  SGD single({a2}, SGDOptions(0.1));
  EXPECT_TRUE(throws_with([&] { single.load_state_dict(state); }, "more parameter groups than this optimizer"));
  EXPECT_TRUE(throws_with([&] { SGD(std::vector<ParamGroup>{{{a}, {}}, {{a}, {}}}, SGDOptions(0.1)); },
                          "some parameters appear in more than one parameter group"));
}

// NaN passed every "< 0" check; a checkpoint's options were not checked at all.
TEST(Optimizer, NanAndOutOfRangeOptionsAreRefusedEverywhere) {
  Tensor a = raw::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(throws_with([&] { SGD(std::vector<Tensor>{a}, SGDOptions(nan)); }, "option \"lr\" is nan"));
  EXPECT_TRUE(throws_with([&] { SGD(std::vector<Tensor>{a}, SGDOptions(0.1).momentum(nan)); }, "option \"momentum\" is nan"));
  EXPECT_TRUE(throws_with([&] { SGD(std::vector<Tensor>{a}, SGDOptions(0.1).momentum(-0.5)); }, "SGD: invalid momentum value -0.5"));
  EXPECT_TRUE(throws_with([&] { Adam(std::vector<Tensor>{a}, AdamOptions(nan)); }, "option \"lr\" is nan"));
  EXPECT_TRUE(throws_with([&] { Adam(std::vector<Tensor>{a}, AdamOptions(0.1).betas(0.9, 1.0)); }, "invalid beta parameter at index 1"));

  // A group added later, and a group given to the constructor, are checked by the optimizer's rules.
  Tensor b = raw::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  Tensor c = raw::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  SGD opt({a}, SGDOptions(0.1).momentum(0.9));
  EXPECT_TRUE(throws_with([&] { opt.add_param_group({{b}, SGDOptions(-1.0)}); }, "SGD: invalid learning rate -1"));
  EXPECT_TRUE(throws_with([&] { Adam(std::vector<Tensor>{c}, AdamOptions(0.1).eps(-1)); }, "Adam: invalid epsilon value"));

  // load_state_dict: each bad value is refused and nothing is changed.
  for (const auto& [key, value] : std::vector<std::pair<std::string, double>>{
           {"lr", nan}, {"lr", -0.1}, {"momentum", -1}, {"momentum", std::numeric_limits<double>::infinity()}}) {
    NamedTensors state = opt.state_dict();
    for (auto& [n, t] : state)
      if (n == "param_groups.0." + key) t = raw::scalar_tensor(value, kFloat64);
    EXPECT_TRUE(throws_with([&] { opt.load_state_dict(state); }, "optimizer load_state_dict: group 0:")) << key;
    EXPECT_EQ(opt.lr(), 0.1);
    EXPECT_EQ(opt.param_groups()[0].options.as<SGDOptions>().momentum(), 0.9);
  }
  NamedTensors state = opt.state_dict();
  for (auto& [n, t] : state)
    if (n == "param_groups.0.num_params") t = raw::scalar_tensor(nan, kFloat64);
  EXPECT_TRUE(throws_with([&] { opt.load_state_dict(state); }, "group 0 has nan parameters in the state but 1 here"));
  for (auto& [n, t] : state)
    if (n == "param_groups.0.num_params") t = raw::ones({2}, kFloat64);
  EXPECT_TRUE(throws_with([&] { opt.load_state_dict(state); }, "\"param_groups.0.num_params\" holds 2 values, expected one"));
}

TEST(ClipGrad, NormAndValue) {
  Tensor a = raw::zeros({2}, TensorOptions(kFloat64).requires_grad(true));
  Tensor b = raw::zeros({1}, TensorOptions(kFloat64).requires_grad(true));
  set_grad(a, {3, 0});
  set_grad(b, {4});
  double norm = clip_grad_norm_({a, b}, 1.0);
  EXPECT_NEAR(norm, 5.0, 1e-12);
  EXPECT_NEAR(values(a.grad())[0], 3 / (5 + 1e-6), 1e-9);
  EXPECT_NEAR(values(b.grad())[0], 4 / (5 + 1e-6), 1e-9);
  set_grad(a, {-3, 0.5});
  EXPECT_NEAR(clip_grad_norm_({a}, 10.0, INFINITY), 3.0, 1e-12);
  EXPECT_EQ(values(a.grad()), (std::vector<double>{-3, 0.5}));  // under the limit: untouched
  clip_grad_value_({a}, 1.0);
  EXPECT_EQ(values(a.grad()), (std::vector<double>{-1, 0.5}));
}

TEST(LRScheduler, Sequences) {
  Tensor w = raw::ones({1}, TensorOptions(kFloat64).requires_grad(true));
  auto run = [&](auto make, int n) {
    SGD opt({w}, SGDOptions(1.0));
    auto sched = make(opt);
    std::vector<double> lrs = {opt.lr()};
    for (int i = 0; i < n; ++i) {
      sched.step();
      lrs.push_back(opt.lr());
    }
    return lrs;
  };
  auto close = [](std::vector<double> a, std::vector<double> b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::abs(a[i] - b[i]) > 1e-12) return false;
    return true;
  };
  EXPECT_TRUE(close(run([](Optimizer& o) { return StepLR(o, 2, 0.5); }, 5), {1, 1, 0.5, 0.5, 0.25, 0.25}));
  EXPECT_TRUE(close(run([](Optimizer& o) { return MultiStepLR(o, {1, 3}, 0.1); }, 4), {1, 0.1, 0.1, 0.01, 0.01}));
  EXPECT_TRUE(close(run([](Optimizer& o) { return CosineAnnealingLR(o, 4, 0.0); }, 4),
                    {1, (1 + std::cos(M_PI / 4)) / 2, 0.5, (1 + std::cos(3 * M_PI / 4)) / 2, 0}));
  EXPECT_TRUE(close(run([](Optimizer& o) { return LinearLR(o, 0.25, 1.0, 3); }, 4), {0.25, 0.5, 0.75, 1, 1}));
  SGD opt({w}, SGDOptions(1.0));
  StepLR s(opt, 2, 0.5);
  s.set_last_epoch(4);  // resume: the rate for epoch 4 applies at once
  EXPECT_NEAR(opt.lr(), 0.25, 1e-12);
}

}  // namespace
}  // namespace colony::optim
