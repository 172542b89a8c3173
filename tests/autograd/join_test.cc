// Gradient checks of cat, stack, split, split_with_sizes and chunk (autograd/join.cc).
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::gradcheck_multi;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Join, Cat) {
  for (int64_t dim : {0, 1, -1}) {
    EXPECT_TRUE(gradcheck([&](In in) { return cat({in[0], in[1], in[2]}, dim); },
                          {input({2, 3}, -1, 1, 1), strided_input({2, 3}, -1, 1, 2), input({2, 3}, -1, 1, 3)}));
  }
  EXPECT_TRUE(gradcheck([](In in) { return cat({in[0], in[1]}, 1); }, {input({2, 1}, -1, 1, 1), input({2, 4})}));
}

TEST(Join, CatWithConstantOperand) {
  Tensor c = input({2, 2}).detach();
  EXPECT_TRUE(gradcheck([&](In in) { return cat({c, in[0], c}, 0); }, {input({1, 2})}));
}

TEST(Join, Stack) {
  for (int64_t dim : {0, 1, 2, -1}) {
    EXPECT_TRUE(gradcheck([&](In in) { return stack({in[0], in[1]}, dim); },
                          {input({2, 3}, -1, 1, 1), strided_input({2, 3}, -1, 1, 2)}));
  }
}

TEST(Join, Split) {
  for (Tensor x : {input({5, 4}), strided_input({5, 4})}) {
    EXPECT_TRUE(gradcheck_multi([](In in) { return split(in[0], 2, 0); }, {x}));
    EXPECT_TRUE(gradcheck_multi([](In in) { return in[0].split(3, 1); }, {x}));
    EXPECT_TRUE(gradcheck_multi([](In in) { return split_with_sizes(in[0], {1, 4}, 0); }, {x}));
    EXPECT_TRUE(gradcheck_multi([](In in) { return chunk(in[0], 2, -1); }, {x}));
  }
}

TEST(Join, SplitWithSomePiecesUnused) {
  EXPECT_TRUE(gradcheck([](In in) { return split(in[0], 2, 0)[1] * 3.0; }, {input({5, 2})}));
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0}, TensorOptions().requires_grad(true));
  std::vector<Tensor> parts = chunk(x, 3);
  ASSERT_EQ(parts.size(), 3u);
  (parts[0].sum() + parts[2].sum() * 2.0).backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0, 1.0, 0.0, 0.0, 2.0})));
}

TEST(Join, SplitBackwardJoinsAdjacentGradientsInPlaceAndOthersByCopy) {
  // Gradients that are adjacent views of one buffer (as attention hands back dq, dk, dv) are the
  // input's gradient as they stand; views of a buffer in another order, or overlapping, are
  // concatenated. Either way the values are the pieces' gradients side by side.
  Tensor buffer = raw::reshape(raw::arange(0, 24, 1, TensorOptions(kFloat64)), {2, 3, 4});
  auto run = [&](int64_t first, int64_t second) {
    Tensor x = raw::zeros({2, 3, 4}, kFloat64);
    x.requires_grad_(true);
    std::vector<Tensor> parts = split(x, 2, 2);
    autograd::backward(parts, {raw::narrow(buffer, 2, first, 2), raw::narrow(buffer, 2, second, 2)});
    return x.grad();
  };
  EXPECT_TRUE(all_close(run(0, 2), buffer, 0.0, 0.0));
  Tensor swapped = raw::cat({raw::narrow(buffer, 2, 2, 2), raw::narrow(buffer, 2, 0, 2)}, 2);
  EXPECT_TRUE(all_close(run(2, 0), swapped, 0.0, 0.0));
  Tensor twice = raw::cat({raw::narrow(buffer, 2, 1, 2), raw::narrow(buffer, 2, 1, 2)}, 2);
  EXPECT_TRUE(all_close(run(1, 1), twice, 0.0, 0.0));
}

}  // namespace
}  // namespace colony
