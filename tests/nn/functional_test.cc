#include "nn/functional.h"

#include <gtest/gtest.h>

#include <cmath>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "nn/nn.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::all_close;
using colony::testing::throws_with;
using colony::testing::values;

TEST(Functional, LinearMatchesHandComputation) {
  Tensor x = raw::tensor({{1, 2}, {3, 4}});
  Tensor w = raw::tensor({{1, 0}, {1, 1}, {0, -1}});  // [3, 2]
  Tensor b = raw::tensor({0.5, 0, -0.5});
  EXPECT_EQ(values(F::linear(x, w, b)), (std::vector<double>{1.5, 3, -2.5, 3.5, 7, -4.5}));
  EXPECT_TRUE(throws_with([&] { F::linear(raw::ones({2, 3}), w); }, "linear: input [2, 3] does not end in in_features = 2"));
}

TEST(Functional, CrossEntropyHandDerived) {
  // logits [2, 3]; loss_i = logsumexp(x_i) - x_i[t_i]
  Tensor x = raw::tensor({{1, 2, 3}, {1, 1, 1}}, kFloat64);
  Tensor t = raw::from_vector(std::vector<int64_t>{2, 0});
  double l0 = std::log(std::exp(1) + std::exp(2) + std::exp(3)) - 3;
  double l1 = std::log(3.0);
  EXPECT_NEAR(F::cross_entropy(x, t).item<double>(), (l0 + l1) / 2, 1e-12);
  EXPECT_NEAR(F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(F::Reduction::Sum)).item<double>(), l0 + l1, 1e-12);
  Tensor none = F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(F::Reduction::None));
  EXPECT_TRUE(all_close(none, raw::tensor({l0, l1}, kFloat64), 1e-12, 1e-12));
  // ignore_index drops row 1 from the mean's numerator and denominator.
  Tensor t2 = raw::from_vector(std::vector<int64_t>{2, -100});
  EXPECT_NEAR(F::cross_entropy(x, t2).item<double>(), l0, 1e-12);
  // label smoothing: (1 - e) * nll + e * mean_c(-log p)
  double e = 0.1;
  double lse0 = l0 + 3;
  double smooth0 = ((lse0 - 1) + (lse0 - 2) + (lse0 - 3)) / 3, smooth1 = l1;
  double expect = ((1 - e) * l0 + e * smooth0 + (1 - e) * l1 + e * smooth1) / 2;
  EXPECT_NEAR(F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(e)).item<double>(), expect, 1e-12);
}

TEST(Functional, CrossEntropyGradientIsSoftmaxMinusOneHot) {
  Tensor x = raw::tensor({{1, 2, 3}}, TensorOptions(kFloat64).requires_grad(true));
  Tensor t = raw::from_vector(std::vector<int64_t>{1});
  F::cross_entropy(x, t).backward();
  double z = std::exp(1) + std::exp(2) + std::exp(3);
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({{std::exp(1) / z, std::exp(2) / z - 1, std::exp(3) / z}}, kFloat64), 1e-12, 1e-12));
}

TEST(Functional, LossErrors) {
  Tensor x = raw::ones({2, 3});
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, raw::ones({2})); }, "expected class-index targets of dtype int64 or int32, got float32"));
  // What the message says is accepted is accepted: int32 targets give the int64 result.
  Tensor t64 = raw::from_vector<int64_t>({0, 2}), t32 = raw::from_vector<int32_t>({0, 2});
  EXPECT_TRUE(all_close(F::cross_entropy(x, t32), F::cross_entropy(x, t64)));
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, raw::zeros({3}, kInt64)); }, "expected target of shape [2] for input [2, 3], got [3]"));
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, raw::full({2}, 5, kInt64)); }, "target 5 is out of bounds for 3 classes"));
  EXPECT_TRUE(throws_with([&] { F::mse_loss(x, raw::ones({3})); }, "must have the same shape"));
}

TEST(Functional, NllAndMse) {
  Tensor logp = raw::tensor({{-1, -2}, {-3, -4}}, kFloat64);
  Tensor t = raw::from_vector(std::vector<int64_t>{1, 0});
  EXPECT_NEAR(F::nll_loss(logp, t).item<double>(), 2.5, 1e-12);
  EXPECT_NEAR(F::mse_loss(raw::tensor({1, 2}), raw::tensor({0, 0})).item<double>(), 2.5, 1e-6);
  EXPECT_NEAR(F::mse_loss(raw::tensor({1, 2}), raw::tensor({0, 0}), F::Reduction::Sum).item<double>(), 5, 1e-6);
}

TEST(Functional, DropoutScalesAndIsIdentityInEval) {
  Generator g(1);
  Tensor x = raw::ones({10000});
  std::vector<double> v = values(F::dropout(x, 0.25, true, &g));
  double kept = 0;
  for (double e : v) {
    ASSERT_TRUE(e == 0 || std::abs(e - 1 / 0.75) < 1e-6) << e;
    kept += e != 0;
  }
  EXPECT_NEAR(kept / v.size(), 0.75, 0.02);
  EXPECT_TRUE(F::dropout(x, 0.25, false).is_same(x));
  EXPECT_TRUE(throws_with([&] { F::dropout(x, 1.5); }, "probability has to be between 0 and 1"));
}

// Dropout's mask is bernoulli(full(1 - p)) scaled by 1 / (1 - p), drawn from the generator as that
// draws (the same seed gives the same mask, and the generator ends at the same offset), for float32
// (whose uniform fill runs 8 Philox blocks at a time) and float64, lengths that end inside a block.
TEST(Functional, DropoutMaskIsBernoulliOfOneMinusPScaled) {
  for (DType dtype : {kFloat32, kFloat64}) {
    for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{10001}}) {
      Generator g(3), h(3);
      Tensor x = raw::randn({n}, TensorOptions(dtype), &g);
      raw::randn({n}, TensorOptions(dtype), &h);
      Tensor y = F::dropout(x, 0.3, true, &g);
      Tensor keep = raw::bernoulli(raw::full({n}, 0.7, TensorOptions(dtype)), &h);
      EXPECT_TRUE(raw::equal(y, raw::mul(x, raw::mul(keep, 1.0 / 0.7)))) << dtype_name(dtype) << " n=" << n;
      EXPECT_EQ(g.offset(), h.offset());
    }
  }
}

TEST(Functional, PadAsTorchInEveryMode) {
  // Values from torch.nn.functional.pad on arange(6.).reshape(2, 3) (and its [1, 2, 3] / [1, 1, 2, 3] views).
  Tensor a = raw::reshape(raw::arange(6.0, TensorOptions(kFloat64)), {2, 3});
  using colony::testing::matches_values;
  EXPECT_TRUE(matches_values(F::pad(a, F::PadFuncOptions({1, 2}).value(9)),
                             {9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9, 9}));
  Tensor cropped = F::pad(a, {1, -1, -1, 1});  // negative amounts remove elements
  EXPECT_EQ(cropped.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(matches_values(cropped, {0, 3, 4, 0, 0, 0}));
  Tensor a3 = a.reshape({1, 2, 3});
  EXPECT_TRUE(matches_values(F::pad(a3, F::PadFuncOptions({2, 1}).mode("reflect")),
                             {2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}));
  EXPECT_TRUE(matches_values(F::pad(a3, F::PadFuncOptions({2, 1}).mode("replicate")),
                             {0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5}));
  EXPECT_TRUE(matches_values(F::pad(a3, F::PadFuncOptions({2, 3}).mode("circular")),
                             {1, 2, 0, 1, 2, 0, 1, 2, 4, 5, 3, 4, 5, 3, 4, 5}));
  Tensor two_dims = F::pad(a.reshape({1, 1, 2, 3}), F::PadFuncOptions({1, 1, 1, 0}).mode("reflect"));
  EXPECT_EQ(two_dims.sizes(), (Shape{1, 1, 3, 5}));
  EXPECT_TRUE(matches_values(two_dims, {4, 3, 4, 5, 4, 1, 0, 1, 2, 1, 4, 3, 4, 5, 4}));
  // Gradients: the padding gets none, a reflected element the sum of its copies' (torch: [1, 3, 2]).
  Tensor y = raw::tensor({{1.0, 2.0, 3.0}}, kFloat64);
  y.requires_grad_();
  F::pad(y, F::PadFuncOptions({2, 1}).mode("reflect")).sum().backward();
  EXPECT_TRUE(matches_values(y.grad(), {1, 3, 2}));
  Tensor z = raw::tensor({{1.0, 2.0, 3.0}}, kFloat64);
  z.requires_grad_();
  (F::pad(z, {1, -1}) * 2.0).sum().backward();
  EXPECT_TRUE(matches_values(z.grad(), {2, 2, 0}));
  // A new tensor even with no padding.
  Tensor same = F::pad(a, {0, 0});
  raw::fill_(same, 7.0);
  EXPECT_TRUE(matches_values(a, {0, 1, 2, 3, 4, 5}));
  // PyTorch's refusals, said plainly.
  EXPECT_TRUE(throws_with([&] { F::pad(a, {1}); }, "Padding length must be divisible by 2"));
  EXPECT_TRUE(throws_with([&] { F::pad(a, {1, 1, 1, 1, 1, 1}); }, "Padding length should be less than or equal to two times the input dimension but got padding length 6 "
                                                                  "and input of dimension 2"));
  EXPECT_TRUE(throws_with([&] { F::pad(a, F::PadFuncOptions({1, 1, 1, 1}).mode("reflect")); },
                          "pads the last 1 to 3 dims of an input with 1 or 2 more dims"));
  EXPECT_TRUE(throws_with([&] { F::pad(a3, F::PadFuncOptions({3, 0}).mode("reflect")); }, "Padding size should be less than the corresponding input dimension"));
  EXPECT_TRUE(throws_with([&] { F::pad(a3, F::PadFuncOptions({4, 0}).mode("circular")); }, "Padding value causes wrapping around more than once."));
  EXPECT_TRUE(throws_with([&] { F::pad(a3, F::PadFuncOptions({1, 0}).mode("wrap")); }, "mode must be"));
  EXPECT_TRUE(throws_with([&] { F::pad(a, {-2, -2}); }, "leaves a negative size -1"));
}

TEST(Functional, NormalizeAsTorch) {
  // torch: F.normalize([[3, 4], [0, 0]], dim=1) = [[0.6, 0.8], [0, 0]] (eps keeps the zero row finite).
  Tensor x = raw::tensor({{3.0, 4.0}, {0.0, 0.0}}, kFloat64);
  x.requires_grad_();
  Tensor n = F::normalize(x);
  EXPECT_TRUE(colony::testing::matches_values(n, {0.6, 0.8, 0, 0}, 1e-15));
  n.select(1, 0).sum().backward();
  // d(x0 / |x|)/dx = (|x|^2 e0 - x0 x) / |x|^3 = [16, -12] / 125; the zero row: 1 / eps along x0.
  EXPECT_TRUE(colony::testing::matches_values(x.grad().select(0, 0), {0.128, -0.096}, 1e-15));
  EXPECT_TRUE(colony::testing::matches_values(F::normalize(x.detach(), F::NormalizeFuncOptions().p(1).dim(0)),
                                              {1, 1, 0, 0}));
}

TEST(Init, KaimingUniformDefaultBoundIsOneOverSqrtFanIn) {
  Linear fc(400, 120);
  std::vector<double> w = values(fc.weight);
  double bound = 1 / std::sqrt(400.0);
  double mx = 0;
  for (double x : w) mx = std::max(mx, std::abs(x));
  EXPECT_LE(mx, bound);
  EXPECT_GT(mx, 0.95 * bound);  // 48,000 draws reach close to the bound
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(raw::empty({16, 6, 5, 5})), (std::pair<int64_t, int64_t>{150, 400}));
  EXPECT_NEAR(init::calculate_gain(init::Nonlinearity::LeakyReLU, std::sqrt(5.0)), std::sqrt(1.0 / 3), 1e-12);
  EXPECT_NEAR(init::calculate_gain(init::Nonlinearity::Tanh), 5.0 / 3, 1e-12);
  Tensor t = raw::empty({200, 300});
  init::xavier_uniform_(t);
  double xb = std::sqrt(6.0 / 500);
  for (double x : values(t)) ASSERT_LE(std::abs(x), xb);
  EXPECT_TRUE(throws_with([&] { Tensor v = raw::empty({3}); init::kaiming_uniform_(v); }, "fewer than 2 dimensions"));
}

TEST(Init, SkipInitDrawsNothingAndLeavesTheValues) {
  manual_seed(11);
  const uint64_t offset = default_generator().offset();
  auto fc = utils::skip_init<Linear>(LinearOptions(40, 30));
  auto emb = utils::skip_init<Embedding>(EmbeddingOptions(50, 8));
  EXPECT_EQ(default_generator().offset(), offset);
  EXPECT_EQ(fc->weight.sizes(), (Shape{30, 40}));
  EXPECT_TRUE(fc->weight.requires_grad());
  EXPECT_EQ(emb->weight.sizes(), (Shape{50, 8}));
  // Under a guard the fills leave the tensor as it is; guards nest, and filling works again after.
  Tensor t = raw::full({2, 3}, 5.0);
  {
    init::SkipInitGuard outer;
    {
      init::SkipInitGuard inner;
      init::zeros_(t);
    }
    EXPECT_TRUE(init::SkipInitGuard::active());
    init::xavier_uniform_(t);
    init::normal_(t);
  }
  EXPECT_FALSE(init::SkipInitGuard::active());
  for (double x : values(t)) EXPECT_EQ(x, 5.0);
  EXPECT_EQ(default_generator().offset(), offset);
  init::normal_(t);
  EXPECT_NE(default_generator().offset(), offset);
  // Built normally, the same module draws.
  Linear drawn(LinearOptions(40, 30));
  EXPECT_NE(default_generator().offset(), offset);
}

// autocast's policy for the nn functions: linear (bias included) in the lower precision, the losses
// in float32, and float32 gradients for float32 parameters.
TEST(Functional, AutocastPolicy) {
  for (DType low : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    Tensor x = raw::ones({4, 6}), w = raw::full({5, 6}, 0.1), b = raw::full({5}, 0.2);
    w.requires_grad_();
    b.requires_grad_();
    Tensor target = raw::zeros({4}, TensorOptions(kInt64));
    Tensor y, ce;
    {
      AutocastGuard amp(DeviceType::CPU, low);
      y = F::linear(x, w, b);
      EXPECT_EQ(y.dtype(), low);
      EXPECT_EQ(F::linear(raw::ones({2, 3, 6}), w, b).dtype(), low);
      ce = F::cross_entropy(y, target);
      EXPECT_EQ(ce.dtype(), kFloat32);
      EXPECT_EQ(F::nll_loss(F::log_softmax(y, 1), target).dtype(), kFloat32);
      EXPECT_EQ(F::nll_loss(y, target).dtype(), kFloat32);
      EXPECT_EQ(F::mse_loss(y, y).dtype(), kFloat32);
      EXPECT_EQ(F::softmax(y, 1).dtype(), kFloat32);
      EXPECT_EQ(F::relu(y).dtype(), low);
    }
    EXPECT_TRUE(all_close(y, raw::full({4, 5}, 0.8), 1e-2, 1e-2));
    ce.backward();
    EXPECT_EQ(w.grad().dtype(), kFloat32);
    EXPECT_EQ(b.grad().dtype(), kFloat32);
  }
}

// The activations without a module of their own, through a module that calls the function (the
// CUDA check takes modules).
class Activation : public Module {
 public:
  explicit Activation(Tensor (*fn)(const Tensor&)) : fn_(fn) {}
  Tensor forward(const Tensor& input) override { return fn_(input); }

 private:
  Tensor (*fn_)(const Tensor&);
};

TEST(Functional, ActivationsOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Generator gen(40);
  // Wide enough to reach sigmoid's and tanh's flat tails, where their gradients vanish.
  Tensor x = raw::mul(raw::randn({3, 50}, TensorOptions(kFloat32), &gen), 6.0);
  for (auto fn : {&F::sigmoid, &F::tanh}) {
    colony::testing::expect_cuda_module_matches_cpu([&] { return std::make_shared<Activation>(fn); }, x);
  }
  colony::testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Activation>([](const Tensor& t) { return F::relu(t); }); }, x);
}

}  // namespace
}  // namespace colony::nn
