// The raw in-place Tensor members (tensor/tensor_inplace.cc): values, version bumps, and the
// refusal to write into a leaf that requires grad while grad mode is on.
#include <gtest/gtest.h>

#include <vector>

#include "tensor/grad_mode.h"
#include "tensor/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

std::vector<double> V(std::initializer_list<double> v) { return v; }

TEST(TensorInPlace, ArithmeticMembers) {
  Tensor a = raw::tensor({1, 2, 3});
  Tensor b = raw::tensor({10, 20, 30});
  EXPECT_EQ(&a.add_(b), &a);
  EXPECT_EQ(values(a), V({11, 22, 33}));
  a.add_(b, -0.5);  // a - 0.5 b
  EXPECT_EQ(values(a), V({6, 12, 18}));
  a.add_(1.0);
  EXPECT_EQ(values(a), V({7, 13, 19}));
  a.sub_(raw::tensor({7}));
  EXPECT_EQ(values(a), V({0, 6, 12}));
  a.mul_(b);
  EXPECT_EQ(values(a), V({0, 120, 360}));
  a.mul_(0.5);
  EXPECT_EQ(values(a), V({0, 60, 180}));
  a.div_(b);
  EXPECT_EQ(values(a), V({0, 3, 6}));
  a.div_(4.0);
  EXPECT_EQ(values(a), V({0, 0.75, 1.5}));
  a.clamp_(0.5, 1.0);
  EXPECT_EQ(values(a), V({0.5, 0.75, 1.0}));
}

TEST(TensorInPlace, RawWrites) {
  Tensor a = raw::zeros({2, 2});
  uint32_t v0 = a.version();
  a.fill_(3.0);
  EXPECT_EQ(values(a), V({3, 3, 3, 3}));
  a.copy_(raw::tensor({1, 2}, kInt64));
  EXPECT_EQ(values(a), V({1, 2, 1, 2}));
  a.zero_();
  EXPECT_EQ(values(a), V({0, 0, 0, 0}));
  EXPECT_GE(a.version(), v0 + 3);
}

TEST(TensorInPlace, AddAlphaRules) {
  Tensor i = raw::tensor({1, 2}, kInt64);
  i.add_(raw::tensor({1, 1}, kInt64), 3);
  EXPECT_EQ(values(i), V({4, 5}));
  EXPECT_TRUE(throws_with([&] { i.add_(raw::tensor({1, 1}, kInt64), 0.5); },
                          "add_: for integral input tensors, argument alpha must not be a floating point number"));
  EXPECT_TRUE(throws_with([&] { i.add_(raw::tensor({1.0, 1.0}), 1.0); },
                          "add_: result type Float can't be cast to the desired output type Long"));
  // Fused: half(1) + 0.1 * half(3) in float, rounded once.
  Tensor h = raw::to(raw::tensor({1}), kCPU, kFloat16);
  h.add_(raw::to(raw::tensor({3}), kCPU, kFloat16), 0.1);
  EXPECT_EQ(values(h), V({1.2998046875}));  // half(1.3f): 1 + 307 / 1024
}

TEST(TensorInPlace, RefusedOnLeafRequiringGrad) {
  Tensor w = raw::ones({2});
  w.requires_grad_(true);
  const char* msg = "a leaf Variable that requires grad is being used in an in-place operation.";
  EXPECT_TRUE(throws_with([&] { w.add_(1.0); }, msg));
  EXPECT_TRUE(throws_with([&] { w.mul_(raw::ones({2})); }, msg));
  EXPECT_TRUE(throws_with([&] { w.fill_(0.0); }, msg));
  EXPECT_TRUE(throws_with([&] { w.zero_(); }, msg));
  EXPECT_TRUE(throws_with([&] { w.copy_(raw::zeros({2})); }, msg));
  EXPECT_TRUE(throws_with([&] { w.clamp_(0.0, 1.0); }, msg));
  EXPECT_TRUE(throws_with([&] { w.div_(2.0); }, "div_: a leaf Variable"));
  EXPECT_TRUE(throws_with([&] { w.uniform_(0.0, 1.0); }, "uniform_: a leaf Variable"));
  EXPECT_TRUE(throws_with([&] { w.bernoulli_(0.5); }, msg));
  EXPECT_EQ(values(w), V({1, 1}));
  {
    NoGradGuard no_grad;  // how optimizers update parameters
    uint32_t v0 = w.version();
    w.add_(raw::ones({2}), -0.25);
    w.mul_(2.0);
    EXPECT_GT(w.version(), v0);
  }
  EXPECT_EQ(values(w), V({1.5, 1.5}));
  EXPECT_TRUE(w.requires_grad());
  Tensor plain = raw::ones({2});  // no grad required: always allowed
  plain.sub_(raw::ones({2}));
  EXPECT_EQ(values(plain), V({0, 0}));
}

}  // namespace
}  // namespace colony
