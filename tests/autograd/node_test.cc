// Graph nodes: sequence numbers, FunctionNode, AccumulateGrad reuse, edges (autograd/node.cc,
// function_node.cc, accumulate_grad.cc).
#include "autograd/accumulate_grad.h"
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
  Tensor c = ops::tensor({2.0});
  Tensor y = x * c;
  ASSERT_EQ(y.grad_fn()->next_edges.size(), 2u);
  EXPECT_TRUE(y.grad_fn()->next_edges[0].valid());
  EXPECT_FALSE(y.grad_fn()->next_edges[1].valid());
  (y * 1.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), ops::tensor({2.0})));
}

TEST(Node, FunctionNodeCountsItsGradients) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor out = ops::mul(x, 1.0);
  autograd::record("TwoGradsBackward", {x}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0], g[0]}; });
  EXPECT_TRUE(throws_with<std::logic_error>([&] { out.sum().backward(); },
                                            "TwoGradsBackward returned 2 gradients for 1 inputs"));
}

TEST(Node, WrongGradientShapeNamesTheNode) {
  Tensor x = tensor({1.0, 2.0}, TensorOptions().requires_grad(true));
  Tensor out = ops::mul(x, 1.0);
  autograd::record("BadShapeBackward", {x}, out, {},
                   [](const Grads& g, const Needs&) -> Grads { return {ops::sum(g[0])}; });
  EXPECT_TRUE(throws_with<std::logic_error>(
      [&] { out.sum().backward(); },
      "BadShapeBackward returned a gradient of shape [] for input 0, which has shape [2]"));
}

TEST(Node, NeedsInputGradReflectsEdges) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor c = ops::tensor({1.0});
  Needs seen;
  Tensor out = ops::add(x, c);
  autograd::record("SpyBackward", {c, x}, out, {}, [&seen](const Grads& g, const Needs& needs) -> Grads {
    seen = needs;
    return {g[0], g[0]};
  });
  out.sum().backward();
  EXPECT_EQ(seen, (Needs{false, true}));
}

TEST(Node, RecordNeverRewritesAnInputsHistory) {
  // An op whose raw result is its input (e.g. a no-op) must not take over the input's grad_fn.
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor a = x * 2.0;
  std::shared_ptr<autograd::Node> before = a.grad_fn();
  Tensor out = a;
  autograd::record("IdentityBackward", {a}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  EXPECT_EQ(a.grad_fn(), before);
  EXPECT_FALSE(out.is_same(a));
  EXPECT_EQ(out.grad_fn()->name(), "IdentityBackward");
  EXPECT_EQ(out.data_ptr_raw(), a.data_ptr_raw());
}

TEST(Node, CustomNodeViaAttach) {
  // A user-defined node type (not a closure) plugs into the same engine.
  struct Double : autograd::Node {
    std::string name() const override { return "DoubleBackward"; }
    Grads apply(Grads grads) override { return {ops::mul(grads[0], 2.0)}; }
  };
  Tensor x = tensor({1.0, 3.0}, TensorOptions().requires_grad(true));
  std::vector<Tensor> outs{ops::mul(x, 2.0)};
  autograd::attach(std::make_shared<Double>(), {x}, outs);
  outs[0].sum().backward();
  EXPECT_TRUE(all_close(x.grad(), ops::tensor({2.0, 2.0})));
}

TEST(SavedTensor, ReleaseAndVersionChecks) {
  Tensor t = ops::ones({3, 4});
  uint32_t v = t.version();
  autograd::SavedTensor s(t);
  s.set_owner("TestBackward");
  EXPECT_TRUE(s.unpack().is_same(t));
  t.add_(1.0);
  t.add_(1.0);
  EXPECT_TRUE(throws_with([&] { s.unpack(); },
                          "[float32 [3, 4]] is at version " + std::to_string(v + 2) + "; expected version " +
                              std::to_string(v) + " instead. It was saved by TestBackward."));
  autograd::SavedTensor copy = s;
  copy.release();
  EXPECT_TRUE(throws_with([&] { s.unpack(); }, "Trying to backward through the graph a second time"));
}

TEST(SavedTensor, SavedOutputDropsAutogradMetadata) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor y = x * 2.0;
  autograd::SavedTensor s(y, /*is_output=*/true);
  Tensor u = s.unpack();
  EXPECT_FALSE(u.requires_grad());
  EXPECT_EQ(u.data_ptr_raw(), y.data_ptr_raw());
  EXPECT_FALSE(autograd::SavedTensor().defined());
  EXPECT_FALSE(autograd::SavedTensor().unpack().defined());
}

}  // namespace
}  // namespace colony
