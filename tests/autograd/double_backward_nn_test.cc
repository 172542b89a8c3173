// Double backward through the fused nn ops (layer_norm, rms_norm, group_norm, cross_entropy,
// nll_loss, scaled_dot_product_attention), which are differentiated again through their
// composites (autograd/composite_backward.h), and through the indexing ops and embedding, whose
// backward closures are their adjoints written with differentiable ops. Checked against central
// differences of the first gradients (gradgradcheck), and end to end by MAML's meta-gradient and a
// gradient penalty through a transformer encoder layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "autograd/nn_ops.h"
#include "nn/functional.h"
#include "nn/transformer.h"
#include "tests/autograd/gradcheck.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;

// gradgradcheck checks the composite against itself (its gradients against central differences of
// them); the composite must also be the fused op's function: under create_graph its first gradients
// equal the fused backward's (sum <f, v> for a fixed random v).
::testing::AssertionResult gradgradcheck(const testing::SingleOutputFn& f, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> wrt;
  for (const Tensor& t : inputs) {
    if (t.requires_grad()) wrt.push_back(t);
  }
  Tensor y = f(inputs);
  Generator gen(5);
  const Tensor v = raw::randn(y.sizes(), y.dtype(), &gen);
  const Tensor loss = sum(mul(y, v));
  std::vector<Tensor> fused = autograd::grad({loss}, wrt, {}, /*retain_graph=*/true);
  std::vector<Tensor> composite = autograd::grad({loss}, wrt, {}, std::nullopt, /*create_graph=*/true);
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (!testing::all_close(composite[i], fused[i], 1e-10, 1e-12)) {
      return ::testing::AssertionFailure() << "input " << i << "'s gradient under create_graph differs from the fused "
                                           << "backward's: " << testing::all_close(composite[i], fused[i], 1e-10, 1e-12).message();
    }
  }
  return testing::gradgradcheck(f, inputs);
}

Tensor int64s(std::initializer_list<double> values) { return raw::tensor(values).to(kInt64); }

TEST(DoubleBackwardNn, LayerNormOverOneAndTwoDimsWithAndWithoutAffine) {
  Tensor x = input({3, 2, 4}, -1.0, 1.0, 101), w = input({2, 4}, 0.5, 1.5, 102), b = input({2, 4}, -1.0, 1.0, 103);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {2, 4}, in[1], in[2]); },
                            {x, w, b}));
  Tensor w4 = input({4}, 0.5, 1.5, 104);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {4}, in[1]); }, {x, w4}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {4}, Tensor(), Tensor(), 0.1); },
                            {x}));
}

TEST(DoubleBackwardNn, RmsNormAndGroupNorm) {
  Tensor x = input({3, 5}, -1.0, 1.0, 111), w = input({5}, 0.5, 1.5, 112);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return rms_norm(in[0], {5}, in[1], 1e-3); }, {x, w}));
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return rms_norm(in[0], {5}); }, {x}));
  Tensor img = input({2, 4, 3}, -1.0, 1.0, 113), gw = input({4}, 0.5, 1.5, 114), gb = input({4}, -1.0, 1.0, 115);
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& in) { return group_norm(in[0], 2, in[1], in[2]); },
                            {img, gw, gb}));
}

// The composite's gradients are partial derivatives: an input computed from another (the weight
// from x here) gets only its own, and the engine adds the paths, as for any op.
TEST(DoubleBackwardNn, InputsThatDependOnEachOtherGetTheirOwnPartialDerivatives) {
  Tensor x = input({3, 4}, -1.0, 1.0, 121);
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor weight = add(mean(in[0], {0}), 1.0);
        return layer_norm(mul(in[0], 2.0), {4}, weight, sin(weight));
      },
      {x}));
}

TEST(DoubleBackwardNn, CrossEntropyWithEveryReductionIgnoreIndexAndLabelSmoothing) {
  Tensor logits = input({4, 5}, -2.0, 2.0, 131);
  Tensor target = int64s({1, 4, -100, 0});
  for (auto reduction : {raw::LossReduction::Mean, raw::LossReduction::Sum, raw::LossReduction::None}) {
    for (double smoothing : {0.0, 0.2}) {
      raw::CrossEntropyOptions o;
      o.reduction = reduction;
      o.label_smoothing = smoothing;
      EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return colony::cross_entropy_loss(in[0], target, o); },
                                {logits}))
          << "reduction " << static_cast<int>(reduction) << ", label_smoothing " << smoothing;
    }
  }
}

TEST(DoubleBackwardNn, NllLossOfLogSoftmax) {
  Tensor logits = input({3, 4}, -2.0, 2.0, 141);
  Tensor target = int64s({3, 0, 2});
  raw::CrossEntropyOptions o;
  o.log_probs = true;
  EXPECT_TRUE(gradgradcheck(
      [&](const std::vector<Tensor>& in) { return colony::cross_entropy_loss(log_softmax(mul(in[0], in[0]), 1), target, o); },
      {logits}));
}

TEST(DoubleBackwardNn, AttentionPlainCausalAndMasked) {
  Tensor q = input({2, 3, 4}, -1.0, 1.0, 151), k = input({2, 5, 4}, -1.0, 1.0, 152), v = input({2, 5, 3}, -1.0, 1.0, 153);
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[1], in[2]); }, {q, k, v}));
  Tensor kq = input({2, 3, 4}, -1.0, 1.0, 154), vq = input({2, 3, 3}, -1.0, 1.0, 155);
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[1], in[2], Tensor(), 0.0, true); },
      {q, kq, vq}));
  // A bool mask keeping at least one key per query, and a float mask, both broadcast over the batch.
  Tensor keep = raw::tensor({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0, 0}).to(kBool).reshape({3, 5});
  EXPECT_TRUE(gradgradcheck(
      [&](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[1], in[2], keep, 0.0, false, 0.7); },
      {q, k, v}));
  Tensor bias = input({3, 5}, -1.0, 1.0, 156).detach();
  EXPECT_TRUE(gradgradcheck(
      [&](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[1], in[2], bias); }, {q, k, v}));
}

TEST(DoubleBackwardNn, SelfAttentionWithOneTensorAsQueryKeyAndValue) {
  Tensor x = input({1, 4, 3}, -1.0, 1.0, 161);
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[0], in[0], Tensor(), 0.0, true); },
      {x}));
}

TEST(DoubleBackwardNn, AttentionWithDropoutIsDifferentiableOnce) {
  Tensor q = input({1, 3, 4}, -1.0, 1.0, 171);
  Tensor out = scaled_dot_product_attention(q, q, q, Tensor(), 0.5);
  Tensor d1 = autograd::grad({out.sum()}, {q}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(throws_with([&] { autograd::grad({d1.sum()}, {q}); },
                          "the derivative of ScaledDotProductAttentionBackward is not implemented"));
}

TEST(DoubleBackwardNn, IndexingOpsAndEmbedding) {
  Tensor x = input({4, 3}, -1.0, 1.0, 181);
  Tensor rows = int64s({2, 0, 2, 3, 2});
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return tanh(index_select(in[0], 0, rows)); }, {x}));
  Tensor picks = int64s({0, 2, 1, 1, 0, 0, 2, 2}).reshape({4, 2});
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return square(gather(in[0], 1, picks)); }, {x}));
  Tensor src = input({4, 2}, -1.0, 1.0, 182);
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return sin(scatter_add(Shape{4, 3}, 1, picks, in[0])); },
                            {src}));
  // The index covers a corner of src only: the rest of src gets zero gradient.
  Tensor wide = input({4, 3}, -1.0, 1.0, 183);
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return sin(scatter_add(Shape{4, 3}, 1, picks, in[0])); },
                            {wide}));
  Tensor added = input({5, 3}, -1.0, 1.0, 184);
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return exp(index_add(Shape{4, 3}, 0, rows, in[0])); },
                            {added}));
  Tensor table = input({5, 3}, -1.0, 1.0, 185);
  Tensor tokens = int64s({1, 4, 1, 0, 2, 4}).reshape({2, 3});
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return tanh(embedding(tokens, in[0])); }, {table}));
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return tanh(embedding(tokens, in[0], 4)); }, {table}));
}

// F::interpolate resamples by a matrix product along short dims, by the resample kernel (whose
// adjoint's gradient is the kernel again) along dims over 64, and by index_select for nearest.
TEST(DoubleBackwardNn, InterpolationByMatrixKernelAndNearest) {
  namespace F = nn::functional;
  Tensor small = input({1, 2, 5, 4}, -1.0, 1.0, 231), tall = input({1, 1, 70, 2}, -1.0, 1.0, 232);
  const auto bilinear = F::InterpolateFuncOptions().scale_factor(2.0).mode("bilinear");
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return square(F::interpolate(in[0], bilinear)); },
                            {small}));
  const auto kernel = F::InterpolateFuncOptions().size(std::vector<int64_t>{90, 3}).mode("bicubic").align_corners(true);
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return square(F::interpolate(in[0], kernel)); }, {tall}));
  const auto nearest = F::InterpolateFuncOptions().scale_factor(1.5).mode("nearest-exact");
  EXPECT_TRUE(gradgradcheck([&](const std::vector<Tensor>& in) { return square(F::interpolate(in[0], nearest)); },
                            {small}));
}

// Under create_graph the gradients come from the composite; they equal the fused kernels' to
// rounding, so a first derivative does not depend on whether create_graph was asked for.
TEST(DoubleBackwardNn, CreateGraphGivesTheFusedBackwardsFirstGradients) {
  Tensor x = input({3, 6}, -1.0, 1.0, 191), w = input({6}, 0.5, 1.5, 192), b = input({6}, -1.0, 1.0, 193);
  Tensor target = int64s({5, 0, 2});
  auto loss = [&] {
    return add(colony::cross_entropy_loss(layer_norm(x, {6}, w, b), target, {}), sum(rms_norm(x, {6}, w)));
  };
  std::vector<Tensor> fused = autograd::grad({loss()}, {x, w, b});
  std::vector<Tensor> composite = autograd::grad({loss()}, {x, w, b}, {}, std::nullopt, /*create_graph=*/true);
  for (size_t i = 0; i < fused.size(); ++i) {
    EXPECT_FALSE(fused[i].requires_grad());
    EXPECT_TRUE(composite[i].requires_grad());
    EXPECT_TRUE(testing::all_close(composite[i], fused[i], 1e-13, 1e-13)) << "input " << i;
  }
}

// MAML (Finn et al. 2017): one inner SGD step on a support batch, taken with create_graph, then the
// query loss at the adapted weights; its gradient for the initial weights goes through the inner
// step's gradient, so through cross_entropy's and layer_norm's second derivatives.
TEST(DoubleBackwardNn, MamlMetaGradientMatchesFiniteDifferences) {
  Tensor support = input({6, 3}, -1.0, 1.0, 201).detach(), query = input({5, 3}, -1.0, 1.0, 202).detach();
  Tensor support_y = int64s({0, 1, 2, 1, 0, 2}), query_y = int64s({2, 2, 0, 1, 0});
  Tensor w1 = input({4, 3}, -1.0, 1.0, 203), b1 = input({4}, -0.5, 0.5, 204), w2 = input({3, 4}, -1.0, 1.0, 205);
  auto model = [](const Tensor& x, const Tensor& a, const Tensor& c, const Tensor& d) {
    return linear(gelu(layer_norm(linear(x, a, c), {4})), d);
  };
  auto meta_loss = [&](const std::vector<Tensor>& in) {
    EnableGradGuard grad_mode;  // gradcheck evaluates perturbed weights under no-grad
    std::vector<Tensor> params;
    for (const Tensor& p : in) params.push_back(p.requires_grad() ? p : p.detach().requires_grad_(true));
    Tensor inner = colony::cross_entropy_loss(model(support, params[0], params[1], params[2]), support_y, {});
    std::vector<Tensor> g = autograd::grad({inner}, params, {}, std::nullopt, /*create_graph=*/true);
    std::vector<Tensor> adapted;
    for (size_t i = 0; i < params.size(); ++i) adapted.push_back(sub(params[i], mul(g[i], 0.5)));
    return colony::cross_entropy_loss(model(query, adapted[0], adapted[1], adapted[2]), query_y, {});
  };
  EXPECT_TRUE(gradcheck(meta_loss, {w1, b1, w2}));
}

// A gradient penalty through a whole pre-norm transformer encoder layer (attention, layer norms,
// GELU feed-forward): the penalty's weight gradients need every op's second derivative.
TEST(DoubleBackwardNn, GradientPenaltyThroughATransformerEncoderLayer) {
  auto layer = std::make_shared<nn::TransformerEncoderLayer>(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).batch_first(true).norm_first(true).activation(
          "gelu"));
  layer->to(kFloat64);
  Tensor x = input({2, 3, 4}, -1.0, 1.0, 211);
  std::vector<Tensor> params = layer->parameters();
  auto penalty = [&](const std::vector<Tensor>& in) {
    EnableGradGuard grad_mode;
    Tensor xs = in[0].requires_grad() ? in[0] : in[0].detach().requires_grad_(true);
    Tensor y = layer->forward(xs);
    Tensor g = autograd::grad({square(y).sum()}, {xs}, {}, std::nullopt, /*create_graph=*/true)[0];
    return square(g).sum();
  };
  // The input's second derivatives, and the first parameter's (the attention's in_proj weight).
  EXPECT_TRUE(gradcheck(penalty, {x}));
  Tensor d = autograd::grad({penalty({x})}, {params[0]})[0];
  ASSERT_TRUE(d.defined());
  double largest = 0.0;
  for (double v : testing::values(d)) largest = std::max(largest, std::abs(v));
  EXPECT_GT(largest, 0.0);
}

// The composites run on whatever device their inputs are: a gradient penalty's gradients through
// layer_norm, cross_entropy and causal attention on CUDA equal the CPU's (float32).
TEST(DoubleBackwardNn, SecondDerivativesOnCudaEqualTheCpus_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  auto penalty_gradients = [](Device device) {
    Tensor x = to(input({4, 6}, -1.0, 1.0, 221).detach(), device, kFloat32).requires_grad_(true);
    Tensor w = to(input({6}, 0.5, 1.5, 222).detach(), device, kFloat32).requires_grad_(true);
    Tensor target = to(int64s({5, 0, 2, -100}), device, kInt64);
    Tensor seq = reshape(mul(x, w), {2, 2, 6});
    Tensor loss = add(colony::cross_entropy_loss(layer_norm(x, {6}, w), target, {}),
                      sum(square(scaled_dot_product_attention(seq, seq, seq, Tensor(), 0.0, true))));
    std::vector<Tensor> g = autograd::grad({loss}, {x, w}, {}, std::nullopt, /*create_graph=*/true);
    return autograd::grad({add(square(g[0]).sum(), square(g[1]).sum())}, {x, w});
  };
  std::vector<Tensor> cpu = penalty_gradients(Device()), cuda = penalty_gradients(Device::cuda(0));
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_TRUE(testing::all_close(to(cuda[i], Device(), kFloat32), cpu[i], 1e-4, 1e-5)) << "input " << i;
  }
}

}  // namespace
}  // namespace colony
