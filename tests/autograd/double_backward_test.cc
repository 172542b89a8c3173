// Backward with create_graph: gradients that are differentiable again (second derivatives,
// gradient penalties, Hessian-vector products), checked against central differences of the first
// gradients (gradgradcheck), plus the engine's side: .grad() with history, retain_graph's default,
// and the error where an op's backward cannot be differentiated.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/autocast.h"
#include "autograd/custom_function.h"
#include "autograd/nn_ops.h"
#include "tests/autograd/gradcheck.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::gradgradcheck;
using testing::input;
using testing::throws_with;

TEST(DoubleBackward, SecondDerivativeOfACubeByGradTwice) {
  Tensor x = raw::tensor({0.5, -1.5, 2.0}).to(kFloat64).requires_grad_(true);
  Tensor y = pow(x, 3.0).sum();
  Tensor dy = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_TRUE(dy.requires_grad());
  EXPECT_TRUE(testing::matches_values(dy, {0.75, 6.75, 12.0}));  // 3 x^2
  Tensor d2y = autograd::grad({dy.sum()}, {x})[0];
  EXPECT_TRUE(testing::matches_values(d2y, {3.0, -9.0, 12.0}));  // 6 x
  EXPECT_FALSE(d2y.requires_grad());
}

TEST(DoubleBackward, WithoutCreateGraphTheGradientHasNoHistory) {
  Tensor x = input({4});
  Tensor dy = autograd::grad({tanh(x).sum()}, {x})[0];
  EXPECT_FALSE(dy.requires_grad());
  EXPECT_TRUE(throws_with([&] { autograd::grad({dy.sum()}, {x}); }, "does not require grad"));
}

TEST(DoubleBackward, ElementwiseOps) {
  Tensor x = input({3, 4}, 0.2, 1.5);  // positive, for log, sqrt, rsqrt, reciprocal
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return log(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return sqrt(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return rsqrt(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return reciprocal(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return log1p(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return expm1(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return sin(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return cos(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return erf(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return neg(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return pow(in[0], 2.5); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return tan(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return atan(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return mul(sinh(in[0]), cosh(in[0])); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return asinh(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return acosh(add(in[0], 1.5)); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return add(log2(in[0]), log10(in[0])); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return add(exp2(in[0]), erfc(in[0])); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return lgamma(in[0]); }, {x}));
  Tensor unit = input({3, 4}, -0.8, 0.8, 12);  // inside (-1, 1), for asin, acos, atanh, erfinv
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return add(asin(in[0]), acos(in[0])); }, {unit}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return add(atanh(in[0]), erfinv(in[0])); }, {unit}));
  Tensor signed_x = input({3, 4}, -1.0, 1.0, 11);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return abs(in[0]); }, {signed_x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return clamp(in[0], -0.5, 0.5); }, {signed_x}));
}

TEST(DoubleBackward, Activations) {
  Tensor x = input({3, 5}, -2.0, 2.0, 3);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return tanh(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return sigmoid(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return gelu(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return silu(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return relu(in[0]); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return leaky_relu(in[0]); }, {x}));
  raw::UnaryAttrs softplus_attrs;
  softplus_attrs.beta = 2.0;
  softplus_attrs.threshold = 3.0;  // some elements above it (beta x up to 4): the linear branch
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return softplus(in[0], softplus_attrs); }, {x}));
}

TEST(DoubleBackward, ThirdDerivativeOfTanhThroughItsSavedOutput) {
  // tanh saves its output; under create_graph that output comes back with tanh's node as its
  // history, so the derivatives of every order go through it: tanh''' = -2 (1 - 3 t^2)(1 - t^2).
  Tensor x = raw::tensor({0.3, -0.7}).to(kFloat64).requires_grad_(true);
  Tensor d1 = autograd::grad({tanh(x).sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor d2 = autograd::grad({d1.sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor d3 = autograd::grad({d2.sum()}, {x})[0];
  std::vector<double> expected;
  for (double v : testing::values(x)) {
    const double t = std::tanh(v);
    expected.push_back(-2.0 * (1.0 - 3.0 * t * t) * (1.0 - t * t));
  }
  EXPECT_TRUE(testing::matches_values(d3, expected, 1e-12));
}

TEST(DoubleBackward, BinaryOpsWithBroadcasting) {
  Tensor a = input({3, 4}, 0.5, 1.5, 5), b = input({4}, 0.5, 1.5, 6);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return mul(in[0], in[1]); }, {a, b}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return div(in[0], in[1]); }, {a, b}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return mul(add(in[0], in[1], 2.0), sub(in[0], in[1])); },
                            {a, b}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return mul(rdiv(in[0], 3.0), in[1]); }, {a, b}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return where(gt(in[0], 1.0), mul(in[0], in[0]), in[1]); },
                            {a, b}));
}

TEST(DoubleBackward, ReductionsAndViews) {
  Tensor x = input({2, 3, 4}, -1.0, 1.0, 9);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return pow(sum(mul(in[0], in[0]), {1}), 2.0); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(mean(in[0], {0, 2}, true)); }, {x}));
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor v = permute(reshape(in[0], {6, 4}).transpose(0, 1), {1, 0});
        return mul(v, expand(unsqueeze(select(in[0], 1, 2).sum(), 0), {6, 4}));
      },
      {x}));
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) { return mul(narrow(in[0], 2, 1, 2), slice(in[0], 2, 0, 4, 2)); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return norm(in[0], 2.0, {2}); }, {x}));
}

TEST(DoubleBackward, MatrixProductsAndLinear) {
  Tensor a = input({3, 4}, -1.0, 1.0, 21), b = input({4, 2}, -1.0, 1.0, 22);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return tanh(mm(in[0], in[1])); }, {a, b}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return sigmoid(matmul(in[0], in[1])); }, {a, b}));
  Tensor x = input({2, 3, 4}, -1.0, 1.0, 23), w = input({5, 4}, -1.0, 1.0, 24), bias = input({5}, -1.0, 1.0, 25);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return tanh(linear(in[0], in[1], in[2])); },
                            {x, w, bias}));
  Tensor c = input({2, 3, 4}, -1.0, 1.0, 26), d = input({2, 4, 3}, -1.0, 1.0, 27);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(bmm(in[0], in[1])); }, {c, d}));
  Tensor m = input({3, 2}, -1.0, 1.0, 28);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return exp(addmm(in[2], in[0], in[1], 0.5, 2.0)); },
                            {a, b, m}));
}

TEST(DoubleBackward, SoftmaxAndLogSoftmax) {
  Tensor x = input({3, 5}, -2.0, 2.0, 31);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return softmax(in[0], 1); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return log_softmax(in[0], -1); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return softmax(in[0], 0); }, {x}));
}

// A physics-informed loss: the mean square of u''(x) for a tanh MLP u, differentiated with
// respect to the weights, which needs the third derivatives through every op of the network.
TEST(DoubleBackward, PinnLossOfASecondDerivativeHasCorrectWeightGradients) {
  Tensor x = input({5, 1}, -1.0, 1.0, 41);
  Tensor w1 = input({8, 1}, -1.0, 1.0, 42), b1 = input({8}, -1.0, 1.0, 43), w2 = input({1, 8}, -1.0, 1.0, 44);
  auto loss_of = [&x](const std::vector<Tensor>& in) {
    EnableGradGuard grad_mode;  // gradcheck evaluates perturbed weights under no-grad
    Tensor xs = x.detach().requires_grad_(true);
    Tensor u = linear(tanh(linear(xs, in[0], in[1])), in[2]);
    Tensor du = autograd::grad({u.sum()}, {xs}, {}, std::nullopt, true)[0];
    Tensor d2u = autograd::grad({du.sum()}, {xs}, {}, std::nullopt, true)[0];
    return mean(square(d2u));
  };
  EXPECT_TRUE(gradcheck(loss_of, {w1, b1, w2}));
}

// WGAN-GP's penalty: (|dD/dx| - 1)^2 for a critic of linear layers and leaky_relu.
TEST(DoubleBackward, GradientPenaltyHasCorrectWeightGradients) {
  Tensor x = input({4, 3}, -1.0, 1.0, 51);
  Tensor w1 = input({6, 3}, -1.0, 1.0, 52), w2 = input({1, 6}, -1.0, 1.0, 53);
  auto penalty = [&x](const std::vector<Tensor>& in) {
    EnableGradGuard grad_mode;
    Tensor xs = x.detach().requires_grad_(true);
    Tensor d = linear(leaky_relu(linear(xs, in[0]), {}), in[1]);
    Tensor g = autograd::grad({d.sum()}, {xs}, {}, std::nullopt, true)[0];
    return mean(square(sub(norm(g, 2.0, {1}), 1.0)));
  };
  EXPECT_TRUE(gradcheck(penalty, {w1, w2}));
}

TEST(DoubleBackward, BackwardWithCreateGraphGivesGradWithHistoryAndRetainsTheGraph) {
  Tensor x = raw::tensor({1.0, 2.0}).to(kFloat64).requires_grad_(true);
  Tensor y = mul(pow(x, 3.0), 2.0).sum();  // dy/dx = 6 x^2, d2y/dx2 = 12 x
  y.backward({}, std::nullopt, /*create_graph=*/true);
  Tensor g = x.grad();
  ASSERT_TRUE(g.defined());
  EXPECT_TRUE(g.requires_grad());
  EXPECT_TRUE(testing::matches_values(g, {6.0, 24.0}));
  // retain_graph defaulted to create_graph: a second backward through y still works.
  Tensor h = autograd::grad({y}, {x})[0];
  EXPECT_TRUE(testing::matches_values(h, {6.0, 24.0}));
  // A Hessian-vector product from the stored gradient: d/dx <grad, v>.
  Tensor v = raw::tensor({1.0, -1.0}).to(kFloat64);
  Tensor hv = autograd::grad({mul(g, v).sum()}, {x})[0];
  EXPECT_TRUE(testing::matches_values(hv, {12.0, -24.0}));
  // A second backward with create_graph adds to .grad() out of place, keeping the first's graph.
  Tensor first = x.grad();
  pow(x, 2.0).sum().backward({}, std::nullopt, true);
  EXPECT_TRUE(testing::matches_values(x.grad(), {8.0, 28.0}));
  EXPECT_TRUE(testing::matches_values(first, {6.0, 24.0}));
}

TEST(DoubleBackward, GradientsMeetingAtOneTensorAreSummedDifferentiably) {
  // x is used twice, so the engine sums two gradients at it; the sum must keep both histories.
  Tensor x = raw::tensor({0.5, 1.5}).to(kFloat64).requires_grad_(true);
  Tensor y = add(mul(exp(x), x), sin(x)).sum();
  Tensor d1 = autograd::grad({y}, {x}, {}, std::nullopt, true)[0];  // e^x (1 + x) + cos x
  Tensor d2 = autograd::grad({d1.sum()}, {x})[0];                  // e^x (2 + x) - sin x
  EXPECT_TRUE(testing::matches_values(d2, {std::exp(0.5) * 2.5 - std::sin(0.5), std::exp(1.5) * 3.5 - std::sin(1.5)},
                                      1e-12));
}

TEST(DoubleBackward, AGradientCastToItsInputsDtypeKeepsItsHistory) {
  // x is float32, used in a float64 product: its gradient arrives in float64 and the engine casts
  // it to float32; under create_graph that cast is recorded too.
  Tensor x = raw::tensor({0.5, 2.0}).requires_grad_(true);
  Tensor c = raw::tensor({3.0, 4.0}).to(kFloat64);
  Tensor y = mul(square(x), c).sum();
  Tensor d1 = autograd::grad({y}, {x}, {}, std::nullopt, true)[0];  // 2 x c
  EXPECT_EQ(d1.dtype(), kFloat32);
  EXPECT_TRUE(d1.requires_grad());
  Tensor d2 = autograd::grad({d1.sum()}, {x})[0];  // 2 c
  EXPECT_TRUE(testing::matches_values(d2, {6.0, 8.0}));
}

TEST(DoubleBackward, JoinsCopiesMasksAndScans) {
  Tensor a = input({2, 3}, -1.0, 1.0, 71), b = input({2, 2}, -1.0, 1.0, 72), c = input({2, 3}, -1.0, 1.0, 73);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(cat({in[0], in[1], in[0]}, 1)); },
                            {a, b}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return sin(stack({in[0], in[1]}, 1)); }, {a, c}));
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) { return mul(clone(in[0]), contiguous(in[0].transpose(0, 1)).transpose(0, 1)); },
      {a}));
  // A float32 detour: the casts' gradients are casts, recorded. d/dx x^2 = 2x, then 2.
  Tensor x = raw::tensor({0.5, -1.25}).to(kFloat64).requires_grad_(true);
  Tensor y = to(square(to(x, Device(), kFloat32)), Device(), kFloat64);
  Tensor d1 = autograd::grad({y.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_TRUE(testing::matches_values(d1, {1.0, -2.5}));
  EXPECT_TRUE(testing::matches_values(autograd::grad({d1.sum()}, {x})[0], {2.0, 2.0}));
  Tensor mask = raw::tensor({1, 0, 0, 1, 1, 0}).to(kBool).reshape({2, 3});
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return exp(masked_fill(in[0], mask, 2.0)); }, {a}));
  Tensor sq = input({3, 3}, -1.0, 1.0, 74);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(add(tril(in[0]), triu(in[0], 1))); }, {sq}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(cumsum(in[0], 1)); }, {sq}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return var(in[0], {1}); }, {sq}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(nansum(in[0], {0})); }, {sq}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(std::get<0>(max(in[0], 1))); }, {sq}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(maximum(in[0], in[1])); }, {a, c}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(amax(in[0], {1})); }, {sq}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return exp(sort(in[0], 1).first); }, {sq}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return exp(topk(in[0], 2, 0).first); }, {sq}));
}

TEST(DoubleBackward, PowWithTensorExponentsAndBatchedProducts) {
  Tensor x = input({2, 3}, 0.5, 1.5, 81), e = input({3}, -1.0, 2.0, 82);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return pow(in[0], in[1]); }, {x, e}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return pow(2.5, in[0]); }, {e}));
  Tensor input_ = input({1, 2, 2}, -1.0, 1.0, 83), p = input({2, 2, 3}, -1.0, 1.0, 84), q = input({2, 3, 2}, -1.0, 1.0, 85);
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) { return tanh(baddbmm(in[0], in[1], in[2], 0.5, 2.0)); }, {input_, p, q}));
}

TEST(DoubleBackward, PaddingAndFolding) {
  Tensor img = input({1, 2, 3, 4}, -1.0, 1.0, 91);
  for (kernels::PadMode mode : {kernels::PadMode::Reflect, kernels::PadMode::Replicate, kernels::PadMode::Circular}) {
    EXPECT_TRUE(gradgradcheck(
        [mode](const std::vector<Tensor>& in) { return square(pad_by_mode(in[0], mode, {1, 2, 1, 1})); }, {img}));
  }
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(im2col(in[0], {2, 2}, 1, 1, 1)); }, {img}));
  Tensor cols = input({1, 8, 6}, -1.0, 1.0, 92);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return square(col2im(in[0], {3, 4}, {2, 2})); }, {cols}));
}

TEST(DoubleBackward, AnOpWhoseBackwardIsNotDifferentiableThrowsOnTheSecondBackward) {
  Tensor x = input({4, 3}, -1.0, 1.0, 61);
  Tensor y = cumprod(mul(x, x), 1).sum();
  // The first gradients are right under create_graph too.
  Tensor plain = autograd::grad({y}, {x}, {}, /*retain_graph=*/true)[0];
  Tensor d1 = autograd::grad({y}, {x}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(testing::all_close(d1, plain, 0.0, 0.0));
  EXPECT_TRUE(d1.requires_grad());
  EXPECT_TRUE(throws_with([&] { autograd::grad({d1.sum()}, {x}); },
                          "the derivative of CumprodBackward is not implemented"));
}

// A custom Function whose backward is written with differentiable ops is differentiable twice,
// as in PyTorch.
struct Cube : autograd::Function<Cube> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return mul(mul(x, x), x);
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    Tensor x = ctx->get_saved_variables()[0];
    return {mul(g[0], mul(square(x), 3.0))};
  }
};

TEST(DoubleBackward, CustomFunctionWrittenWithDifferentiableOps) {
  Tensor x = raw::tensor({1.0, -2.0}).to(kFloat64).requires_grad_(true);
  Tensor d1 = autograd::grad({Cube::apply(x).sum()}, {x}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(testing::matches_values(d1, {3.0, 12.0}));
  Tensor d2 = autograd::grad({d1.sum()}, {x})[0];
  EXPECT_TRUE(testing::matches_values(d2, {6.0, -12.0}));
}

TEST(DoubleBackward, AnOrdinaryBackwardInsideAnAutocastRegionComputesInTheForwardsDtypes) {
  // The differentiable closures run with autocast off: a float32 product's gradient is computed in
  // float32 even when backward is called inside the region, as it was with raw ops.
  Tensor a = testing::input({8, 8}, -1.0, 1.0, 71).detach().to(kFloat32).requires_grad_(true);
  Tensor b = testing::input({8, 8}, -1.0, 1.0, 72).detach().to(kFloat32);
  Tensor loss = mm(a, b).sum();
  Tensor outside = autograd::grad({loss}, {a}, {}, /*retain_graph=*/true)[0];
  Tensor inside;
  {
    AutocastGuard region(DeviceType::CPU, kBFloat16);
    inside = autograd::grad({loss}, {a})[0];
  }
  EXPECT_EQ(inside.dtype(), kFloat32);
  EXPECT_TRUE(testing::all_close(inside, outside, 0.0, 0.0));
}

}  // namespace
}  // namespace colony
