// AdamW's own options (weight decay 1e-2 by default) and betas as a pair.
#include <gtest/gtest.h>

#include <type_traits>

#include "autograd/ops.h"
#include "optim/adam.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

TEST(AdamWOptions, WeightDecayDefaultsToPyTorchs) {
  EXPECT_DOUBLE_EQ(AdamWOptions().weight_decay(), 1e-2);
  EXPECT_DOUBLE_EQ(AdamWOptions(0.1).lr(), 0.1);
  EXPECT_DOUBLE_EQ(AdamOptions().weight_decay(), 0.0);
  // AdamW cannot be built from AdamOptions (a static_assert names AdamWOptions); from AdamWOptions
  // and from a learning rate it can.
  static_assert(std::is_constructible_v<AdamW, std::vector<Tensor>, AdamWOptions>);
  static_assert(std::is_convertible_v<double, AdamWOptions>);
}

TEST(AdamW, DefaultOptionsDecayTheWeights) {
  // With a zero gradient Adam's step is 0, so the only change is the decoupled decay:
  // p *= 1 - lr * weight_decay = 1 - 1e-3 * 1e-2.
  Tensor w = raw::ones({3}, kFloat64);
  w.requires_grad_(true);
  AdamW opt({w});
  w.mutable_grad() = raw::zeros({3}, kFloat64);
  opt.step();
  EXPECT_TRUE(testing::all_close(w.detach(), raw::full({3}, 1.0 - 1e-5, kFloat64), 1e-15));
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options.as<AdamWOptions>().weight_decay(), 1e-2);
}

TEST(AdamOptions, BetasTakeAPair) {
  AdamOptions o = AdamOptions().betas({0.8, 0.95});
  EXPECT_DOUBLE_EQ(o.beta1(), 0.8);
  EXPECT_DOUBLE_EQ(o.beta2(), 0.95);
  EXPECT_EQ(AdamWOptions().betas(std::make_pair(0.5, 0.6)).betas(), std::make_pair(0.5, 0.6));
}

}  // namespace
}  // namespace colony::optim
