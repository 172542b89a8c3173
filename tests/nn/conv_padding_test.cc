// Convolution padding "same" / "valid" (F::conv1d / F::conv2d and the modules) and the modules'
// padding_mode "reflect" / "replicate" / "circular" (nn/conv_padding.h, nn/conv.cc): outputs and
// the gradients of input, weight and bias against torch in float64 (tests/nn/conv_padding_golden.py
// writes conv_padding_golden.h from the same closed-form tensors), gradchecks, options, printing,
// state dict keys and torch's refusals, ConvTranspose's included.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/conv_padding_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;

Tensor wave(const Shape& shape, double a, double b) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = 2.0 * std::sin(a * static_cast<double>(i) + b);
  return raw::from_vector(v, shape, TensorOptions(kFloat64));
}

// A conv as the golden script runs it: (input) -> output, with the weight and bias it used.
struct Conv {
  std::function<Tensor(const Tensor&)> run;
  Tensor weight, bias;
};

Conv functional2(Shape w_shape, F::Conv2dFuncOptions o) {
  Conv c;
  c.weight = wave(w_shape, 0.23, 0.4).requires_grad_(true);
  c.bias = wave({w_shape[0]}, 0.5, 0.3).requires_grad_(true);
  c.run = [w = c.weight, b = c.bias, o](const Tensor& x) { return F::conv2d(x, w, b, o); };
  return c;
}
Conv functional1(Shape w_shape, F::Conv1dFuncOptions o) {
  Conv c;
  c.weight = wave(w_shape, 0.23, 0.4).requires_grad_(true);
  c.bias = wave({w_shape[0]}, 0.5, 0.3).requires_grad_(true);
  c.run = [w = c.weight, b = c.bias, o](const Tensor& x) { return F::conv1d(x, w, b, o); };
  return c;
}
template <typename M, typename O>
Conv module(const O& o) {
  auto m = std::make_shared<M>(o);
  m->to(kFloat64);
  {
    NoGradGuard no_grad;
    m->weight.copy_(wave(m->weight.sizes(), 0.23, 0.4));
    m->bias.copy_(wave(m->bias.sizes(), 0.5, 0.3));
  }
  return {[m](const Tensor& x) { return m->forward(x); }, m->weight, m->bias};
}

// conv_padding_golden.py's CASES, in its order.
std::vector<std::pair<std::string, std::pair<Shape, Conv>>> cases() {
  using O2 = F::Conv2dFuncOptions;
  using O1 = F::Conv1dFuncOptions;
  return {
      {"f2_same_k34", {{2, 2, 5, 6}, functional2({3, 2, 3, 4}, O2().padding("same"))}},
      {"f2_same_dil", {{1, 2, 5, 6}, functional2({2, 2, 2, 3}, O2().padding("same").dilation({3, 2}))}},
      {"f2_same_groups", {{1, 4, 4, 5}, functional2({4, 2, 3, 2}, O2().padding("same").groups(2))}},
      {"f2_valid", {{1, 2, 5, 6}, functional2({3, 2, 3, 4}, O2().padding("valid").stride(2))}},
      {"f1_same_k4", {{2, 2, 7}, functional1({3, 2, 4}, O1().padding("same"))}},
      {"f1_same_dil", {{1, 2, 7}, functional1({2, 2, 3}, O1().padding("same").dilation(3))}},
      {"f1_valid_unbatched", {{2, 7}, functional1({3, 2, 3}, O1().padding("valid"))}},
      {"c2_reflect", {{2, 2, 5, 6}, module<Conv2d>(Conv2dOptions(2, 3, 3).padding({1, 2}).padding_mode("reflect"))}},
      {"c2_replicate_s2",
       {{1, 2, 5, 6}, module<Conv2d>(Conv2dOptions(2, 3, {2, 3}).padding(2).stride(2).padding_mode("replicate"))}},
      {"c2_circular",
       {{1, 2, 5, 6},
        module<Conv2d>(Conv2dOptions(2, 4, 3).padding({2, 1}).dilation({1, 2}).padding_mode("circular"))}},
      {"c2_same_reflect", {{1, 2, 5, 6}, module<Conv2d>(Conv2dOptions(2, 3, {3, 4}).padding("same").padding_mode("reflect"))}},
      {"c2_valid_circular", {{1, 2, 5, 6}, module<Conv2d>(Conv2dOptions(2, 3, 3).padding("valid").padding_mode("circular"))}},
      {"c2_zeros_same_unbatched", {{2, 5, 6}, module<Conv2d>(Conv2dOptions(2, 3, 4).padding("same"))}},
      {"c1_reflect", {{2, 2, 7}, module<Conv1d>(Conv1dOptions(2, 3, 3).padding(2).stride(2).padding_mode("reflect"))}},
      {"c1_circular_same", {{1, 2, 7}, module<Conv1d>(Conv1dOptions(2, 3, 4).padding("same").padding_mode("circular"))}},
      {"c1_replicate_unbatched",
       {{2, 7}, module<Conv1d>(Conv1dOptions(2, 4, 3).padding(1).groups(2).padding_mode("replicate"))}},
  };
}

const std::vector<double>& golden(const std::string& key) {
  const auto& g = colony::testing::conv_padding_golden();
  auto it = g.find(key);
  if (it == g.end()) throw std::runtime_error("no golden values for " + key);
  return it->second;
}

TEST(ConvPadding, MatchesTorchInFloat64) {
  for (auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    Tensor x = wave(c.first, 0.37, 0.1).requires_grad_(true);
    Tensor y = c.second.run(x);
    Shape shape;
    for (double v : golden(name + ".shape")) shape.push_back(static_cast<int64_t>(v));
    EXPECT_EQ(y.sizes(), shape);
    EXPECT_TRUE(colony::testing::matches_values(y, golden(name + ".out"), 1e-12)) << "output";
    colony::sum(colony::mul(y, wave(y.sizes(), 0.31, 0.2))).backward();
    EXPECT_TRUE(colony::testing::matches_values(x.grad(), golden(name + ".grad_input"), 1e-12)) << "input gradient";
    EXPECT_TRUE(colony::testing::matches_values(c.second.weight.grad(), golden(name + ".grad_weight"), 1e-12))
        << "weight gradient";
    EXPECT_TRUE(colony::testing::matches_values(c.second.bias.grad(), golden(name + ".grad_bias"), 1e-12))
        << "bias gradient";
  }
}

TEST(ConvPadding, Gradchecks) {
  using colony::testing::gradcheck;
  using colony::testing::input;
  using V = std::vector<Tensor>;
  EXPECT_TRUE(gradcheck([](const V& t) { return F::conv2d(t[0], t[1], t[2], F::Conv2dFuncOptions().padding("same")); },
                        {input({1, 2, 4, 5}), input({2, 2, 2, 3}, -1, 1, 9), input({2}, -1, 1, 11)}));
  EXPECT_TRUE(gradcheck([](const V& t) { return F::conv1d(t[0], t[1], Tensor(), F::Conv1dFuncOptions().padding("same")); },
                        {input({1, 2, 6}), input({3, 2, 4}, -1, 1, 9)}));
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    SCOPED_TRACE(mode);
    auto m = std::make_shared<Conv2d>(Conv2dOptions(2, 2, 3).padding({1, 2}).padding_mode(mode));
    m->to(kFloat64);
    EXPECT_TRUE(gradcheck([m](const V& t) { return m->forward(t[0]); }, {input({1, 2, 4, 5})}));
  }
}

TEST(ConvPadding, OptionsPrintingAndState) {
  EXPECT_EQ(Conv2d(Conv2dOptions(2, 3, 3).padding("same").padding_mode("reflect")).repr(),
            "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1), padding=same, padding_mode=reflect)");
  EXPECT_EQ(Conv1d(Conv1dOptions(2, 3, 3).padding("valid")).repr(), "Conv1d(2, 3, kernel_size=(3,), stride=(1,), padding=valid)");
  EXPECT_EQ(Conv2d(Conv2dOptions(2, 3, {3, 4}).padding({1, 2}).padding_mode("circular").bias(false)).repr(),
            "Conv2d(2, 3, kernel_size=(3, 4), stride=(1, 1), padding=(1, 2), bias=False, padding_mode=circular)");
  EXPECT_EQ(Conv1d(Conv1dOptions(2, 3, 3).padding(1).padding_mode("replicate")).repr(),
            "Conv1d(2, 3, kernel_size=(3,), stride=(1,), padding=(1,), padding_mode=replicate)");
  EXPECT_EQ(Conv2d(Conv2dOptions(2, 3, 3)).repr(), "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(Conv2dOptions(1, 1, 3).padding_mode(), "zeros");
  EXPECT_EQ(Conv1dOptions(1, 1, 3).padding().size, 0);
  EXPECT_FALSE(Conv2dOptions(1, 1, 3).padding().is_string());
  // A padding mode changes no parameter: the keys are torch's.
  auto keys = [](const Module& m) {
    std::vector<std::string> k;
    for (const auto& [name, t] : m.state_dict()) k.push_back(name);
    return k;
  };
  EXPECT_EQ(keys(Conv2d(Conv2dOptions(2, 3, 3).padding_mode("reflect"))), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(keys(Conv1d(Conv1dOptions(2, 3, 3).padding("same").bias(false))), (std::vector<std::string>{"weight"}));
  // "same" keeps the spatial size, even kernels included.
  Tensor x = wave({2, 2, 5, 6}, 0.37, 0.1);
  Conv2d same(Conv2dOptions(2, 4, {2, 4}).padding("same").dilation({1, 3}));
  same.to(kFloat64);
  EXPECT_EQ(same.forward(x).sizes(), (Shape{2, 4, 5, 6}));
}

TEST(ConvPadding, TorchsRefusals) {
  EXPECT_TRUE(throws_with([] { Conv2d(Conv2dOptions(1, 1, 3).padding("full")); },
                          "Invalid padding string 'full', should be one of {'same', 'valid'}"));
  EXPECT_TRUE(throws_with([] { Conv2d(Conv2dOptions(1, 1, 3).padding("same").stride({1, 2})); },
                          "padding='same' is not supported for strided convolutions"));
  EXPECT_TRUE(throws_with([] { Conv1d(Conv1dOptions(1, 1, 3).padding("same").stride(2)); },
                          "padding='same' is not supported for strided convolutions"));
  EXPECT_TRUE(throws_with([] { Conv2d(Conv2dOptions(1, 1, 3).padding_mode("mirror")); },
                          "padding_mode must be one of {'zeros', 'reflect', 'replicate', 'circular'}, but got "
                          "padding_mode='mirror'"));
  EXPECT_TRUE(throws_with([] { Conv1d(Conv1dOptions(1, 1, 3).padding_mode("zero")); }, "padding_mode='zero'"));
  EXPECT_TRUE(throws_with([] { ConvTranspose2d(ConvTranspose2dOptions(1, 1, 3).padding_mode("reflect")); },
                          "Only \"zeros\" padding mode is supported for ConvTranspose2d"));
  EXPECT_TRUE(throws_with([] { ConvTranspose1d(ConvTranspose1dOptions(1, 1, 3).padding_mode("circular")); },
                          "Only \"zeros\" padding mode is supported for ConvTranspose1d"));
  EXPECT_NO_THROW(ConvTranspose2d(ConvTranspose2dOptions(1, 1, 3).padding_mode("zeros")));
  Tensor x = wave({1, 1, 4, 4}, 0.37, 0.1), w = wave({1, 1, 3, 3}, 0.2, 0.1);
  EXPECT_TRUE(throws_with([&] { F::conv2d(x, w, Tensor(), F::Conv2dFuncOptions().padding("foo")); },
                          "Invalid padding string: 'foo'"));
  EXPECT_TRUE(throws_with([&] { F::conv2d(x, w, Tensor(), F::Conv2dFuncOptions().padding("same").stride(2)); },
                          "padding='same' is not supported for strided convolutions"));
  EXPECT_TRUE(throws_with(
      [&] { F::conv1d(wave({1, 1, 4}, 0.3, 0.1), wave({1, 1, 3}, 0.2, 0.1), Tensor(), F::Conv1dFuncOptions().padding("x")); },
      "Invalid padding string: 'x'"));
  // reflect pads must be smaller than the dim, as F::pad's (torch's message).
  Conv2d big(Conv2dOptions(1, 1, 3).padding(4).padding_mode("reflect"));
  big.to(kFloat64);
  EXPECT_TRUE(throws_with([&] { big.forward(x); }, "Padding size should be less than the corresponding input dimension"));
}

}  // namespace
}  // namespace colony::nn
