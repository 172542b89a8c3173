// Gradient checks of sort, topk (autograd/sort.cc), cumsum (autograd/cumsum.cc), tril/triu
// (autograd/triangle.cc) and masked_fill (autograd/binary.cc), with their Tensor members.
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

TEST(Cumsum, GradientIsTheReversedCumsum) {
  for (Tensor x : {input({3, 5}), strided_input({3, 5}), input({2, 3, 4}), input({})}) {
    for (int64_t dim : {0, -1}) {
      EXPECT_TRUE(gradcheck([&](In in) { return cumsum(in[0], dim); }, {x})) << shape_str(x.sizes()) << dim;
    }
  }
  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  x.cumsum(0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 2.0, 1.0})));
}

TEST(Triangle, GradientKeepsTheSameTriangle) {
  for (Tensor x : {input({4, 3}), strided_input({4, 3}), input({2, 3, 5})}) {
    for (int64_t diagonal : {-1, 0, 2}) {
      EXPECT_TRUE(gradcheck([&](In in) { return tril(in[0], diagonal); }, {x}));
      EXPECT_TRUE(gradcheck([&](In in) { return in[0].triu(diagonal); }, {x}));
    }
  }
}

TEST(MaskedFill, NoGradientWhereFilled) {
  Tensor mask = raw::tensor({1, 0, 0, 1}, kBool);
  for (Tensor x : {input({3, 4}), strided_input({3, 4})}) {
    EXPECT_TRUE(gradcheck([&](In in) { return masked_fill(in[0], mask, -5.0); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return in[0].masked_fill(mask, 2.0); }, {x}));
  }
  // A mask larger than t broadcasts t; its gradient sums back.
  Tensor big = raw::reshape(raw::tensor({1, 0, 0, 0, 1, 0}, kBool), {2, 3});
  EXPECT_TRUE(gradcheck([&](In in) { return masked_fill(in[0], big, 0.0); }, {input({3})}));
  Tensor x = tensor({1.0, 2.0}, TensorOptions().requires_grad(true));
  masked_fill(x, raw::tensor({0, 1}, kBool), 5.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0, 0.0})));
}

TEST(IndexSelect, NDimensionalIndexGradient) {
  Tensor idx = raw::tensor({{0, 2}, {2, 1}}, kInt64);  // 2 repeated: its gradients add
  for (Tensor x : {input({3, 4}), strided_input({3, 4})}) {
    EXPECT_TRUE(gradcheck([&](In in) { return index_select(in[0], 0, idx); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return index_select(in[0], 1, idx); }, {x}));
  }
}

}  // namespace
}  // namespace colony
