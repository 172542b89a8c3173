// FunctionNode, record() and attach() (autograd/engine/function_node.cc).
#include "autograd/engine/accumulate_grad.h"
#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

TEST(FunctionNode, FunctionNodeCountsItsGradients) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor out = raw::mul(x, 1.0);
  autograd::record("TwoGradsBackward", {x}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0], g[0]}; });
  EXPECT_TRUE(throws_with<std::logic_error>([&] { out.sum().backward(); },
                                            "TwoGradsBackward returned 2 gradients for 1 inputs"));
}

TEST(FunctionNode, WrongGradientShapeNamesTheNode) {
  Tensor x = tensor({1.0, 2.0}, TensorOptions().requires_grad(true));
  Tensor out = raw::mul(x, 1.0);
  autograd::record("BadShapeBackward", {x}, out, {},
                   [](const Grads& g, const Needs&) -> Grads { return {raw::sum(g[0])}; });
  EXPECT_TRUE(throws_with<std::logic_error>(
      [&] { out.sum().backward(); },
      "BadShapeBackward returned a gradient of shape [] for input 0, which has shape [2]"));
}

TEST(FunctionNode, NeedsInputGradReflectsEdges) {
  Tensor x = tensor({1.0}, TensorOptions().requires_grad(true));
  Tensor c = raw::tensor({1.0});
  Needs seen;
  Tensor out = raw::add(x, c);
  autograd::record("SpyBackward", {c, x}, out, {}, [&seen](const Grads& g, const Needs& needs) -> Grads {
    seen = needs;
    return {g[0], g[0]};
  });
  out.sum().backward();
  EXPECT_EQ(seen, (Needs{false, true}));
}

TEST(FunctionNode, RecordNeverRewritesAnInputsHistory) {
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

TEST(FunctionNode, CustomNodeViaAttach) {
  // A user-defined node type (not a closure) plugs into the same engine.
  struct Double : autograd::Node {
    std::string name() const override { return "DoubleBackward"; }
    Grads apply(Grads grads) override { return {raw::mul(grads[0], 2.0)}; }
  };
  Tensor x = tensor({1.0, 3.0}, TensorOptions().requires_grad(true));
  std::vector<Tensor> outs{raw::mul(x, 2.0)};
  autograd::attach(std::make_shared<Double>(), {x}, outs);
  outs[0].sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0, 2.0})));
}

}  // namespace
}  // namespace colony
