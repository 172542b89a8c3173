// AveragedModel against torch.optim.swa_utils.AveragedModel (swa_golden.py writes swa_golden.h):
// the running mean of parameters, with and without the buffers, and the two EMA averages; its
// state_dict names, forward, and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "nn/batchnorm.h"
#include "nn/containers.h"
#include "nn/linear.h"
#include "ops/raw_ops.h"
#include "optim/swa_utils.h"
#include "tensor/grad_mode.h"
#include "tests/optim/swa_golden.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

constexpr int kRounds = 4;

std::shared_ptr<nn::Sequential> net() {
  auto s = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(3, 2),
                                            std::make_shared<nn::BatchNorm1d>(nn::BatchNorm1dOptions(2)));
  s->to(kFloat64);
  return s;
}

Tensor wave(const Shape& shape, int k) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + 1.3 * k + 0.2);
  return raw::from_vector(v, shape);
}

// swa_golden.py's rounds: set the model, update, record the averaged state and n_averaged.
std::vector<double> run(const AvgFn& avg_fn, bool use_buffers) {
  auto model = net();
  AveragedModel swa(model, net(), avg_fn, use_buffers);
  std::vector<double> out;
  for (int k = 0; k < kRounds; ++k) {
    {
      NoGradGuard no_grad;
      std::vector<Tensor> tensors = model->parameters();
      for (const Tensor& b : model->buffers()) tensors.push_back(b);
      for (size_t i = 0; i < tensors.size(); ++i) {
        Tensor t = tensors[i];
        if (t.dtype() == kInt64) {
          raw::fill_(t, 3.0 * k + 1);
        } else {
          raw::copy_(t, wave(t.shape(), 10 * k + static_cast<int>(i)));
        }
      }
    }
    swa.update_parameters(*model);
    for (const auto& [name, t] : swa.module()->state_dict()) {
      for (double v : values(raw::to(t, kCPU, kFloat64))) out.push_back(v);
    }
    out.push_back(static_cast<double>(swa.n_averaged()));
  }
  return out;
}

void expect_golden(const std::string& name, const AvgFn& avg_fn, bool use_buffers) {
  const std::vector<double>& want = testing::swa_golden().at(name);
  const std::vector<double> got = run(avg_fn, use_buffers);
  ASSERT_EQ(got.size(), want.size()) << name;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-15 + 1e-14 * std::abs(want[i])) << name << " " << i;
}

TEST(AveragedModel, RunningMeanMatchesTorch) { expect_golden("swa", nullptr, false); }
TEST(AveragedModel, RunningMeanOfBuffersTooMatchesTorch) { expect_golden("swa_buffers", nullptr, true); }
TEST(AveragedModel, EmaAvgFnMatchesTorch) { expect_golden("ema_avg_fn", ema_avg_fn(0.8), true); }
TEST(AveragedModel, EmaMultiAvgFnMatchesTorch) { expect_golden("ema_multi_avg_fn", ema_multi_avg_fn(0.9), false); }
TEST(AveragedModelGoldenCases, MatchTheScriptsCases) { EXPECT_EQ(testing::swa_golden().size(), 5u); }

// The plain average of three batches' statistics, as torch's momentum=None; the module's momentum
// and the model's mode come back.
TEST(UpdateBn, AveragesTheBatchStatisticsAsTorch) {
  auto bn = std::make_shared<nn::BatchNorm1d>(nn::BatchNorm1dOptions(4).momentum(0.3));
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(3, 4), bn);
  model->to(kFloat64);
  {
    NoGradGuard no_grad;
    const std::vector<Tensor> params = model->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor p = params[i];
      raw::copy_(p, wave(p.shape(), static_cast<int>(i)));
    }
  }
  std::vector<Tensor> batches;
  for (int b = 0; b < 3; ++b) batches.push_back(raw::mul(wave({5, 3}, 20 + b), static_cast<double>(b + 1)));
  model->eval();
  update_bn(batches, *model);
  std::vector<double> got = values(bn->running_mean);
  for (double v : values(bn->running_var)) got.push_back(v);
  got.push_back(static_cast<double>(bn->num_batches_tracked.item<int64_t>()));
  const std::vector<double>& want = testing::swa_golden().at("update_bn");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-13 * (1 + std::abs(want[i]))) << i;
  EXPECT_EQ(bn->options.momentum(), 0.3);
  EXPECT_FALSE(model->is_training());
  nn::Linear plain(3, 2);
  update_bn(batches, plain);  // no batch norm: nothing to do, as torch
}

// torch's state_dict keys ("module.<name>", "n_averaged"); the copy starts as the model and
// forward runs the averaged copy.
TEST(AveragedModel, StateDictNamesAndForward) {
  auto model = net();
  auto copy = net();
  AveragedModel swa(model, copy);
  std::vector<std::string> names;
  for (const auto& [n, t] : swa.state_dict()) names.push_back(n);
  EXPECT_EQ(names.front(), "n_averaged");
  EXPECT_NE(std::find(names.begin(), names.end(), "module.0.weight"), names.end());
  EXPECT_EQ(values(copy->parameters()[0]), values(model->parameters()[0]));
  model->eval();
  swa.eval();
  Tensor x = raw::to(wave({4, 3}, 1), kCPU, kFloat64);
  EXPECT_EQ(values(swa.forward(x)), values(model->forward(x)));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { AveragedModel(model, model); }, "is the model itself"));
  auto other = std::make_shared<nn::Linear>(3, 2);
  AveragedModel mismatched(other, std::make_shared<nn::Linear>(3, 2));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { mismatched.update_parameters(*model); }, "tensors to average"));
}

}  // namespace
}  // namespace colony::optim
