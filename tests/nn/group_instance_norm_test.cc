// GroupNorm, InstanceNorm1d/2d and BatchNorm1d as modules: options and torch's defaults, init,
// repr and state-dict names as torch's, the running statistics (InstanceNorm's batch mean of the
// instances' statistics), every error, gradchecks, autocast and CUDA against the CPU. (Values
// against torch: conv_norm_golden_test.cc.)
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

namespace F = functional;
using testing::all_close;
using testing::throws_with;

std::string printed(const Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

std::vector<std::string> keys(const Module& m) {
  std::vector<std::string> k;
  for (const auto& [name, t] : m.state_dict()) k.push_back(name);
  return k;
}

Tensor randn(const Shape& shape, uint64_t seed = 3, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(dtype), &gen);
}

TEST(GroupNormModule, OptionsInitReprAndStateDict) {
  GroupNorm gn(GroupNormOptions(3, 6));
  EXPECT_EQ(printed(gn), "GroupNorm(3, 6, eps=1e-05, affine=True, bias=True)");
  EXPECT_EQ(keys(gn), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_TRUE(testing::matches_values(gn.weight, std::vector<double>(6, 1.0), 0));
  EXPECT_TRUE(testing::matches_values(gn.bias, std::vector<double>(6, 0.0), 0));
  EXPECT_EQ(printed(GroupNorm(GroupNormOptions(3, 6).affine(false))), "GroupNorm(3, 6, eps=1e-05, affine=False, bias=False)");
  EXPECT_TRUE(keys(GroupNorm(GroupNormOptions(3, 6).affine(false))).empty());
  EXPECT_EQ(keys(GroupNorm(GroupNormOptions(3, 6).bias(false))), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(printed(GroupNorm(GroupNormOptions(2, 4).eps(1e-3).bias(false))), "GroupNorm(2, 4, eps=0.001, affine=True, bias=False)");
}

// Each (sample, group) has mean 0 and biased variance 1 / (1 + eps / var) after the norm.
TEST(GroupNormModule, NormalizesEachGroup) {
  GroupNorm gn(GroupNormOptions(2, 4).affine(false));
  Tensor x = raw::add(raw::mul(randn({3, 4, 5}), 3.0), 2.0);
  Tensor y = gn.forward(x);
  Tensor groups = raw::reshape(y, {3, 2, 10});
  EXPECT_TRUE(all_close(raw::mean(groups, {2}), raw::zeros({3, 2}), 0, 1e-5));
  EXPECT_TRUE(all_close(raw::mean(raw::mul(groups, groups), {2}), raw::ones({3, 2}), 1e-4, 1e-4));
}

// The module's forward is F::group_norm with its own weight and bias (given other values than the
// init's ones and zeros, so that each one counts).
TEST(GroupNormModule, ForwardUsesWeightAndBias) {
  GroupNorm gn(GroupNormOptions(2, 4));
  {
    NoGradGuard no_grad;
    raw::copy_(gn.weight, randn({4}, 11));
    raw::copy_(gn.bias, randn({4}, 12));
  }
  Tensor x = randn({3, 4, 5});
  EXPECT_TRUE(all_close(gn.forward(x), F::group_norm(x, F::GroupNormFuncOptions(2).weight(gn.weight).bias(gn.bias)), 0, 0));
}

TEST(GroupNormModule, Errors) {
  EXPECT_TRUE(throws_with([] { GroupNorm(GroupNormOptions(4, 6)); },
                          "GroupNorm: num_channels (6) must be a positive multiple of num_groups (4)"));
  GroupNorm gn(GroupNormOptions(2, 4));
  EXPECT_TRUE(throws_with([&] { gn.forward(randn({2, 6, 3})); }, "GroupNorm: expected input with 4 channels (dim 1), got [2, 6, 3]"));
  EXPECT_TRUE(throws_with([] { F::group_norm(randn({2, 6, 3}), F::GroupNormFuncOptions(4)); },
                          "group_norm: expected the number of channels (6 in input [2, 6, 3]) to be divisible by num_groups (4)"));
  EXPECT_TRUE(throws_with([] { F::group_norm(randn({6}), F::GroupNormFuncOptions(2)); },
                          "group_norm: expected input of at least 2 dims (N, C, *), got [6]"));
  EXPECT_TRUE(throws_with([] { F::group_norm(randn({2, 6, 3}), F::GroupNormFuncOptions(2).weight(randn({3}))); },
                          "group_norm: expected weight of shape [6] (one per channel), got [3]"));
}

TEST(GroupNormModule, Gradcheck) {
  auto f = [](const std::vector<Tensor>& in) { return group_norm(in[0], 3, in[1], in[2], 1e-3); };
  EXPECT_TRUE(testing::gradcheck(f, {testing::strided_input({2, 6, 5}, -1, 1, 1), testing::input({6}, -1, 1, 2),
                                     testing::input({6}, -1, 1, 3)}));
}

// torch lists group_norm in autocast's float32 ops: statistics and output in float32.
TEST(GroupNormModule, Float32UnderAutocast) {
  GroupNorm gn(GroupNormOptions(2, 4));
  Tensor x = raw::to(randn({2, 4, 6}), kCPU, kBFloat16);
  Tensor y;
  {
    AutocastGuard amp(DeviceType::CPU, kBFloat16);
    y = gn.forward(x);
  }
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TRUE(all_close(y, gn.forward(raw::to(x, kCPU, kFloat32)), 1e-6, 1e-6));
}

TEST(InstanceNormModule, DefaultsReprAndStateDict) {
  InstanceNorm1d in1(4);
  EXPECT_EQ(printed(in1), "InstanceNorm1d(4, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)");
  EXPECT_TRUE(keys(in1).empty());
  InstanceNorm2d in2(InstanceNorm2dOptions(4).affine(true).track_running_stats(true));
  EXPECT_EQ(printed(in2), "InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)");
  EXPECT_EQ(keys(in2), (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(keys(InstanceNorm1d(InstanceNorm1dOptions(4).affine(true).bias(false))), (std::vector<std::string>{"weight"}));
}

// Each (sample, channel) normalized over its positions; unbatched input as a batch of one.
TEST(InstanceNormModule, NormalizesEachInstance) {
  InstanceNorm2d norm(3);
  Tensor x = raw::add(raw::mul(randn({2, 3, 4, 5}), 2.0), 1.0);
  Tensor y = norm.forward(x);
  Tensor rows = raw::reshape(y, {6, 20});
  EXPECT_TRUE(all_close(raw::mean(rows, {1}), raw::zeros({6}), 0, 1e-5));
  EXPECT_TRUE(all_close(raw::mean(raw::mul(rows, rows), {1}), raw::ones({6}), 1e-4, 1e-4));
  Tensor one = raw::narrow(x, 0, 1, 1);
  EXPECT_TRUE(all_close(norm.forward(raw::squeeze(one, 0)), raw::squeeze(norm.forward(one), 0), 0, 0));
}

// Training updates the running statistics with the batch mean of the instances' statistics;
// eval mode normalizes with them (batch norm in evaluation).
TEST(InstanceNormModule, RunningStatistics) {
  InstanceNorm1d norm(InstanceNorm1dOptions(2).track_running_stats(true).momentum(0.5));
  Tensor x = randn({3, 2, 6}, 5, kFloat64);
  norm.to(kFloat64);
  norm.forward(x);
  Tensor means = raw::mean(x, {2});                        // [3, 2]
  Tensor vars = raw::var(x, {2});                          // unbiased, [3, 2]
  Tensor rm = raw::mul(raw::mean(means, {0}), 0.5);        // 0.5 * 0 + 0.5 * mean
  Tensor rv = raw::add(raw::mul(raw::mean(vars, {0}), 0.5), 0.5);  // 0.5 * 1 + 0.5 * var
  EXPECT_TRUE(all_close(norm.running_mean, rm, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(norm.running_var, rv, 1e-12, 1e-12));
  norm.eval();
  Tensor expected = F::batch_norm(x, norm.running_mean, norm.running_var);
  EXPECT_TRUE(all_close(norm.forward(x), expected, 0, 0));
}

TEST(InstanceNormModule, Errors) {
  InstanceNorm1d in1(InstanceNorm1dOptions(4).affine(true));
  EXPECT_TRUE(throws_with([&] { in1.forward(randn({2, 4, 3, 3})); },
                          "InstanceNorm1d: expected 2-D (unbatched) or 3-D input, got [2, 4, 3, 3]"));
  EXPECT_TRUE(throws_with([&] { in1.forward(randn({2, 3, 5})); },
                          "InstanceNorm1d: expected input's size at dim=1 to match num_features (4), got [2, 3, 5]"));
  EXPECT_TRUE(throws_with([&] { InstanceNorm2d(2).forward(randn({2, 5})); }, "InstanceNorm2d: expected 3-D (unbatched) or 4-D"));
  EXPECT_TRUE(throws_with([&] { in1.forward(randn({2, 4, 1})); },
                          "instance_norm: expected more than 1 spatial element when training, got input [2, 4, 1]"));
  EXPECT_TRUE(throws_with([] { F::instance_norm(randn({2, 4})); }, "instance_norm: expected input [N, C, *]"));
  // Without affine or running statistics the channel count is free, as torch's.
  EXPECT_EQ(InstanceNorm1d(4).forward(randn({2, 3, 5})).sizes(), (Shape{2, 3, 5}));
}

TEST(InstanceNormModule, Gradcheck) {
  auto f = [](const std::vector<Tensor>& in) {
    return F::instance_norm(in[0], F::InstanceNormFuncOptions().weight(in[1]).bias(in[2]).eps(1e-3));
  };
  EXPECT_TRUE(testing::gradcheck(f, {testing::strided_input({2, 3, 5}, -1, 1, 1), testing::input({3}, -1, 1, 2),
                                     testing::input({3}, -1, 1, 3)}));
}

TEST(BatchNorm1dModule, ReprStateDictShapesAndErrors) {
  BatchNorm1d bn(4);
  EXPECT_EQ(printed(bn), "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)");
  EXPECT_EQ(keys(bn), (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(keys(BatchNorm1d(BatchNorm1dOptions(4).bias(false))),
            (std::vector<std::string>{"weight", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(bn.forward(randn({5, 4})).sizes(), (Shape{5, 4}));
  EXPECT_EQ(bn.forward(randn({5, 4, 3})).sizes(), (Shape{5, 4, 3}));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
  EXPECT_TRUE(throws_with([&] { bn.forward(randn({5, 4, 3, 3})); },
                          "BatchNorm1d: expected 2-D (N,C) or 3-D (N,C,L) input, got [5, 4, 3, 3]"));
  EXPECT_TRUE(throws_with([&] { bn.forward(randn({5, 3})); }, "BatchNorm1d: expected 4 channels, got input [5, 3]"));
  EXPECT_TRUE(throws_with([&] { BatchNorm2d(4).forward(randn({5, 4, 3})); }, "BatchNorm2d: expected 4-D input"));
}

// A weight without a bias (bias(false)): the weight's gradient alone, the right one.
TEST(BatchNorm1dModule, WeightWithoutBiasGetsItsGradient) {
  BatchNorm1d with_bias(BatchNorm1dOptions(3)), without(BatchNorm1dOptions(3).bias(false));
  Tensor x = randn({6, 3});
  Tensor gy = randn({6, 3}, 9);
  sum(mul(with_bias.forward(x), gy)).backward();
  sum(mul(without.forward(x), gy)).backward();
  EXPECT_TRUE(all_close(without.weight.grad(), with_bias.weight.grad(), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(without.forward(x), with_bias.forward(x), 0, 0));
}

TEST(NormModules, MatchTheCpuOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<GroupNorm>(GroupNormOptions(3, 6)); },
                                          randn({2, 6, 4, 5}));
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<InstanceNorm1d>(InstanceNorm1dOptions(4).affine(true).track_running_stats(true)); },
      randn({3, 4, 7}));
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<InstanceNorm2d>(3); }, randn({2, 3, 4, 5}));
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<BatchNorm1d>(4); }, randn({6, 4}));
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<BatchNorm1d>(4); }, randn({3, 4, 5}));
}

}  // namespace
}  // namespace colony::nn
