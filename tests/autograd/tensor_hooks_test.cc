// Tensor hooks, retain_grad and post-accumulate-grad hooks (autograd/tensor_hooks.cc).
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;

Tensor leaf(std::initializer_list<double> v) { return tensor(v, TensorOptions().requires_grad(true)); }

TEST(TensorHooks, HookOnNonLeafReplacesGradient) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3.0;
  Tensor seen;
  y.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    seen = g.clone();
    return raw::mul(g, 10.0);
  });
  y.sum().backward();
  EXPECT_TRUE(all_close(seen, raw::tensor({1.0, 1.0})));
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({30.0, 30.0})));
}

TEST(TensorHooks, HookSeesTheSummedGradient) {
  Tensor x = leaf({1.0});
  Tensor y = x * 1.0;
  Tensor seen;
  y.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    seen = g.clone();
    return std::nullopt;
  });
  (y * 2.0 + y * 5.0).sum().backward();
  EXPECT_TRUE(all_close(seen, raw::tensor({7.0})));
}

TEST(TensorHooks, HookOnLeafRunsBeforeAccumulation) {
  Tensor x = leaf({1.0, 2.0});
  x.register_hook([](const Tensor& g) -> std::optional<Tensor> { return raw::mul(g, -1.0); });
  (x * 2.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({-2.0, -2.0})));
}

TEST(TensorHooks, HooksRunInRegistrationOrderAndChain) {
  Tensor x = leaf({1.0});
  Tensor y = x * 1.0;
  y.register_hook([](const Tensor& g) -> std::optional<Tensor> { return raw::add(g, 1.0); });
  y.register_hook([](const Tensor& g) -> std::optional<Tensor> { return raw::mul(g, 3.0); });
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({6.0})));  // (1 + 1) * 3
}

TEST(TensorHooks, HookOutlivesTheTensorHandle) {
  Tensor x = leaf({1.0});
  Tensor loss;
  bool ran = false;
  {
    Tensor h = x * 2.0;
    h.register_hook([&](const Tensor&) -> std::optional<Tensor> {
      ran = true;
      return std::nullopt;
    });
    loss = h.sum();
  }
  loss.backward();
  EXPECT_TRUE(ran);
}

TEST(TensorHooks, RemoveHook) {
  Tensor x = leaf({1.0});
  Tensor y = x * 1.0;
  int id = y.register_hook([](const Tensor& g) -> std::optional<Tensor> { return raw::mul(g, 100.0); });
  int leaf_id = x.register_hook([](const Tensor& g) -> std::optional<Tensor> { return raw::mul(g, 100.0); });
  y.remove_hook(id);
  x.remove_hook(leaf_id);
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0})));
}

TEST(TensorHooks, HookOnTensorWithoutGradThrows) {
  Tensor c = raw::tensor({1.0});
  EXPECT_TRUE(throws_with([&] { c.register_hook([](const Tensor&) { return std::optional<Tensor>(); }); },
                          "cannot register a hook on a tensor that doesn't require gradient"));
}

TEST(TensorHooks, RetainGradKeepsNonLeafGradient) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3.0;
  Tensor z = y * y;
  y.retain_grad();
  z.sum().backward();
  EXPECT_TRUE(all_close(y.grad(), raw::tensor({6.0, 12.0})));  // 2y
  EXPECT_FALSE(z.grad().defined());                              // not retained
}

TEST(TensorHooks, RetainGradAccumulatesAndSeesHookedValue) {
  Tensor x = leaf({1.0});
  Tensor y = x * 2.0;
  y.retain_grad();
  y.register_hook([](const Tensor& g) -> std::optional<Tensor> { return raw::mul(g, 5.0); });
  Tensor loss = y.sum();
  loss.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_TRUE(all_close(y.grad(), raw::tensor({5.0})));  // retain_grad runs after user hooks
  loss.backward();
  EXPECT_TRUE(all_close(y.grad(), raw::tensor({10.0})));
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({20.0})));
}

TEST(TensorHooks, RetainGradErrors) {
  Tensor c = raw::tensor({1.0});
  EXPECT_TRUE(throws_with([&] { c.retain_grad(); }, "can't retain_grad on a tensor that has requires_grad=false"));
  Tensor x = leaf({1.0});
  x.retain_grad();  // a no-op on leaves
  (x * 2.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0})));
}

TEST(TensorHooks, PostAccumulateHooksRunInGradientReadyOrder) {
  // Like a 3-layer net: the last layer's weight is ready first (DDP relies on this order).
  Tensor w1 = leaf({1.0}), w2 = leaf({2.0}), w3 = leaf({3.0});
  std::vector<std::string> order;
  std::vector<double> grads_seen;
  for (auto [w, name] : {std::pair{w1, "w1"}, std::pair{w2, "w2"}, std::pair{w3, "w3"}}) {
    std::string n = name;
    w.register_post_accumulate_grad_hook([&order, &grads_seen, n](Tensor& t) {
      order.push_back(n);
      grads_seen.push_back(t.grad().item());  // the gradient is already accumulated
    });
  }
  Tensor x = raw::tensor({1.0});
  Tensor h = x * w1;
  h = h * w2;
  h = h * w3;
  h.sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"w3", "w2", "w1"}));
  EXPECT_EQ(grads_seen, (std::vector<double>{2.0, 3.0, 6.0}));
}

TEST(TensorHooks, PostAccumulateHookRemovedByHandle) {
  Tensor w = leaf({1.0});
  int calls = 0;
  int id = w.register_post_accumulate_grad_hook([&](Tensor&) { ++calls; });
  (w * 2.0).sum().backward();
  w.remove_hook(id);
  (w * 2.0).sum().backward();
  EXPECT_EQ(calls, 1);
}

TEST(TensorHooks, PostAccumulateHookErrors) {
  Tensor x = leaf({1.0});
  Tensor y = x * 2.0;
  EXPECT_TRUE(throws_with([&] { y.register_post_accumulate_grad_hook([](Tensor&) {}); },
                          "post accumulate grad hooks cannot be registered on non-leaf tensors"));
  Tensor c = raw::tensor({1.0});
  EXPECT_TRUE(throws_with([&] { c.register_post_accumulate_grad_hook([](Tensor&) {}); },
                          "cannot register a hook on a tensor that doesn't require gradient"));
}

}  // namespace
}  // namespace colony
