// Gradient checks of sort and topk (autograd/sort.cc), with their Tensor members.
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Sort, ValuesGradientGoesToTheSortedPositions) {
  // Distinct values (finite differences must not reorder them): input() draws from a continuum.
  for (Tensor x : {input({3, 5}), strided_input({3, 5}), input({2, 3, 4})}) {
    for (int64_t dim : {0, -1}) {
      for (bool descending : {false, true}) {
        EXPECT_TRUE(gradcheck([&](In in) { return sort(in[0], dim, descending).first; }, {x}));
        EXPECT_TRUE(gradcheck([&](In in) { return in[0].sort(dim, descending).first; }, {x}));
      }
    }
  }
  EXPECT_FALSE(sort(input({4})).second.requires_grad());
}

TEST(Topk, ValuesGradientGoesToTheChosenPositions) {
  for (Tensor x : {input({4, 6}), strided_input({4, 6})}) {
    for (int64_t k : {0, 1, 3}) {
      for (bool largest : {true, false}) {
        EXPECT_TRUE(gradcheck([&](In in) { return topk(in[0], k, 1, largest).first; }, {x}));
        EXPECT_TRUE(gradcheck([&](In in) { return in[0].topk(k, 0, largest).first; }, {x}));
      }
    }
  }
  // By hand: the two largest of [1, 5, 3, 4] are at 1 and 3.
  Tensor x = tensor({1.0, 5.0, 3.0, 4.0}, TensorOptions().requires_grad(true));
  topk(x, 2).first.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({0.0, 1.0, 0.0, 1.0})));
}

}  // namespace
}  // namespace colony
