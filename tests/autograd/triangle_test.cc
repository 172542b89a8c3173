// Gradient checks of tril and triu (autograd/triangle.cc).
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Triangle, GradientKeepsTheSameTriangle) {
  for (Tensor x : {input({4, 3}), strided_input({4, 3}), input({2, 3, 5})}) {
    for (int64_t diagonal : {-1, 0, 2}) {
      EXPECT_TRUE(gradcheck([&](In in) { return tril(in[0], diagonal); }, {x}));
      EXPECT_TRUE(gradcheck([&](In in) { return in[0].triu(diagonal); }, {x}));
    }
  }
}

}  // namespace
}  // namespace colony
