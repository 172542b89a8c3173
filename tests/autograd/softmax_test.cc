// Gradient checks of softmax and log_softmax (autograd/softmax.cc).
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Softmax, Softmax) {
  for (Tensor x : {input({3, 4}, -2, 2), strided_input({3, 4}, -2, 2), input({2, 3, 4}, -2, 2)}) {
    for (int64_t dim : {0, 1, -1}) {
      EXPECT_TRUE(gradcheck([&](In in) { return softmax(in[0], dim); }, {x})) << "dim " << dim;
    }
  }
}

TEST(Softmax, LogSoftmax) {
  for (Tensor x : {input({3, 4}, -2, 2), strided_input({3, 4}, -2, 2), input({2, 3, 4}, -2, 2)}) {
    for (int64_t dim : {0, 1, -1}) {
      EXPECT_TRUE(gradcheck([&](In in) { return log_softmax(in[0], dim); }, {x})) << "dim " << dim;
    }
  }
}

TEST(Softmax, CrossEntropyComposition) {
  // -mean(log_softmax(x)[target]): the loss F::cross_entropy builds from these ops.
  Tensor target = raw::tensor({2, 0, 1}, kInt64).unsqueeze(1);
  EXPECT_TRUE(gradcheck(
      [&](In in) { return neg(mean(gather(log_softmax(in[0], 1), 1, target))); }, {input({3, 4}, -2, 2)}));
}

TEST(Softmax, TensorMembers) {
  EXPECT_TRUE(gradcheck([](In in) { return in[0].softmax(1); }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].log_softmax(0); }, {input({2, 3})}));
}

}  // namespace
}  // namespace colony
