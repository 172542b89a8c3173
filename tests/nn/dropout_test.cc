// Channel dropout (F::dropout1d/2d/3d), alpha dropout (F::alpha_dropout, feature_alpha_dropout),
// F::gumbel_softmax and their modules (nn/dropout.h): which elements are dropped together, the
// scaling, the statistics alpha dropout keeps, the gradient through the kept elements, eval mode,
// in-place, printing and the refusals.
#include "nn/dropout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

// For each (n, c) of out [N, C, L...] (flattened per channel), whether the whole channel is zero or
// the whole channel equals input * scale: channel dropout's one draw per channel.
void expect_whole_channels(const Tensor& input, const Tensor& out, int64_t channels_total, double scale,
                           int64_t* dropped) {
  std::vector<double> x = values(input), y = values(out);
  const size_t per = x.size() / static_cast<size_t>(channels_total);
  *dropped = 0;
  for (int64_t ch = 0; ch < channels_total; ++ch) {
    bool all_zero = true, all_scaled = true;
    for (size_t i = 0; i < per; ++i) {
      const double v = y[ch * per + i];
      all_zero = all_zero && v == 0;
      all_scaled = all_scaled && std::abs(v - x[ch * per + i] * scale) <= 1e-6 * (1 + std::abs(v));
    }
    EXPECT_TRUE(all_zero || all_scaled) << "channel " << ch << " was neither dropped nor kept whole";
    *dropped += all_zero ? 1 : 0;
  }
}

TEST(ChannelDropout, DropsWholeChannelsAndScalesTheRest) {
  Generator gen(11);
  const double p = 0.4;
  Tensor x = raw::add(raw::rand({8, 16, 5}, TensorOptions(kFloat32), &gen), 0.5);  // no zeros of its own
  int64_t dropped = 0;
  expect_whole_channels(x, F::dropout1d(x, F::DropoutFuncOptions().p(p), &gen), 8 * 16, 1 / (1 - p), &dropped);
  EXPECT_GT(dropped, 128 * 0.25);
  EXPECT_LT(dropped, 128 * 0.55);
  Tensor x4 = raw::add(raw::rand({4, 16, 3, 3}, TensorOptions(kFloat32), &gen), 0.5);
  expect_whole_channels(x4, F::dropout2d(x4, F::DropoutFuncOptions().p(p), &gen), 64, 1 / (1 - p), &dropped);
  Tensor x5 = raw::add(raw::rand({2, 16, 2, 2, 2}, TensorOptions(kFloat32), &gen), 0.5);
  expect_whole_channels(x5, F::dropout3d(x5, F::DropoutFuncOptions().p(p), &gen), 32, 1 / (1 - p), &dropped);
  // Unbatched inputs: [C, L], [C, H, W] for 3d's [C, D, H, W].
  Tensor u = raw::add(raw::rand({16, 7}, TensorOptions(kFloat32), &gen), 0.5);
  expect_whole_channels(u, F::dropout1d(u, F::DropoutFuncOptions().p(p), &gen), 16, 1 / (1 - p), &dropped);
  Tensor u3 = raw::add(raw::rand({16, 2, 2, 2}, TensorOptions(kFloat32), &gen), 0.5);
  EXPECT_EQ(F::dropout3d(u3, F::DropoutFuncOptions().p(p), &gen).sizes(), (Shape{16, 2, 2, 2}));
  // dropout2d of a 3-D input drops per (dim 0, dim 1) pair, as torch's [N, C, L] reading.
  Tensor x3 = raw::add(raw::rand({4, 8, 6}, TensorOptions(kFloat32), &gen), 0.5);
  expect_whole_channels(x3, F::dropout2d(x3, F::DropoutFuncOptions().p(p), &gen), 32, 1 / (1 - p), &dropped);
}

TEST(ChannelDropout, GradientIsTheMaskAndEvalIsTheIdentity) {
  Generator gen(3);
  Tensor x = raw::add(raw::rand({4, 8, 5}, TensorOptions(kFloat64), &gen), 0.5);
  x.requires_grad_(true);
  Tensor y = F::dropout1d(x, F::DropoutFuncOptions().p(0.5), &gen);
  sum(y).backward();
  // d y / d x is y / x per element: 2 where kept, 0 where dropped.
  std::vector<double> g = values(x.grad()), out = values(y), in = values(x);
  for (size_t i = 0; i < g.size(); ++i) EXPECT_DOUBLE_EQ(g[i], out[i] == 0 ? 0.0 : 2.0);
  Tensor e = raw::randn({2, 3, 4});
  EXPECT_TRUE(F::dropout2d(raw::randn({2, 3, 4, 4}), F::DropoutFuncOptions().training(false)).defined());
  EXPECT_EQ(values(F::dropout1d(e, F::DropoutFuncOptions().p(0.9).training(false))), values(e));
  EXPECT_EQ(values(F::dropout1d(e, F::DropoutFuncOptions().p(1.0))), std::vector<double>(24, 0.0));
  Dropout2d module(Dropout2dOptions(0.7));
  module.eval();
  Tensor img = raw::randn({2, 3, 4, 4});
  EXPECT_EQ(values(module.forward(img)), values(img));
}

TEST(AlphaDropout, KeepsZeroMeanAndUnitVarianceOfStandardInputs) {
  Generator gen(5);
  const double p = 0.3;
  Tensor x = raw::randn({200000}, TensorOptions(kFloat64), &gen);
  Tensor y = F::alpha_dropout(x, F::AlphaDropoutFuncOptions(p).training(true), &gen);
  std::vector<double> v = values(y);
  double mean = 0, sq = 0;
  for (double e : v) mean += e;
  mean /= static_cast<double>(v.size());
  for (double e : v) sq += (e - mean) * (e - mean);
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(sq / static_cast<double>(v.size()), 1.0, 0.02);
  // Dropped elements all take one value, alpha' a (p - 1) (ATen's constants).
  const double alpha = 1.7580993408473766, a = 1 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  const double dropped_value = -alpha * a + alpha * a * p;
  std::vector<double> xs = values(x);
  int64_t dropped = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::abs(v[i] - dropped_value) < 1e-12 && std::abs(v[i] - (a * xs[i] + alpha * a * p)) > 1e-9) ++dropped;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / static_cast<double>(v.size()), p, 0.01);
  // Not in training (the function's default): the identity.
  EXPECT_EQ(values(F::alpha_dropout(x, F::AlphaDropoutFuncOptions(p))), xs);
}

TEST(AlphaDropout, FeatureFormDropsWholeChannels) {
  Generator gen(9);
  const double p = 0.5, alpha = 1.7580993408473766, a = 1 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  Tensor x = raw::randn({6, 10, 7}, TensorOptions(kFloat64), &gen);
  std::vector<double> y = values(F::feature_alpha_dropout(x, F::AlphaDropoutFuncOptions(p).training(true), &gen));
  std::vector<double> xs = values(x);
  int64_t dropped = 0;
  for (int64_t ch = 0; ch < 60; ++ch) {
    bool all_dropped = true, all_kept = true;
    for (int64_t i = 0; i < 7; ++i) {
      const size_t k = static_cast<size_t>(ch * 7 + i);
      all_dropped = all_dropped && std::abs(y[k] - (alpha * a * p - alpha * a)) < 1e-12;
      all_kept = all_kept && std::abs(y[k] - (a * xs[k] + alpha * a * p)) < 1e-12;
    }
    EXPECT_TRUE(all_dropped || all_kept) << "channel " << ch;
    dropped += all_dropped ? 1 : 0;
  }
  EXPECT_GT(dropped, 10);
  EXPECT_LT(dropped, 50);
}

TEST(GumbelSoftmax, SoftSamplesAreDistributionsAndHardOnesAreOneHotWithSoftGradients) {
  Generator gen(21);
  Tensor logits = raw::randn({5, 6}, TensorOptions(kFloat64), &gen);
  logits.requires_grad_(true);
  Tensor soft = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5), &gen);
  std::vector<double> s = values(soft);
  for (int64_t r = 0; r < 5; ++r) {
    double total = 0;
    for (int64_t c = 0; c < 6; ++c) total += s[r * 6 + c];
    EXPECT_NEAR(total, 1.0, 1e-12);
  }
  Tensor hard = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().hard(true), &gen);
  std::vector<double> h = values(hard);
  for (int64_t r = 0; r < 5; ++r) {
    int64_t ones = 0;
    for (int64_t c = 0; c < 6; ++c) ones += h[r * 6 + c] == 1.0 ? 1 : 0;
    EXPECT_EQ(ones, 1) << "row " << r;
  }
  // Straight-through: sum(hard * w) has the soft sample's gradient, which is not zero.
  sum(mul(hard, raw::arange(0, 30, 1, TensorOptions(kFloat64)).reshape({5, 6}))).backward();
  double magnitude = 0;
  for (double g : values(logits.grad())) magnitude += std::abs(g);
  EXPECT_GT(magnitude, 0.0);
  // Samples follow the softmax of the logits: the argmax frequencies of a 3-way draw.
  Tensor three = raw::log(raw::tensor({0.2, 0.3, 0.5}, kFloat64)).reshape({1, 3}).expand({20000, 3});
  std::vector<double> draws = values(F::gumbel_softmax(three, F::GumbelSoftmaxFuncOptions().hard(true), &gen));
  double freq[3] = {0, 0, 0};
  for (size_t i = 0; i < draws.size(); ++i) freq[i % 3] += draws[i];
  EXPECT_NEAR(freq[0] / 20000, 0.2, 0.015);
  EXPECT_NEAR(freq[2] / 20000, 0.5, 0.015);
}

TEST(DropoutModules, PrintAsPyTorchAndRefuseBadInput) {
  EXPECT_EQ(Dropout1d(Dropout1dOptions(0.3)).repr(), "Dropout1d(p=0.3, inplace=False)");
  EXPECT_EQ(Dropout2d().repr(), "Dropout2d(p=0.5, inplace=False)");
  EXPECT_EQ(Dropout3d(Dropout3dOptions(0.1).inplace(true)).repr(), "Dropout3d(p=0.1, inplace=True)");
  EXPECT_EQ(AlphaDropout(AlphaDropoutOptions(0.2)).repr(), "AlphaDropout(p=0.2, inplace=False)");
  EXPECT_EQ(FeatureAlphaDropout(FeatureAlphaDropoutOptions(0.1).inplace(true)).repr(),
            "FeatureAlphaDropout(p=0.1, inplace=True)");
  EXPECT_TRUE(throws_with([] { Dropout2d(Dropout2dOptions(1.5)); },
                          "Dropout2d: dropout probability has to be between 0 and 1, but got 1.5"));
  EXPECT_TRUE(throws_with([] { Dropout(DropoutOptions(-0.1)); }, "Dropout: dropout probability has to be between 0 and 1"));
  EXPECT_TRUE(throws_with([] { F::dropout1d(raw::ones({2, 3, 4, 5})); }, "dropout1d: Expected 2D or 3D input, but received a 4D input"));
  EXPECT_TRUE(throws_with([] { F::dropout3d(raw::ones({2, 3, 4})); }, "dropout3d: Expected 4D or 5D input"));
  EXPECT_TRUE(throws_with([] { F::alpha_dropout(raw::ones({2}), F::AlphaDropoutFuncOptions(2.0)); },
                          "probability has to be between 0 and 1"));
  EXPECT_TRUE(throws_with([] { F::feature_alpha_dropout(raw::ones({3}), F::AlphaDropoutFuncOptions().training(true)); },
                          "at least 2 dims"));
  EXPECT_TRUE(throws_with([] { F::gumbel_softmax(raw::ones({3}), F::GumbelSoftmaxFuncOptions().tau(0)); }, "tau must be positive"));
  // In-place: the result is written into the input, and the module's forward returns it.
  Tensor x = raw::add(raw::rand({2, 4, 3}), 0.5);
  Dropout1d drop(Dropout1dOptions(0.5).inplace(true));
  Tensor y = drop.forward(x);
  EXPECT_EQ(values(y), values(x));
}

}  // namespace
}  // namespace colony::nn
