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
