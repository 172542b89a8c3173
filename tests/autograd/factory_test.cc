// The factory re-exports in namespace colony apply TensorOptions::requires_grad (autograd/factory.h).
#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::values;

TEST(Factory, RequiresGradFromOptions) {
  TensorOptions rg = TensorOptions().requires_grad(true);
  for (Tensor t : {zeros({2}, rg), ones({2}, rg), full({2}, 3.0, rg), empty({2}, rg), randn({2}, rg),
                   rand({2}, rg), tensor({1.0, 2.0}, rg), tensor({{1.0, 2.0}, {3.0, 4.0}}, rg), eye(2, -1, rg),
                   linspace(0, 1, 3, rg), scalar_tensor(1.0, rg), arange(0, 3, 1, TensorOptions(kFloat32).requires_grad(true))}) {
    EXPECT_TRUE(t.requires_grad());
    EXPECT_TRUE(t.is_leaf());
  }
  EXPECT_FALSE(zeros({2}).requires_grad());
  EXPECT_FALSE(zeros_like(ones({2}, rg)).requires_grad());
}

TEST(Factory, ValuesMatchTheRawOps) {
  EXPECT_EQ(values(zeros({3})), values(raw::zeros({3})));
  EXPECT_EQ(values(full({2}, 7.0)), (std::vector<double>{7.0, 7.0}));
  EXPECT_EQ(values(arange(4)), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(arange(4).dtype(), kInt64);
  EXPECT_EQ(values(from_vector<float>({1.f, 2.f}, {2})), (std::vector<double>{1.0, 2.0}));
  Generator g1(5), g2(5);
  EXPECT_EQ(values(randn({4}, {}, &g1)), values(raw::randn({4}, {}, &g2)));
}

TEST(Factory, IntegerTensorsCannotRequireGrad) {
  EXPECT_TRUE(testing::throws_with([] { zeros({2}, TensorOptions(kInt64).requires_grad(true)); },
                                   "only floating point tensors can require gradients"));
}

TEST(Factory, TrainingStepEndToEnd) {
  // A tiny regression written the way users write it: y = relu(x W + b), mean squared error.
  manual_seed(0);
  Tensor x = randn({8, 3});
  Tensor target = randn({8, 2});
  Tensor w = randn({3, 2}, TensorOptions().requires_grad(true));
  Tensor b = zeros({2}, TensorOptions().requires_grad(true));
  double first = 0, last = 0;
  for (int step = 0; step < 50; ++step) {
    Tensor loss = (x.matmul(w) + b - target).pow(2.0).mean();
    if (step == 0) first = loss.item();
    last = loss.item();
    w.set_grad(Tensor());
    b.set_grad(Tensor());
    loss.backward();
    NoGradGuard no_grad;
    w.add_(w.grad(), -0.1);
    b.add_(b.grad(), -0.1);
  }
  EXPECT_LT(last, first * 0.9);
}

}  // namespace
}  // namespace colony

namespace colony {
namespace {

TEST(Factory, FromVectorTakesTheDTypeOfItsElements) {
  EXPECT_EQ(from_vector<int64_t>({1, 2}).dtype(), kInt64);
  EXPECT_EQ(from_vector<int32_t>({1, 2}).dtype(), kInt32);
  EXPECT_EQ(from_vector<double>({1, 2}).dtype(), kFloat64);
  EXPECT_EQ(from_vector<float>({1, 2}).dtype(), kFloat32);
  EXPECT_EQ(from_vector<int64_t>({1, 2}, {2}, kFloat32).dtype(), kFloat32);  // an explicit dtype wins
  EXPECT_TRUE(from_vector<double>({1, 2}, {2}, TensorOptions(kFloat64).requires_grad(true)).requires_grad());
}

TEST(Factory, AllcloseAndEqualInTheUserNamespace) {
  Tensor a = tensor({1.0, 2.0}, kFloat64);
  EXPECT_TRUE(allclose(a, tensor({1.0, 2.0 + 1e-7}, kFloat64)));
  EXPECT_FALSE(allclose(a, tensor({1.0, 2.1}, kFloat64)));
  EXPECT_TRUE(equal(a, tensor({1.0, 2.0}, kFloat64)));
  EXPECT_FALSE(equal(a, tensor({1.0, 2.0 + 1e-7}, kFloat64)));
}

}  // namespace
}  // namespace colony
