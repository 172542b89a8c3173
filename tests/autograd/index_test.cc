// Gradient checks of index_select, gather and their adjoints (autograd/index.cc).
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

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
