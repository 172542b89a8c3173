// Finite-difference gradient checks of the activations of COLONY_FOR_EACH_ACTIVATION added after
// relu/sigmoid/tanh/gelu/silu (whose checks are in unary_test.cc), each with non-default attributes
// too, on dense, strided and 0-d float64 inputs over ranges that hold their kinks (the random points
// miss the kinks themselves; tests/nn/activation_golden_test.cc checks the gradients there against
// PyTorch). Also: the integral inputs PyTorch refuses, and hardtanh's integers.
#include <functional>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

::testing::AssertionResult check_unary(const std::function<Tensor(const Tensor&)>& f, double lo, double hi) {
  for (Tensor x : {input({3, 5}, lo, hi), strided_input({3, 5}, lo, hi), input({}, lo, hi)}) {
    ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0]); }, {x});
    if (!r) return r << " (input " << shape_str(x.sizes()) << (x.is_contiguous() ? "" : ", strided") << ")";
  }
  return ::testing::AssertionSuccess();
}

raw::UnaryAttrs with(void (*set)(raw::UnaryAttrs&)) {
  raw::UnaryAttrs a;
  set(a);
  return a;
}

TEST(ActivationGradcheck, LeakyRelu) {
  EXPECT_TRUE(check_unary([](const Tensor& x) { return leaky_relu(x); }, -2, 2));
  raw::UnaryAttrs a = with([](raw::UnaryAttrs& a) { a.negative_slope = -0.7; });
  EXPECT_TRUE(check_unary([a](const Tensor& x) { return leaky_relu(x, a); }, -2, 2));
}

TEST(ActivationGradcheck, EluSeluCelu) {
  EXPECT_TRUE(check_unary([](const Tensor& x) { return elu(x); }, -3, 3));
  raw::UnaryAttrs selu = with([](raw::UnaryAttrs& a) {
    a.alpha = kernels::kSeluAlpha;
    a.scale = kernels::kSeluScale;
  });
  EXPECT_TRUE(check_unary([selu](const Tensor& x) { return elu(x, selu); }, -3, 3));
  raw::UnaryAttrs celu = with([](raw::UnaryAttrs& a) {
    a.alpha = 0.5;
    a.input_scale = 2.0;
  });
  EXPECT_TRUE(check_unary([celu](const Tensor& x) { return elu(x, celu); }, -3, 3));
}

TEST(ActivationGradcheck, Softplus) {
  EXPECT_TRUE(check_unary([](const Tensor& x) { return softplus(x); }, -5, 5));
  // beta 2, threshold 5: the linear side from x = 2.5 on is inside the range.
  raw::UnaryAttrs a = with([](raw::UnaryAttrs& a) {
    a.beta = 2;
    a.threshold = 5;
  });
  EXPECT_TRUE(check_unary([a](const Tensor& x) { return softplus(x, a); }, -5, 5));
}

TEST(ActivationGradcheck, Mish) { EXPECT_TRUE(check_unary([](const Tensor& x) { return mish(x); }, -5, 5)); }
TEST(ActivationGradcheck, Hardswish) { EXPECT_TRUE(check_unary([](const Tensor& x) { return hardswish(x); }, -5, 5)); }
TEST(ActivationGradcheck, Hardsigmoid) {
  // ATen's gradient inside (-3, 3) is the float32 sixth, 3e-8 relative from 1/6: within gradcheck's 1e-3.
  EXPECT_TRUE(check_unary([](const Tensor& x) { return hardsigmoid(x); }, -5, 5));
}
TEST(ActivationGradcheck, Hardtanh) {
  EXPECT_TRUE(check_unary([](const Tensor& x) { return hardtanh(x); }, -2, 2));
  raw::UnaryAttrs relu6 = with([](raw::UnaryAttrs& a) {
    a.min_val = 0;
    a.max_val = 6;
  });
  EXPECT_TRUE(check_unary([relu6](const Tensor& x) { return hardtanh(x, relu6); }, -2, 8));
}
TEST(ActivationGradcheck, LogSigmoid) {
  EXPECT_TRUE(check_unary([](const Tensor& x) { return log_sigmoid(x); }, -30, 30));
}

TEST(ActivationGradcheck, ShrinksAndThreshold) {
  EXPECT_TRUE(check_unary([](const Tensor& x) { return hardshrink(x); }, -2, 2));
  EXPECT_TRUE(check_unary([](const Tensor& x) { return softshrink(x); }, -2, 2));
  raw::UnaryAttrs a = with([](raw::UnaryAttrs& a) {
    a.lambd = 1.25;
    a.threshold = -0.3;
    a.value = 4;
  });
  EXPECT_TRUE(check_unary([a](const Tensor& x) { return hardshrink(x, a); }, -3, 3));
  EXPECT_TRUE(check_unary([a](const Tensor& x) { return softshrink(x, a); }, -3, 3));
  EXPECT_TRUE(check_unary([a](const Tensor& x) { return threshold(x, a); }, -2, 2));
}

TEST(ActivationGradcheck, IntegralInputsAreRefusedAsPyTorchRefusesThem) {
  Tensor i = raw::from_vector(std::vector<int64_t>{-2, 0, 2}, {3});
  for (auto [name, f] : std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>>{
           {"leaky_relu", [](const Tensor& x) { return leaky_relu(x); }},
           {"elu", [](const Tensor& x) { return elu(x); }},
           {"softplus", [](const Tensor& x) { return softplus(x); }},
           {"mish", [](const Tensor& x) { return mish(x); }},
           {"hardswish", [](const Tensor& x) { return hardswish(x); }},
           {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); }},
           {"log_sigmoid", [](const Tensor& x) { return log_sigmoid(x); }},
           {"hardshrink", [](const Tensor& x) { return hardshrink(x); }},
           {"softshrink", [](const Tensor& x) { return softshrink(x); }}}) {
    EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { f(i); },
                                                            name + ": expected a floating-point tensor, got int64"));
  }
}

// torch.hardtanh on integers is torch.clamp: the dtype kept, a bound truncated; bool refused.
TEST(ActivationGradcheck, HardtanhOnIntegersClampsAndRefusesBool) {
  raw::UnaryAttrs a = with([](raw::UnaryAttrs& a) {
    a.min_val = -1.5;
    a.max_val = 2.5;
  });
  Tensor y = hardtanh(raw::from_vector(std::vector<int64_t>{-5, 0, 5, 2}, {4}), a);
  EXPECT_EQ(y.dtype(), kInt64);
  EXPECT_EQ(testing::values(y), (std::vector<double>{-1, 0, 2, 2}));
  Tensor b = raw::to(raw::from_vector(std::vector<int64_t>{0, 1}, {2}), kCPU, kBool);
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { hardtanh(b); }, "Bool inputs not supported for hardtanh"));
}

}  // namespace
}  // namespace colony
