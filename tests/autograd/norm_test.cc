// layer_norm, rms_norm and embedding (autograd/norm.cc): gradients by finite differences in float64,
// with and without the affine parameters, normalizing over one and over two trailing dims, and with
// a strided input.
#include <gtest/gtest.h>

#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;

TEST(NormGrad, LayerNormAllInputs) {
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return layer_norm(x[0], {5}, x[1], x[2], 1e-5); },
                        {input({3, 4, 5}, -2, 2, 1), input({5}, 0.5, 1.5, 2), input({5}, -1, 1, 3)}));
}

TEST(NormGrad, LayerNormOverTwoDimsAndStrided) {
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return layer_norm(x[0], {3, 4}, x[1], x[2], 1e-3); },
                        {strided_input({2, 3, 4}, -1, 1, 4), input({3, 4}, 0.5, 1.5, 5), input({3, 4}, -1, 1, 6)}));
}

TEST(NormGrad, LayerNormWithoutAffineAndWeightOnly) {
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return layer_norm(x[0], {6}); }, {input({4, 6}, -1, 1, 7)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return layer_norm(x[0], {6}, x[1], Tensor()); },
                        {input({4, 6}, -1, 1, 8), input({6}, 0.5, 1.5, 9)}));
  // Only the bias requiring grad: the node returns a gradient for it alone.
  Tensor x = input({4, 6}, -1, 1, 10).detach();
  EXPECT_TRUE(gradcheck([x](const std::vector<Tensor>& b) { return layer_norm(x, {6}, Tensor(), b[0]); },
                        {input({6}, -1, 1, 11)}));
}

TEST(NormGrad, RmsNorm) {
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return rms_norm(x[0], {5}, x[1], 1e-6); },
                        {input({3, 4, 5}, -2, 2, 12), input({5}, 0.5, 1.5, 13)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return rms_norm(x[0], {2, 5}); },
                        {strided_input({3, 2, 5}, -1, 1, 14)}));
}

TEST(NormGrad, LayerNormRowsSpanningSeveralBlocks) {
  // 150 rows: the CPU backward sums dweight/dbias over blocks of 64 rows, then across the blocks.
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return layer_norm(x[0], {3}, x[1], x[2]); },
                        {input({150, 3}, -1, 1, 15), input({3}, 0.5, 1.5, 16), input({3}, -1, 1, 17)}));
}

TEST(NormGrad, EmbeddingWithRepeatsAndPadding) {
  Tensor idx = raw::from_vector(std::vector<int64_t>{1, 3, 1, 0, 3, 3}, {2, 3});
  EXPECT_TRUE(gradcheck([idx](const std::vector<Tensor>& w) { return embedding(idx, w[0]); }, {input({4, 3}, -1, 1, 18)}));
  // padding_idx 3: the three uses of row 3 contribute nothing to its gradient.
  Tensor w = input({4, 3}, -1, 1, 19);
  Tensor out = embedding(idx, w, 3);
  sum(out).backward();
  std::vector<double> g = testing::values(w.grad());
  const std::vector<double> expected = {1, 1, 1, 2, 2, 2, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(g, expected);
}

}  // namespace
}  // namespace colony
