// Gradient checks of index_select, gather and their adjoints (autograd/index.cc).
#include <cmath>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Index, NonzeroAndMaskedSelectAsTorch) {
  // torch.nonzero(tensor([[0, 1.5, 0], [nan, 0, -2]])) = [[0, 1], [1, 0], [1, 2]].
  Tensor x = raw::tensor({0.0, 1.5, 0.0, std::nan(""), 0.0, -2.0});
  x = raw::reshape(x, {2, 3});
  Tensor nz = nonzero(x);
  EXPECT_EQ(nz.dtype(), kInt64);
  EXPECT_EQ(nz.sizes(), (Shape{3, 2}));
  EXPECT_EQ(testing::values(nz), (std::vector<double>{0, 1, 1, 0, 1, 2}));
  EXPECT_EQ(nonzero(raw::zeros({4})).sizes(), (Shape{0, 1}));
  EXPECT_EQ(nonzero(raw::scalar_tensor(3.0)).sizes(), (Shape{1, 0}));
  // masked_select broadcasts the mask: a row mask picks those columns of every row.
  Tensor t = raw::reshape(raw::arange(0, 6, 1, kFloat64), {2, 3});
  Tensor row = raw::to(raw::tensor({1.0, 0.0, 1.0}), kCPU, kBool);
  EXPECT_EQ(testing::values(masked_select(t, row)), (std::vector<double>{0, 2, 3, 5}));
  EXPECT_TRUE(gradcheck([&](In in) { return masked_select(in[0], row); }, {input({2, 3})}));
  // The input broadcast against a larger mask: its gradient sums over the copies.
  Tensor v = input({3});
  Tensor both = raw::to(raw::tensor({1.0, 1.0, 0.0, 0.0, 1.0, 1.0}), kCPU, kBool);
  sum(masked_select(v, raw::reshape(both, {2, 3}))).backward();
  EXPECT_EQ(testing::values(v.grad()), (std::vector<double>{1, 2, 1}));
  EXPECT_TRUE(testing::throws_with([&] { masked_select(t, raw::ones({3})); }, "expected a bool mask, got float32"));
}

TEST(Index, IndexSelect) {
  Tensor idx = raw::tensor({2, 0, 2}, kInt64);  // a repeated index sums its gradients
  for (Tensor x : {input({3, 4}), strided_input({3, 4})}) {
    EXPECT_TRUE(gradcheck([&](In in) { return index_select(in[0], 0, idx); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return index_select(in[0], 1, idx); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return in[0].index_select(-1, idx); }, {x}));
  }
}

TEST(Index, IndexSelectRepeatedIndexByHand) {
  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  index_select(x, 0, raw::tensor({2, 2, 0}, kInt64)).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0, 0.0, 2.0})));
}

TEST(Index, Gather) {
  Tensor idx0 = raw::tensor({{0, 2, 1, 0}, {2, 2, 0, 1}}, kInt64);
  Tensor idx1 = raw::tensor({{3, 0}, {1, 1}, {0, 2}}, kInt64);
  for (Tensor x : {input({3, 4}), strided_input({3, 4})}) {
    EXPECT_TRUE(gradcheck([&](In in) { return gather(in[0], 0, idx0); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return in[0].gather(1, idx1); }, {x}));
  }
}

TEST(Index, ScatterAdd) {
  Tensor idx = raw::tensor({{0, 2, 1}, {2, 2, 0}}, kInt64);
  EXPECT_TRUE(gradcheck([&](In in) { return scatter_add({3, 3}, 0, idx, in[0]); }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([&](In in) { return scatter_add({3, 3}, 0, idx, in[0]); }, {strided_input({2, 3})}));
}

TEST(Index, ScatterAddWithLargerSource) {
  // Only the index-shaped corner of src is read; the rest gets zero gradient.
  Tensor idx = raw::from_vector<int64_t>({1, 0}, {2, 1});
  EXPECT_TRUE(gradcheck([&](In in) { return scatter_add({2, 2}, 0, idx, in[0]); }, {input({3, 2})}));
}

TEST(Index, IndexAdd) {
  Tensor idx = raw::tensor({1, 0, 1}, kInt64);
  EXPECT_TRUE(gradcheck([&](In in) { return index_add({2, 4}, 0, idx, in[0]); }, {input({3, 4})}));
  EXPECT_TRUE(gradcheck([&](In in) { return index_add({3, 2}, 1, idx, in[0]); }, {strided_input({3, 3})}));
}

TEST(Index, IndexTensorsGetNoGradient) {
  Tensor x = input({3});
  Tensor y = index_select(x, 0, raw::tensor({0}, kInt64));
  ASSERT_EQ(y.grad_fn()->next_edges.size(), 1u);  // only x is an input of the node
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
