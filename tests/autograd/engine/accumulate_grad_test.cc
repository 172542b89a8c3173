// AccumulateGrad: how a leaf's .grad() is stored and summed (autograd/engine/accumulate_grad.cc).
#include <thread>
#include <vector>

#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;

Tensor leaf(std::initializer_list<double> v) { return tensor(v, TensorOptions().requires_grad(true)); }

TEST(AccumulateGrad, LeafGradAccumulatesAcrossBackwardCalls) {
  Tensor x = leaf({1.0, 2.0});
  (x * 3.0).sum().backward();
  Tensor first = x.grad();
  (x * x).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({5.0, 7.0})));
  EXPECT_TRUE(x.grad().is_same(first));  // later gradients are added in place
}

TEST(AccumulateGrad, FirstGradientDoesNotAliasTheCallersTensor) {
  Tensor x = leaf({1.0, 2.0});
  Tensor g = raw::tensor({5.0, 6.0});
  x.backward(g);
  g.fill_(0.0);
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({5.0, 6.0})));
}

TEST(AccumulateGrad, BroadcastGradientIsStoredDense) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  x.sum().backward();  // sum's gradient is an expanded (stride 0) view
  EXPECT_TRUE(x.grad().is_contiguous());
  (x * 2.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 3.0, 3.0})));
}

TEST(AccumulateGrad, StealsAGradientNobodyElseHolds) {
  Tensor x = leaf({1.0, 2.0});
  Tensor w = leaf({3.0, 4.0});
  (x * w).sum().backward();
  // x's gradient (g * w) was computed for it alone: storing it needs no copy, and it aliases nothing.
  EXPECT_NE(x.grad().data_ptr_raw(), w.data_ptr_raw());
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 4.0})));
}

TEST(AccumulateGrad, PostHookSeesAccumulatedGradient) {
  Tensor x = leaf({1.0});
  std::vector<double> seen;
  x.register_post_accumulate_grad_hook([&](Tensor& t) { seen.push_back(t.grad().item()); });
  (x * 2.0).sum().backward();
  (x * 5.0).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{2.0, 7.0}));
}

TEST(AccumulateGrad, ConcurrentBackwardIntoOneLeaf) {
  // Two threads train through one shared parameter; the per-node lock keeps the sum exact.
  Tensor w = leaf({0.0});
  auto work = [&] {
    for (int i = 0; i < 200; ++i) (w * 1.0).sum().backward();
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(w.grad().item(), 400.0);
}

}  // namespace
}  // namespace colony
