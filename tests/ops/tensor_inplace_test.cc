// The raw in-place Tensor members (ops/tensor_inplace.cc): values, version bumps, and the
// refusal to write into a leaf that requires grad while grad mode is on.
#include <gtest/gtest.h>

#include <vector>

#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

std::vector<double> V(std::initializer_list<double> v) { return v; }

TEST(TensorInPlace, RawWrites) {
  Tensor a = raw::zeros({2, 2});
  uint32_t v0 = a.version();
  a.fill_(3.0);
  EXPECT_EQ(values(a), V({3, 3, 3, 3}));
  a.copy_(raw::tensor({1, 2}, kInt64));
  EXPECT_EQ(values(a), V({1, 2, 1, 2}));
  a.zero_();
  EXPECT_EQ(values(a), V({0, 0, 0, 0}));
  EXPECT_GE(a.version(), v0 + 3);
}

}  // namespace
}  // namespace colony
