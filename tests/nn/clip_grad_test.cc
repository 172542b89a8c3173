#include "nn/clip_grad.h"

#include <gtest/gtest.h>

#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

TEST(ClipGrad, LivesInNnUtilsAsInPyTorch) {
  Tensor w = raw::zeros({2}, TensorOptions(kFloat64).requires_grad(true));
  w.mutable_grad() = raw::from_vector<double>({3, 4});
  EXPECT_NEAR(utils::clip_grad_norm_({w}, 1.0), 5.0, 1e-12);
  EXPECT_NEAR(testing::values(w.grad())[1], 4 / (5 + 1e-6), 1e-9);
  utils::clip_grad_value_({w}, 0.1);
  EXPECT_EQ(testing::values(w.grad()), (std::vector<double>{0.1, 0.1}));
}

}  // namespace
}  // namespace colony::nn
