// The engine: dependency order, gradient summation, graph release, errors, callbacks.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using testing::values;

Tensor leaf(std::initializer_list<double> v) { return tensor(v, TensorOptions().requires_grad(true)); }

TEST(Engine, DiamondGraphSumsBothPaths) {
  Tensor x = leaf({0.1, 0.5, -0.3});
  int accumulations = 0;
  x.register_post_accumulate_grad_hook([&](Tensor&) { ++accumulations; });
  Tensor a = x * 2.0;
  Tensor d = sin(a) + cos(a);  // a feeds two nodes that meet again
  d.sum().backward();
  EXPECT_EQ(accumulations, 1);  // the two paths are summed before reaching the leaf
  std::vector<double> xs = {0.1, 0.5, -0.3}, g = values(x.grad());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(g[i], 2 * (std::cos(2 * xs[i]) - std::sin(2 * xs[i])), 1e-5);
}

TEST(Engine, GradientSumsInPlaceNeverTouchATensorSentElsewhere) {
  // s = y + w sends one gradient tensor to both y and w; y also gets 5 from t = 5 y. Summing y's
  // two gradients into that shared tensor in place would hand w 6 instead of 1.
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2.0, w = x * 3.0;
  Tensor s = y + w, t = y * 5.0;
  (s.sum() + t.sum()).backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({15.0, 15.0}), 0.0, 0.0));  // 2 (1 + 5) + 3
  // A residual stream: h = x2 + f(x2) sums two gradients at x2, in place where it may.
  Tensor x2 = leaf({0.5, -1.0});
  Tensor a = x2 * 1.0;
  Tensor h = a + a * a;
  (h * 3.0).sum().backward();
  EXPECT_TRUE(all_close(x2.grad(), raw::tensor({6.0, -3.0}), 0.0, 0.0));  // 3 (1 + 2 a)
}

TEST(Engine, SameTensorTwiceInOneOp) {
  Tensor x = leaf({1.0, -2.0, 3.0});
  (x * x).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0, -4.0, 6.0})));
}

TEST(Engine, RetainGraphAllowsSecondBackward) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({4.0, 8.0})));
}

TEST(Engine, BackwardThroughFreedGraphThrows) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = exp(x).sum();  // exp saves its output
  y.backward();
  EXPECT_TRUE(throws_with([&] { y.backward(); },
                          "Trying to backward through the graph a second time (or directly access saved tensors "
                          "after they have already been freed)"));
  EXPECT_TRUE(throws_with([&] { y.backward(); }, "Specify retain_graph=true"));
}

TEST(Engine, NodesWithoutSavedTensorsCanRunTwice) {
  // As in PyTorch: only saved tensors are freed, so a graph of adds can be re-run.
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x + 1.0).sum();
  y.backward();
  y.backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0, 2.0})));
}

TEST(Engine, InplaceChangeOfSavedTensorThrows) {
  Tensor x = randn({3, 4}, TensorOptions().requires_grad(true));
  Tensor a = x * 2.0;
  // In-place writes on a tensor in the graph are refused; through a detached alias (one version
  // counter) they are allowed, and the saved-tensor check catches them.
  a.detach().add_(1.0);  // version 1
  Tensor b = a * a;      // saves a at version 1
  a.detach().mul_(2.0);  // version 2
  EXPECT_TRUE(throws_with([&] { b.sum().backward(); },
                          "one of the variables needed for gradient computation has been modified by an inplace "
                          "operation: [float32 [3, 4]] is at version 2; expected version 1 instead."));
}

TEST(Engine, InplaceChangeOfSavedOutputThrows) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = exp(x);
  y.detach().mul_(3.0);
  EXPECT_TRUE(throws_with([&] { y.sum().backward(); }, "[float32 [2]] is at version 1; expected version 0"));
}

TEST(Engine, NonScalarWithoutGradientThrows) {
  Tensor x = randn({2, 3}, TensorOptions().requires_grad(true));
  EXPECT_TRUE(throws_with([&] { (x * 2.0).backward(); },
                          "grad can be implicitly created only for scalar outputs, got shape [2, 3]"));
}

TEST(Engine, TensorWithoutGradThrows) {
  Tensor y = raw::ones({2}).sum();
  EXPECT_TRUE(throws_with([&] { y.backward(); },
                          "element 0 of tensors does not require grad and does not have a grad_fn"));
  Tensor x = leaf({1.0});
  EXPECT_TRUE(throws_with([&] { autograd::backward({x.sum(), y}); },
                          "element 1 of tensors does not require grad and does not have a grad_fn"));
}

TEST(Engine, ExplicitGradientForNonScalar) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  (x * 2.0).backward(raw::tensor({1.0, 10.0, 100.0}));
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0, 20.0, 200.0})));
  EXPECT_TRUE(throws_with([&] { (x * 2.0).backward(raw::tensor({1.0, 2.0})); },
                          "Mismatch in shape: grad_output[0] has a shape of [2] and output[0] has a shape of [3]"));
}

TEST(Engine, GradientOfAnotherDtypeIsCast) {
  Tensor x = leaf({1.0, 2.0});
  (x * 3.0).backward(raw::tensor({1.0, 1.0}, kFloat64));
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 3.0})));
}

TEST(Engine, LeafAsRoot) {
  Tensor x = tensor({2.0}, TensorOptions().requires_grad(true));
  x.backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0})));
}

TEST(Engine, SeveralRoots) {
  Tensor x = leaf({1.0, 2.0});
  autograd::backward({(x * 2.0).sum(), (x * x).sum()});
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({4.0, 6.0})));
}

TEST(Engine, RootDependingOnAnotherRoot) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3.0;
  Tensor z = (y * y).sum();
  // d/dx [sum(y * g) + z] with g = 1: 3 + 2 * y * 3
  autograd::backward({y, z}, {raw::ones({2}), Tensor()});
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0 + 18.0, 3.0 + 36.0})));
}

TEST(Engine, NoGradGuardRecordsNothing) {
  Tensor x = leaf({1.0, 2.0});
  {
    NoGradGuard guard;
    Tensor y = x * 2.0;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      EnableGradGuard enable;
      EXPECT_TRUE((x * 2.0).requires_grad());
    }
    EXPECT_FALSE((x * 2.0).requires_grad());
  }
  EXPECT_TRUE((x * 2.0).requires_grad());
}

TEST(Engine, DetachCutsHistoryAndSharesStorage) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2.0;
  Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_EQ(d.data_ptr_raw(), y.data_ptr_raw());
  d.mul_(1.0);
  EXPECT_EQ(d.version(), y.version());  // one version counter, as in PyTorch
  EXPECT_GT(y.version(), 0u);
  (d * x).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0, 4.0})));  // d is a constant
}

TEST(Engine, RequiresGradPropagation) {
  Tensor a = leaf({1.0});
  Tensor b = raw::tensor({2.0});
  EXPECT_TRUE((a + b).requires_grad());
  EXPECT_FALSE((a + b).is_leaf());
  EXPECT_FALSE((b + b).requires_grad());
  EXPECT_TRUE((b + b).is_leaf());
  b.requires_grad_();
  EXPECT_TRUE((b * 2.0).requires_grad());
  EXPECT_TRUE(throws_with([&] { (a + b).requires_grad_(false); }, "leaf"));
  Tensor i = raw::tensor({1.0}, kInt64);
  EXPECT_TRUE(throws_with([&] { i.requires_grad_(); }, "floating point"));
  EXPECT_FALSE((i == 1.0).requires_grad());
}

TEST(Engine, RunsReadyNodesInReverseCreationOrder) {
  Tensor x = leaf({1.0});
  Tensor a = x * 2.0;
  Tensor b = a * 3.0;
  Tensor c = a * 4.0;
  std::vector<std::string> order;
  b.register_hook([&](const Tensor&) -> std::optional<Tensor> { order.push_back("b"); return std::nullopt; });
  c.register_hook([&](const Tensor&) -> std::optional<Tensor> { order.push_back("c"); return std::nullopt; });
  a.register_hook([&](const Tensor&) -> std::optional<Tensor> { order.push_back("a"); return std::nullopt; });
  (b.sum() + c.sum()).backward();
  EXPECT_EQ(order, (std::vector<std::string>{"c", "b", "a"}));
}

TEST(Engine, UnusedOutputsOfMultiOutputNodeGetZeros) {
  Tensor x = leaf({1.0, 2.0, 3.0, 4.0});
  std::vector<Tensor> parts = split(x, 2);
  (parts[1] * 3.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({0.0, 0.0, 3.0, 3.0})));
}

TEST(Engine, QueueCallbackRunsAfterAllAccumulations) {
  Tensor w1 = leaf({1.0, 2.0});
  Tensor w2 = leaf({3.0, 4.0});
  std::vector<std::string> log;
  bool saw_both_grads = false;
  w2.register_post_accumulate_grad_hook([&](Tensor&) {
    log.push_back("w2");
    autograd::Engine::queue_callback([&] {
      log.push_back("callback");
      saw_both_grads = w1.grad().defined() && w2.grad().defined();
    });
  });
  w1.register_post_accumulate_grad_hook([&](Tensor&) { log.push_back("w1"); });
  Tensor h = w1 * 2.0;
  Tensor loss = (h * w2).sum();  // w2's gradient is complete before w1's
  loss.backward();
  EXPECT_EQ(log, (std::vector<std::string>{"w2", "w1", "callback"}));
  EXPECT_TRUE(saw_both_grads);
}

TEST(Engine, CallbacksMayQueueCallbacks) {
  Tensor x = leaf({1.0});
  std::vector<int> log;
  x.register_post_accumulate_grad_hook([&](Tensor&) {
    autograd::Engine::queue_callback([&] {
      log.push_back(1);
      autograd::Engine::queue_callback([&] { log.push_back(3); });
    });
    autograd::Engine::queue_callback([&] { log.push_back(2); });
  });
  x.sum().backward();
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3}));
  // Callbacks belong to one pass: the next backward runs only what its own hooks queue.
  log.clear();
  x.sum().backward();
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3}));
}

TEST(Engine, QueueCallbackOutsideBackwardThrows) {
  EXPECT_FALSE(autograd::Engine::is_running());
  EXPECT_TRUE(throws_with([] { autograd::Engine::queue_callback([] {}); }, "no backward pass is running"));
}

TEST(Engine, IsRunningInsideHooks) {
  Tensor x = leaf({1.0});
  bool running = false;
  x.register_hook([&](const Tensor&) -> std::optional<Tensor> {
    running = autograd::Engine::is_running();
    return std::nullopt;
  });
  (x * 2.0).sum().backward();
  EXPECT_TRUE(running);
  EXPECT_FALSE(autograd::Engine::is_running());
}

TEST(Engine, ExceptionInHookLeavesEngineUsable) {
  Tensor x = leaf({1.0});
  int id = x.register_hook([](const Tensor&) -> std::optional<Tensor> { throw std::runtime_error("hook failed"); });
  EXPECT_TRUE(throws_with([&] { (x * 2.0).sum().backward(); }, "hook failed"));
  EXPECT_FALSE(autograd::Engine::is_running());
  x.remove_hook(id);
  (x * 2.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0})));
}

TEST(Engine, BackwardInsideAHook) {
  Tensor x = leaf({1.0, 2.0});
  Tensor other = leaf({3.0});
  x.register_post_accumulate_grad_hook([&](Tensor&) {
    // Hooks run with grad mode off (as in PyTorch without create_graph); re-enable to record.
    EnableGradGuard enable;
    (other * 5.0).sum().backward();
  });
  (x * 2.0).sum().backward();
  EXPECT_TRUE(all_close(other.grad(), raw::tensor({5.0})));
}

TEST(Engine, FreesSavedTensorsWithoutRetainGraph) {
  Tensor x = leaf({1.0, 2.0});
  Tensor a = x * 2.0;
  std::weak_ptr<StorageImpl> a_storage = a.storage();
  Tensor b = (a * a).sum();  // mul saves a
  a = Tensor();
  EXPECT_FALSE(a_storage.expired());
  b.backward();
  EXPECT_TRUE(a_storage.expired());
}

TEST(Engine, SavedOutputsDoNotKeepTheirNodeAlive) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = exp(x);  // saves its own output: must not form a cycle
  std::weak_ptr<autograd::Node> node = y.grad_fn();
  EXPECT_FALSE(node.expired());
  y = Tensor();
  EXPECT_TRUE(node.expired());
}

}  // namespace
}  // namespace colony
