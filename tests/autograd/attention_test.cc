// Gradient checks of the fused scaled_dot_product_attention (autograd/attention.cc) in float64:
// its backward kernel against finite differences of its forward kernel, over the mask kinds,
// causal with L != S, broadcast and strided operands, a custom scale and dropout (whose mask both
// directions regenerate from one Philox draw: the forward of each finite difference reuses it
// through a generator reseeded to the same state), and grouped-query attention (enable_gqa).
#include <limits>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Attention, PlainAndLNotS) {
  EXPECT_TRUE(gradcheck([](In in) { return scaled_dot_product_attention(in[0], in[1], in[2]); },
                        {input({2, 3, 4}, -1, 1, 1), input({2, 5, 4}, -1, 1, 2), input({2, 5, 3}, -1, 1, 3)}));
}

TEST(Attention, CausalBothWays) {
  for (auto [L, S] : {std::pair<int64_t, int64_t>{6, 4}, {3, 7}, {35, 35}}) {
    EXPECT_TRUE(gradcheck([](In in) { return scaled_dot_product_attention(in[0], in[1], in[2], Tensor(), 0.0, true); },
                          {input({1, 2, L, 3}, -1, 1, 1), input({1, 2, S, 3}, -1, 1, 2), input({1, 2, S, 2}, -1, 1, 3)}))
        << L << " x " << S;
  }
}

TEST(Attention, BoolAndFloatMasksWithAFullyMaskedRow) {
  Tensor keep = raw::full({4, 6}, 1.0, kBool);
  Tensor row = raw::select(keep, 0, 1);
  raw::fill_(row, 0.0);  // query 1 sees nothing: zero output, zero gradient
  Tensor col = raw::select(keep, 1, 4);
  raw::fill_(col, 0.0);
  Tensor additive = raw::mul(raw::rand({2, 1, 4, 6}, kFloat64), 2.0);
  for (const Tensor& mask : {keep, additive}) {
    EXPECT_TRUE(gradcheck([&](In in) { return scaled_dot_product_attention(in[0], in[1], in[2], mask); },
                          {input({2, 2, 4, 3}, -1, 1, 1), input({2, 2, 6, 3}, -1, 1, 2), input({2, 2, 6, 5}, -1, 1, 3)}));
  }
}

TEST(Attention, BroadcastStridedAndScaled) {
  EXPECT_TRUE(gradcheck(
      [](In in) { return scaled_dot_product_attention(in[0], in[1], in[2], Tensor(), 0.0, false, 0.7); },
      {strided_input({2, 3, 5, 4}, -1, 1, 1), input({3, 7, 4}, -1, 1, 2), strided_input({1, 1, 7, 3}, -1, 1, 3)}));
}

TEST(Attention, HeadsCutFromOnePackedProjection) {
  // A GPT's attention: q, k, v split from one [B, T, 3C] projection and viewed as [B, H, T, D]
  // heads, the output turned back to [B, T, C]. The fused op then writes dq, dk, dv into one buffer
  // laid out as the projection, which split's backward takes whole (no cat), and stores its output
  // so that the final transpose is contiguous: the gradient must not notice.
  const int64_t B = 2, T = 5, H = 2, D = 3, C = H * D;
  EXPECT_TRUE(gradcheck(
      [&](In in) {
        std::vector<Tensor> qkv = split(in[0], C, 2);
        auto heads = [&](const Tensor& t) { return transpose(view(t, {B, T, H, D}), 1, 2); };
        Tensor y = scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), Tensor(), 0.0, true);
        return view(contiguous(transpose(y, 1, 2)), {B, T, C});
      },
      {input({B, T, 3 * C}, -1, 1, 1)}));
}

TEST(Attention, DropoutWithTheSameDraw) {
  Generator gen(11);
  const uint64_t offset = gen.offset();
  EXPECT_TRUE(gradcheck(
      [&](In in) {
        gen.set_state(11, offset);  // every evaluation draws the same dropout mask
        return scaled_dot_product_attention(in[0], in[1], in[2], Tensor(), 0.4, false, std::nullopt, false, &gen);
      },
      {input({2, 5, 4}, -1, 1, 1), input({2, 6, 4}, -1, 1, 2), input({2, 6, 3}, -1, 1, 3)}));
}

TEST(Attention, GroupedQueryHeadsMatchEachHeadAlone) {
  // Query head h reads key head h / 2 and value head h / 4 (PyTorch's enable_gqa); each head of the
  // result must equal the attention of that head alone with its key and value heads.
  Tensor q = raw::rand({2, 4, 5, 3}, kFloat64), k = raw::rand({2, 2, 6, 3}, kFloat64);
  Tensor v = raw::rand({2, 1, 6, 2}, kFloat64);
  Tensor mask = lt(raw::rand({5, 6}, kFloat64), raw::full({5, 6}, 0.7, kFloat64));
  for (bool causal : {false, true}) {
    Tensor m = causal ? Tensor() : mask;
    Tensor y = scaled_dot_product_attention(q, k, v, m, 0.0, causal, 0.6, /*enable_gqa=*/true);
    ASSERT_EQ(y.sizes(), (Shape{2, 4, 5, 2}));
    for (int64_t h = 0; h < 4; ++h) {
      Tensor alone = scaled_dot_product_attention(raw::select(q, 1, h), raw::select(k, 1, h / 2), raw::select(v, 1, 0),
                                                  m, 0.0, causal, 0.6);
      EXPECT_TRUE(testing::all_close(raw::select(y, 1, h), alone, 1e-12, 1e-12)) << "head " << h << " causal " << causal;
    }
  }
  EXPECT_TRUE(gradcheck(
      [](In in) { return scaled_dot_product_attention(in[0], in[1], in[2], Tensor(), 0.0, true, std::nullopt, true); },
      {input({1, 4, 5, 3}, -1, 1, 1), input({1, 2, 5, 3}, -1, 1, 2), input({1, 1, 5, 2}, -1, 1, 3)}));
}

TEST(Attention, GroupedQueryErrors) {
  Tensor q = raw::rand({1, 6, 3, 4}, kFloat64);
  Tensor k4 = raw::rand({1, 4, 3, 4}, kFloat64), k2 = raw::rand({1, 2, 3, 4}, kFloat64);
  // 4 key heads do not divide 6 query heads.
  EXPECT_THROW(scaled_dot_product_attention(q, k4, k4, Tensor(), 0.0, false, std::nullopt, true), std::invalid_argument);
  // Without enable_gqa the heads must broadcast, as in PyTorch.
  EXPECT_THROW(scaled_dot_product_attention(q, k2, k2), std::invalid_argument);
  // A 2-D query has no heads dim.
  Tensor q2 = raw::rand({3, 4}, kFloat64);
  EXPECT_THROW(scaled_dot_product_attention(q2, q2, q2, Tensor(), 0.0, false, std::nullopt, true),
               std::invalid_argument);
}

TEST(Attention, NoNodeWhenNothingRequiresGrad) {
  Tensor q = raw::rand({1, 3, 2}, kFloat64);
  EXPECT_FALSE(scaled_dot_product_attention(q, q, q).requires_grad());
}

}  // namespace
}  // namespace colony
