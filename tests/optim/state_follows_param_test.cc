// The optimizer state follows its parameter: after model->to(kFloat64) (or to another device) between
// steps, the next step converts each parameter's state as load_state_dict places it (floating state
// of one or more dims in the parameter's dtype, on its device), for every optimizer. torch 2.15 keeps
// SGD's, RMSprop's, Adagrad's, Adadelta's, Rprop's and ASGD's float32 state and steps, and refuses
// Adam's, AdamW's, Adamax's, NAdam's, RAdam's and Adafactor's ("expected dtype float for `end` but
// got dtype double"); Colony steps all of them, the state in float64.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/linear.h"
#include "ops/raw_ops.h"
#include "optim/optim.h"

namespace colony::optim {
namespace {

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(const std::vector<Tensor>&)>;

template <typename Opt, typename Options>
MakeOptimizer make(Options options) {
  return [options](const std::vector<Tensor>& p) { return std::make_unique<Opt>(p, options); };
}

std::vector<std::pair<std::string, MakeOptimizer>> all_optimizers() {
  return {
      {"SGD", make<SGD>(SGDOptions(0.1).momentum(0.9))},
      {"SGD nesterov", make<SGD>(SGDOptions(0.1).momentum(0.9).nesterov(true))},
      {"Adam", make<Adam>(AdamOptions(0.1))},
      {"Adam amsgrad", make<Adam>(AdamOptions(0.1).amsgrad(true))},
      {"AdamW", make<AdamW>(AdamWOptions(0.1))},
      {"RMSprop", make<RMSprop>(RMSpropOptions().momentum(0.5).centered(true))},
      {"Adagrad", make<Adagrad>(AdagradOptions(0.1))},
      {"Adamax", make<Adamax>(AdamaxOptions())},
      {"NAdam", make<NAdam>(NAdamOptions())},
      {"RAdam", make<RAdam>(RAdamOptions())},
      {"Adadelta", make<Adadelta>(AdadeltaOptions())},
      {"Rprop", make<Rprop>(RpropOptions())},
      {"ASGD", make<ASGD>(ASGDOptions(0.05))},
      {"Adafactor", make<Adafactor>(AdafactorOptions())},
      {"Muon", make<Muon>(MuonOptions(0.02))},
      {"LBFGS", make<LBFGS>(LBFGSOptions(0.5))},
  };
}

Tensor loss_of(nn::Linear& m, DType dtype) {
  Tensor x = raw::to(raw::arange(12).reshape({4, 3}) * 0.1 - 0.5, kCPU, dtype);
  return colony::sum(colony::square(m.forward(x) - 0.25));
}

void step(Optimizer& opt, nn::Linear& m, DType dtype) {
  auto closure = [&] {
    opt.zero_grad();
    Tensor loss = loss_of(m, dtype);
    loss.backward();
    return loss;
  };
  if (auto* lbfgs = dynamic_cast<LBFGS*>(&opt)) {
    lbfgs->step(closure);
  } else {
    closure();
    opt.step();
  }
}

TEST(OptimizerState, FollowsItsParameterToFloat64) {
  for (auto& [name, make_opt] : all_optimizers()) {
    SCOPED_TRACE(name);
    manual_seed(0);
    nn::Linear a(3, 2);
    manual_seed(0);
    nn::Linear b(3, 2);
    // Muon takes matrices only.
    auto params = [&](nn::Linear& m) { return name == "Muon" ? std::vector<Tensor>{m.weight} : m.parameters(); };
    auto opt_a = make_opt(params(a));
    auto opt_b = make_opt(params(b));
    step(*opt_a, a, kFloat32);
    step(*opt_b, b, kFloat32);
    // a converts and steps on; b's state goes through load_state_dict into a new optimizer, which
    // places it with the float64 parameters: the two must agree.
    a.to(kFloat64);
    b.to(kFloat64);
    NamedTensors saved = opt_b->state_dict();
    auto opt_b2 = make_opt(params(b));
    opt_b2->load_state_dict(saved);
    ASSERT_NO_THROW(step(*opt_a, a, kFloat64));
    step(*opt_b2, b, kFloat64);
    EXPECT_EQ(a.weight.dtype(), kFloat64);
    EXPECT_TRUE(raw::equal(a.weight, b.weight));
    EXPECT_TRUE(raw::equal(a.bias, b.bias));
    for (const auto& [key, t] : opt_a->state_dict()) {
      if (key.rfind("state.", 0) == 0 && t.dim() > 0 && is_floating(t.dtype())) {
        EXPECT_EQ(t.dtype(), kFloat64) << key;
      }
    }
    // And back to float32.
    a.to(kFloat32);
    ASSERT_NO_THROW(step(*opt_a, a, kFloat32));
  }
}

}  // namespace
}  // namespace colony::optim
