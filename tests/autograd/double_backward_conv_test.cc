// Convolutions, poolings and batch norm differentiated twice (backward with create_graph): a
// gradgradcheck of each against central differences of its first gradients, with stride, padding,
// dilation and groups; a WGAN-GP penalty of small CNN critics against finite differences and
// torch's values (double_backward_conv_golden.py); the first gradients under create_graph equal
// to an ordinary backward's; the same second derivatives on CUDA against the CPU.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nn/functional.h"
#include "tests/autograd/double_backward_conv_golden.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::gradgradcheck;
using testing::input;
using In = const std::vector<Tensor>&;

struct Conv2dCase {
  const char* name;
  Shape x, w;
  Int2 stride, padding, dilation;
  int64_t groups;
  bool bias;
};

// Small enough for central differences of every first gradient; each variant on its own.
std::vector<Conv2dCase> conv2d_cases() {
  return {{"plain", {2, 2, 5, 5}, {3, 2, 3, 3}, 1, 0, 1, 1, true},
          {"stride 2, padding 1", {2, 2, 6, 5}, {3, 2, 3, 3}, 2, 1, 1, 1, true},
          {"stride (2, 3), padding (1, 2), uneven input", {1, 2, 7, 8}, {2, 2, 3, 2}, {2, 3}, {1, 2}, 1, 1, false},
          {"dilation 2", {1, 2, 7, 6}, {2, 2, 2, 3}, 1, 1, 2, 1, true},
          {"groups 2", {2, 4, 5, 4}, {4, 2, 3, 3}, 1, 1, 1, 2, true},
          {"depthwise, stride 2", {1, 3, 6, 6}, {6, 1, 3, 3}, 2, 1, 1, 3, true}};
}

// square() after the op, so the incoming gradient depends on the inputs: the second derivative
// then goes through every gradient formula, the one toward grad_output included.
TEST(DoubleBackwardConv, Conv2dGradGrad) {
  uint64_t seed = 100;
  for (const Conv2dCase& k : conv2d_cases()) {
    SCOPED_TRACE(k.name);
    Tensor x = input(k.x, -1.0, 1.0, seed++), w = input(k.w, -1.0, 1.0, seed++);
    std::vector<Tensor> in = {x, w};
    if (k.bias) in.push_back(input({k.w[0]}, -1.0, 1.0, seed++));
    auto f = [&k](In t) {
      return square(conv2d(t[0], t[1], k.bias ? t[2] : Tensor(), k.stride, k.padding, k.dilation, k.groups));
    };
    EXPECT_TRUE(gradgradcheck(f, in));
  }
}

TEST(DoubleBackwardConv, Conv1dThroughConv2dGradGrad) {
  Tensor x = input({2, 2, 9}, -1.0, 1.0, 120), w = input({4, 1, 3}, -1.0, 1.0, 121), b = input({4}, -1.0, 1.0, 122);
  auto f = [](In t) {
    return square(nn::functional::conv1d(t[0], t[1], t[2], nn::functional::Conv1dFuncOptions().stride(2).padding(1).groups(2)));
  };
  EXPECT_TRUE(gradgradcheck(f, {x, w, b}));
}

TEST(DoubleBackwardConv, ConvTranspose2dGradGrad) {
  struct Case {
    const char* name;
    Shape x, w;
    Int2 stride, padding, output_padding, dilation;
    int64_t groups;
  };
  uint64_t seed = 130;
  for (const Case& k : {Case{"plain", {2, 2, 4, 4}, {2, 3, 3, 3}, 1, 0, 0, 1, 1},
                        Case{"stride 2, padding 1, output_padding 1", {1, 2, 3, 4}, {2, 2, 3, 3}, 2, 1, 1, 1, 1},
                        Case{"dilation 2, groups 2", {1, 4, 3, 3}, {4, 1, 2, 2}, 1, 1, 0, 2, 2}}) {
    SCOPED_TRACE(k.name);
    Tensor x = input(k.x, -1.0, 1.0, seed++), w = input(k.w, -1.0, 1.0, seed++);
    Tensor b = input({k.w[1] * k.groups}, -1.0, 1.0, seed++);
    auto f = [&k](In t) {
      return square(conv_transpose2d(t[0], t[1], t[2], k.stride, k.padding, k.output_padding, k.dilation, k.groups));
    };
    EXPECT_TRUE(gradgradcheck(f, {x, w, b}));
  }
}

TEST(DoubleBackwardConv, Conv3dAndConvTranspose3dGradGrad) {
  Tensor x = input({1, 2, 4, 3, 4}, -1.0, 1.0, 140), w = input({2, 1, 2, 2, 2}, -1.0, 1.0, 141);
  Tensor b = input({2}, -1.0, 1.0, 142);
  EXPECT_TRUE(gradgradcheck([](In t) { return square(conv3d(t[0], t[1], t[2], {1, 2, 1}, 1, 1, 2)); }, {x, w, b}));
  Tensor xt = input({1, 2, 2, 3, 2}, -1.0, 1.0, 143), wt = input({2, 2, 2, 2, 2}, -1.0, 1.0, 144);
  EXPECT_TRUE(gradgradcheck([](In t) { return square(conv_transpose3d(t[0], t[1], Tensor(), 2, 1, 1)); }, {xt, wt}));
}

// A third derivative: conv2d's weight gradient is itself differentiable twice.
TEST(DoubleBackwardConv, Conv2dThirdDerivative) {
  Tensor x = input({1, 2, 5, 5}, -1.0, 1.0, 150), w = input({2, 2, 3, 3}, -1.0, 1.0, 151);
  auto first = [](In t) {
    EnableGradGuard grad_mode;
    Tensor xs = t[0], ws = t[1];
    Tensor y = square(conv2d(xs, ws, Tensor(), 2, 1)).sum();
    std::vector<Tensor> g = autograd::grad({y}, {xs, ws}, {}, std::nullopt, /*create_graph=*/true);
    return add(square(g[0]).sum(), square(g[1]).sum());
  };
  EXPECT_TRUE(gradgradcheck(first, {x, w}));
}

TEST(DoubleBackwardConv, AvgPoolsGradGrad) {
  Tensor x = input({2, 2, 7, 6}, -1.0, 1.0, 160);
  EXPECT_TRUE(gradgradcheck([](In t) { return square(avg_pool2d(t[0], 3, 2, 1, false, true)); }, {x}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(avg_pool2d(t[0], {2, 3}, Int2{2, 1}, 1, true, false)); }, {x}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(adaptive_avg_pool2d(t[0], {3, 4})); }, {x}));
  Tensor unbatched = input({2, 5, 5}, -1.0, 1.0, 161);
  EXPECT_TRUE(gradgradcheck([](In t) { return square(avg_pool2d(t[0], 2)); }, {unbatched}));
  Tensor v = input({1, 2, 5, 4, 5}, -1.0, 1.0, 162);
  EXPECT_TRUE(gradgradcheck([](In t) { return square(avg_pool3d(t[0], 2, Int3{2, 1, 2}, 1, true, false)); }, {v}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(avg_pool3d(t[0], 3, 2, 0, false, true, 5)); }, {v}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(adaptive_avg_pool3d(t[0], {2, 3, 3})); }, {v}));
}

TEST(DoubleBackwardConv, MaxPoolsGradGrad) {
  // Distinct values (+-k / 84), so no central difference crosses a tie.
  Generator gen(165);
  Tensor x = raw::reshape(raw::mul(raw::add(raw::randperm(84, TensorOptions(kFloat64), &gen), 1.0), 1.0 / 84), {2, 2, 7, 3});
  x = raw::reshape(raw::cat({x, raw::neg(x)}, 3), {2, 2, 7, 6});
  x.requires_grad_(true);
  EXPECT_TRUE(gradgradcheck([](In t) { return square(max_pool2d(t[0], 2)); }, {x}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(max_pool2d(t[0], 3, 2, 1, 1, true)); }, {x}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(max_pool2d(t[0], 2, 1, 0, 2)); }, {x}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(std::get<0>(adaptive_max_pool2d(t[0], {3, 4}))); }, {x}));
  Tensor v = raw::reshape(raw::mul(raw::randperm(96, TensorOptions(kFloat64), &gen), 1.0 / 96), {1, 2, 4, 3, 4}).requires_grad_(true);
  EXPECT_TRUE(gradgradcheck([](In t) { return square(std::get<0>(max_pool3d_with_indices(t[0], 2))); }, {v}));
}

TEST(DoubleBackwardConv, BatchNormGradGrad) {
  Tensor x = input({3, 2, 3, 2}, -1.0, 1.0, 170), w = input({2}, 0.5, 1.5, 171), b = input({2}, -1.0, 1.0, 172);
  Tensor mean = raw::tensor({0.25, -0.5}).to(kFloat64), var = raw::tensor({0.5, 2.0}).to(kFloat64);
  // Evaluation: an affine map of each channel.
  EXPECT_TRUE(gradgradcheck([&](In t) { return square(batch_norm(t[0], t[1], t[2], mean, var, false)); }, {x, w, b}));
  // Training: the batch statistics are functions of x (no running buffers, so nothing updates).
  EXPECT_TRUE(gradgradcheck([](In t) { return square(batch_norm(t[0], t[1], t[2], Tensor(), Tensor(), true)); },
                            {x, w, b}));
  EXPECT_TRUE(gradgradcheck([](In t) { return square(batch_norm(t[0], Tensor(), Tensor(), Tensor(), Tensor(), true)); },
                            {x}));
}

// The gradients a backward with create_graph composes equal the fused kernels' of an ordinary one
// (gradgradcheck differentiates the composed ones, so it checks them only against themselves).
::testing::AssertionResult same_first_gradients(const std::function<Tensor()>& loss, const std::vector<Tensor>& wrt) {
  std::vector<Tensor> plain = autograd::grad({loss()}, wrt);
  std::vector<Tensor> recorded = autograd::grad({loss()}, wrt, {}, std::nullopt, /*create_graph=*/true);
  for (size_t i = 0; i < plain.size(); ++i) {
    if (!recorded[i].requires_grad()) return ::testing::AssertionFailure() << "input " << i << ": no history";
    auto r = testing::all_close(recorded[i], plain[i], 1e-12, 1e-12);
    if (!r) return r << " (input " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(DoubleBackwardConv, FirstGradientsUnderCreateGraphMatchAnOrdinaryBackward) {
  for (const Conv2dCase& k : conv2d_cases()) {
    SCOPED_TRACE(k.name);
    Tensor x = input(k.x, -1.0, 1.0, 180), w = input(k.w, -1.0, 1.0, 181), b = input({k.w[0]}, -1.0, 1.0, 182);
    EXPECT_TRUE(same_first_gradients(
        [&] { return tanh(conv2d(x, w, b, k.stride, k.padding, k.dilation, k.groups)).sum(); }, {x, w, b}));
  }
  Tensor x = input({3, 2, 5, 4}, -1.0, 1.0, 183), w = input({2}, 0.5, 1.5, 184), b = input({2}, -1.0, 1.0, 185);
  Tensor mean = raw::tensor({0.25, -0.5}).to(kFloat64), var = raw::tensor({0.5, 2.0}).to(kFloat64);
  EXPECT_TRUE(same_first_gradients([&] { return tanh(batch_norm(x, w, b, mean, var, false)).sum(); }, {x, w, b}));
  EXPECT_TRUE(same_first_gradients([&] { return tanh(batch_norm(x, w, b, Tensor(), Tensor(), true)).sum(); }, {x, w, b}));
  EXPECT_TRUE(same_first_gradients([&] { return tanh(avg_pool2d(x, 2, 1, 1)).sum(); }, {x}));
  EXPECT_TRUE(same_first_gradients([&] { return tanh(max_pool2d(x, 2)).sum(); }, {x}));
  Tensor v = input({1, 2, 4, 3, 4}, -1.0, 1.0, 186), wv = input({2, 2, 2, 2, 2}, -1.0, 1.0, 187);
  EXPECT_TRUE(same_first_gradients([&] { return tanh(conv3d(v, wv, Tensor(), 1, 1)).sum(); }, {v, wv}));
}

// WGAN-GP: mean((|dD/dx|_2 - 1)^2) with D(x) = linear(avg_pool(conv(leaky_relu(conv(x))))), as
// double_backward_conv_golden.py writes it.
Tensor gradient_penalty(const Tensor& x, const std::function<Tensor(const Tensor&)>& critic) {
  EnableGradGuard grad_mode;  // gradcheck evaluates perturbed weights under no-grad
  Tensor xs = x.detach().requires_grad_(true);
  Tensor g = autograd::grad({critic(xs).sum()}, {xs}, {}, std::nullopt, /*create_graph=*/true)[0];
  return mean(square(sub(norm(flatten(g, 1), 2.0, {1}), 1.0)));
}

Tensor conv_avgpool_gp(In p) {
  return gradient_penalty(p[0], [&p](const Tensor& x) {
    Tensor h = leaky_relu(conv2d(x, p[1], p[2], 1, 1));
    h = avg_pool2d(conv2d(h, p[3], p[4], 2, 1), 3);
    return linear(flatten(h, 1), p[5], p[6]);
  });
}

Tensor conv_maxpool_gp(In p) {
  return gradient_penalty(p[0], [&p](const Tensor& x) {
    Tensor h = max_pool2d(leaky_relu(conv2d(x, p[1], p[2], 1, 2, 2)), 2);
    h = adaptive_avg_pool2d(leaky_relu(conv2d(h, p[3], Tensor(), 1, 0, 1, 3)), {1, 1});
    return linear(flatten(h, 1), p[4], p[5]);
  });
}

const std::map<std::string, testing::golden::Op>& critics() {
  static const std::map<std::string, testing::golden::Op> calls = {
      {"conv_avgpool_gp", [](In p, Device) { return conv_avgpool_gp(p); }},
      {"conv_maxpool_gp", [](In p, Device) { return conv_maxpool_gp(p); }}};
  return calls;
}

TEST(DoubleBackwardConv, GradientPenaltyOfACnnCriticHasCorrectWeightGradients) {
  Tensor x = input({2, 2, 6, 6}, -1.0, 1.0, 190).detach();
  std::vector<Tensor> p = {x,
                           input({3, 2, 3, 3}, -0.5, 0.5, 191),
                           input({3}, -0.5, 0.5, 192),
                           input({4, 3, 3, 3}, -0.5, 0.5, 193),
                           input({4}, -0.5, 0.5, 194),
                           input({1, 4}, -1.0, 1.0, 195),
                           input({1}, -1.0, 1.0, 196)};
  EXPECT_TRUE(gradcheck(conv_avgpool_gp, p));
}

TEST(DoubleBackwardConv, GradientPenaltyOfCnnCriticsAsTorch) {
  for (const testing::golden::Case& c : testing::double_backward_conv_golden::kCases) {
    EXPECT_TRUE(testing::golden::matches(c, critics(), kCPU, /*f32_tol=*/1e-4));
  }
}

// The same second derivatives on CUDA (float64) against the CPU's.
TEST(DoubleBackwardConv, SecondDerivativesMatchCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const testing::golden::Case& c : testing::double_backward_conv_golden::kCases) {
    EXPECT_TRUE(testing::golden::matches(c, critics(), Device::cuda(0), /*f32_tol=*/1e-3));
  }
  // Each op's gradient of a penalty-like sum of squared first gradients, on both devices.
  auto second = [](const Tensor& x, const Tensor& w) {
    Tensor xs = x.detach().requires_grad_(true), ws = w.detach().requires_grad_(true);
    Tensor y = conv2d(xs, ws, Tensor(), 2, 1, 1, 2);
    y = max_pool2d(leaky_relu(y), 2, 1);
    y = add(square(avg_pool2d(y, 2)).sum(), square(adaptive_avg_pool2d(y, {2, 2})).sum());
    std::vector<Tensor> g = autograd::grad({y}, {xs, ws}, {}, std::nullopt, /*create_graph=*/true);
    return autograd::grad({add(square(g[0]).sum(), square(g[1]).sum())}, {xs, ws});
  };
  Tensor x = input({2, 4, 9, 9}, -1.0, 1.0, 200).detach(), w = input({6, 2, 3, 3}, -1.0, 1.0, 201).detach();
  std::vector<Tensor> cpu = second(x, w);
  std::vector<Tensor> cuda = second(x.to(Device::cuda(0)), w.to(Device::cuda(0)));
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_TRUE(testing::all_close(cuda[i].to(kCPU), cpu[i], 1e-9, 1e-9)) << "input " << i;
  }
}

}  // namespace
}  // namespace colony
