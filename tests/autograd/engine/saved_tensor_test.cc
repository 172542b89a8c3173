// SavedTensor: version checks and release (autograd/engine/saved_tensor.cc).
#include "autograd/engine/accumulate_grad.h"
#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

TEST(SavedTensor, ReleaseAndVersionChecks) {
  Tensor t = raw::ones({3, 4});
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
  {
    NoGradGuard ordinary_backward;  // an ordinary backward runs under no-grad
    Tensor u = s.unpack();
    EXPECT_FALSE(u.requires_grad());
    EXPECT_EQ(u.data_ptr_raw(), y.data_ptr_raw());
  }
  // Under grad mode (a backward with create_graph) it comes back with its node as history...
  Tensor r = s.unpack();
  EXPECT_EQ(r.grad_fn(), y.grad_fn());
  EXPECT_EQ(r.data_ptr_raw(), y.data_ptr_raw());
  // ...which it holds weakly: with y and its node gone, the saved tensor is plain again.
  r = Tensor();
  y = Tensor();
  EXPECT_FALSE(s.unpack().requires_grad());
  EXPECT_FALSE(autograd::SavedTensor().defined());
  EXPECT_FALSE(autograd::SavedTensor().unpack().defined());
}

}  // namespace
}  // namespace colony
