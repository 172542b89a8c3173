// autograd::grad: gradients returned, nothing accumulated.
#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;

Tensor leaf(std::initializer_list<double> v) { return tensor(v, TensorOptions().requires_grad(true)); }

TEST(Grad, ReturnsGradientsWithoutAccumulating) {
  Tensor x = leaf({1.0, 2.0});
  Tensor w = leaf({3.0, 4.0});
  Tensor loss = (x * w).sum();
  std::vector<Tensor> g = autograd::grad({loss}, {x, w});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(all_close(g[0], raw::tensor({3.0, 4.0})));
  EXPECT_TRUE(all_close(g[1], raw::tensor({1.0, 2.0})));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
}

TEST(Grad, DoesNotTouchLeavesOutsideInputs) {
  Tensor x = leaf({1.0});
  Tensor w = leaf({2.0});
  bool w_hook_ran = false;
  w.register_post_accumulate_grad_hook([&](Tensor&) { w_hook_ran = true; });
  std::vector<Tensor> g = autograd::grad({(x * w).sum()}, {x});
  EXPECT_TRUE(all_close(g[0], raw::tensor({2.0})));
  EXPECT_FALSE(w.grad().defined());
  EXPECT_FALSE(w_hook_ran);
}

TEST(Grad, NonLeafInput) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3.0;
  Tensor loss = (y * y).sum();
  std::vector<Tensor> g = autograd::grad({loss}, {y, x});
  EXPECT_TRUE(all_close(g[0], raw::tensor({6.0, 12.0})));   // 2y
  EXPECT_TRUE(all_close(g[1], raw::tensor({18.0, 36.0})));  // 2y * 3
}

TEST(Grad, LeafHooksApplyToTheReturnedGradient) {
  Tensor x = leaf({1.0});
  x.register_hook([](const Tensor& g) -> std::optional<Tensor> { return raw::mul(g, 2.0); });
  std::vector<Tensor> g = autograd::grad({(x * 5.0).sum()}, {x});
  EXPECT_TRUE(all_close(g[0], raw::tensor({10.0})));
}

TEST(Grad, UnusedInput) {
  Tensor x = leaf({1.0});
  Tensor unused = leaf({2.0});
  EXPECT_TRUE(throws_with([&] { autograd::grad({(x * 2.0).sum()}, {x, unused}); },
                          "inputs[1] appears to not have been used in the graph"));
  std::vector<Tensor> g = autograd::grad({(x * 2.0).sum()}, {x, unused}, {}, std::nullopt, /*create_graph=*/false, /*allow_unused=*/true);
  EXPECT_TRUE(all_close(g[0], raw::tensor({2.0})));
  EXPECT_FALSE(g[1].defined());
}

TEST(Grad, InputWithoutGradThrows) {
  Tensor x = leaf({1.0});
  Tensor c = raw::tensor({1.0});
  EXPECT_TRUE(throws_with([&] { autograd::grad({(x * c).sum()}, {c}); }, "inputs[0] does not require grad"));
}

TEST(Grad, RetainGraph) {
  Tensor x = leaf({2.0});
  Tensor loss = (x * x).sum();
  autograd::grad({loss}, {x}, {}, /*retain_graph=*/true);
  std::vector<Tensor> g = autograd::grad({loss}, {x});
  EXPECT_TRUE(all_close(g[0], raw::tensor({4.0})));
  EXPECT_TRUE(throws_with([&] { autograd::grad({loss}, {x}); }, "Trying to backward through the graph a second time"));
}

TEST(Grad, ExplicitGradOutputs) {
  Tensor x = leaf({1.0, 2.0});
  std::vector<Tensor> g = autograd::grad({x * 2.0}, {x}, {raw::tensor({1.0, -1.0})});
  EXPECT_TRUE(all_close(g[0], raw::tensor({2.0, -2.0})));
}

}  // namespace
}  // namespace colony
