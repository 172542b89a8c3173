// Graph nodes: sequence numbers and edges (autograd/engine/node.cc).
#include "autograd/engine/accumulate_grad.h"
#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

TEST(Node, SequenceNumbersFollowCreationOrder) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor a = x * 2.0;
  Tensor b = a * 2.0;
  EXPECT_LT(a.grad_fn()->sequence_nr(), b.grad_fn()->sequence_nr());
  EXPECT_EQ(b.grad_fn()->next_edges.at(0).fn, a.grad_fn());
  EXPECT_EQ(b.grad_fn()->name(), "MulBackward");
}

TEST(Node, LeafEdgesShareOneAccumulateGrad) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor a = x * 2.0;
  Tensor b = x * 3.0;
  const autograd::Edge& ea = a.grad_fn()->next_edges.at(0);
  const autograd::Edge& eb = b.grad_fn()->next_edges.at(0);
  ASSERT_TRUE(ea.valid());
  EXPECT_EQ(ea.fn, eb.fn);
  EXPECT_EQ(ea.fn->name(), "AccumulateGrad");
  EXPECT_EQ(ea.fn->sequence_nr(), autograd::kMaxSequenceNr);
  EXPECT_TRUE(dynamic_cast<autograd::AccumulateGrad&>(*ea.fn).variable().is_same(x));
}

TEST(Node, InputsWithoutGradHaveInvalidEdges) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor c = raw::tensor({2.0});
  Tensor y = x * c;
  ASSERT_EQ(y.grad_fn()->next_edges.size(), 2u);
  EXPECT_TRUE(y.grad_fn()->next_edges[0].valid());
  EXPECT_FALSE(y.grad_fn()->next_edges[1].valid());
  (y * 1.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0})));
}

}  // namespace
}  // namespace colony
