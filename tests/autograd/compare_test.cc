// Comparisons give bool tensors outside the graph (autograd/compare.cc).
#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::values;

TEST(Compare, ResultsAreBoolAndNotDifferentiable) {
  Tensor a = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  Tensor b = raw::tensor({2.0, 2.0, 2.0});
  std::vector<std::pair<Tensor, std::vector<double>>> cases = {
      {a == b, {0, 1, 0}}, {a != b, {1, 0, 1}}, {a < b, {1, 0, 0}},
      {a <= b, {1, 1, 0}}, {a > b, {0, 0, 1}},  {a >= b, {0, 1, 1}},
      {a == 2.0, {0, 1, 0}}, {a != 2.0, {1, 0, 1}}, {a < 2.0, {1, 0, 0}},
      {a <= 2.0, {1, 1, 0}}, {a > 2.0, {0, 0, 1}},  {a >= 2.0, {0, 1, 1}},
      {!(a > 2.0), {1, 1, 0}},
  };
  for (auto& [r, expected] : cases) {
    EXPECT_EQ(r.dtype(), kBool);
    EXPECT_FALSE(r.requires_grad());
    EXPECT_EQ(values(r), expected);
  }
}

TEST(Compare, MaskOperatorsCombineBoolMasksAsInPyTorch) {
  // An attention mask as PyTorch code builds one: causal | padding, and ~ to invert it.
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, TensorOptions().requires_grad(true));
  Tensor low = x < 3.0, even = raw::tensor({0, 1, 0, 1}, kInt64) == 1.0;
  std::vector<std::pair<Tensor, std::vector<double>>> cases = {
      {low & even, {0, 1, 0, 0}},        {low | even, {1, 1, 0, 1}},        {low ^ even, {1, 0, 0, 1}},
      {~low, {0, 0, 1, 1}},              {logical_and(x, even), {0, 1, 0, 1}}, {logical_or(x - 1.0, low), {1, 1, 1, 1}},
      {logical_xor(x - 2.0, even), {1, 1, 1, 0}},
  };
  for (auto& [r, expected] : cases) {
    EXPECT_EQ(r.dtype(), kBool);
    EXPECT_FALSE(r.requires_grad());
    EXPECT_EQ(values(r), expected);
  }
  // On integers & | ^ ~ are bitwise, as torch's.
  Tensor i = raw::tensor({6, -1}, kInt64), j = raw::tensor({3, 8}, kInt64);
  EXPECT_EQ(values(i & j), (std::vector<double>{2, 8}));
  EXPECT_EQ(values(i | j), (std::vector<double>{7, -1}));
  EXPECT_EQ(values(i ^ j), (std::vector<double>{5, -9}));
  EXPECT_EQ(values(~i), (std::vector<double>{-7, 0}));
}

TEST(Compare, ArgmaxAndOneHotAreNotDifferentiable) {
  Tensor x = tensor({{1.0, 5.0, 2.0}, {7.0, 0.0, 1.0}}, TensorOptions().requires_grad(true));
  Tensor idx = argmax(x, 1);
  EXPECT_FALSE(idx.requires_grad());
  EXPECT_EQ(values(idx), (std::vector<double>{1, 0}));
  EXPECT_FALSE(argmin(x, 1).requires_grad());
  Tensor oh = one_hot(idx, 3);
  EXPECT_FALSE(oh.requires_grad());
  EXPECT_EQ(values(oh), (std::vector<double>{0, 1, 0, 1, 0, 0}));
}

}  // namespace
}  // namespace colony
