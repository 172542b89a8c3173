// Gradient checks of cumsum (autograd/cumsum.cc).
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Cumsum, GradientIsTheReversedCumsum) {
  for (Tensor x : {input({3, 5}), strided_input({3, 5}), input({2, 3, 4}), input({})}) {
    for (int64_t dim : {0, -1}) {
      EXPECT_TRUE(gradcheck([&](In in) { return cumsum(in[0], dim); }, {x})) << shape_str(x.sizes()) << dim;
    }
  }
  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  x.cumsum(0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 2.0, 1.0})));
}

}  // namespace
}  // namespace colony
