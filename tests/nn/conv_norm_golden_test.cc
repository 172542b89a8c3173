// Conv1d, the transposed convolutions, the 1-D pools, group_norm, instance_norm and 1-D batch_norm
// against torch in float64 (tests/nn/conv_norm_golden.py writes conv_norm_golden.h from the same
// closed-form inputs): the output, its shape, the gradient of every input marked in the script and
// the running statistics after the call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "nn/functional.h"
#include "ops/raw_ops.h"
#include "tests/nn/conv_norm_golden.h"
#include "tests/test_util.h"

namespace colony {
namespace {

namespace F = nn::functional;

// ---- the inputs of conv_norm_golden.py ----------------------------------------------------------

Tensor filled(const Shape& shape, const std::function<double(int64_t)>& f) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<int64_t>(i));
  return raw::from_vector(v, shape, TensorOptions(kFloat64));
}

Tensor wave(const Shape& shape, double a, double b, double s = 1.0) {
  return filled(shape, [=](int64_t i) { return s * std::sin(a * static_cast<double>(i) + b); });
}

Tensor unit(const Shape& shape, double a, double b) {
  return filled(shape, [=](int64_t i) { return 0.05 + 0.9 * (0.5 + 0.5 * std::sin(a * static_cast<double>(i) + b)); });
}

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

const std::vector<double>& golden(const std::string& key) {
  static const std::vector<double> none;
  const auto& values = testing::conv_norm_golden();
  auto it = values.find(key);
  EXPECT_NE(it, values.end()) << "no golden values for " << key;
  return it == values.end() ? none : it->second;
}

// Runs `fn` on leaves made from `inputs` (those in `grads` requiring grad) and compares the output,
// its shape, the gradients of sum(out * wave(out.shape, 0.31, 0.2)) and, for `stats` (the indices of
// running_mean and running_var), the running statistics after the call with torch's.
void expect_golden(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<size_t>& grads,
                   const Fn& fn, std::vector<size_t> stats = {}) {
  SCOPED_TRACE(name);
  std::vector<Tensor> xs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor x = raw::clone(inputs[i]);
    if (std::find(grads.begin(), grads.end(), i) != grads.end()) x.requires_grad_(true);
    xs.push_back(x);
  }
  Tensor out = fn(xs);
  std::vector<double> shape;
  for (int64_t s : out.sizes()) shape.push_back(static_cast<double>(s));
  ASSERT_EQ(shape, golden(name + ".shape"));
  EXPECT_EQ(out.dtype(), kFloat64);
  EXPECT_TRUE(testing::matches_values(out, golden(name + ".out"), 1e-10)) << "output";
  sum(mul(out, wave(out.sizes(), 0.31, 0.2))).backward();
  for (size_t i : grads) {
    ASSERT_TRUE(xs[i].grad().defined()) << "input " << i << " got no gradient";
    EXPECT_TRUE(testing::matches_values(xs[i].grad(), golden(name + ".g" + std::to_string(i)), 1e-10))
        << "gradient of input " << i;
  }
  if (!stats.empty()) {
    EXPECT_TRUE(testing::matches_values(xs[stats[0]], golden(name + ".rm"), 1e-12)) << "running_mean";
    EXPECT_TRUE(testing::matches_values(xs[stats[1]], golden(name + ".rv"), 1e-12)) << "running_var";
  }
}

TEST(ConvNormGolden, Conv1d) {
  expect_golden("conv1d", {wave({2, 4, 11}, 0.7, 0.1), wave({6, 2, 3}, 0.45, 0.3), wave({6}, 0.9, 0.5)}, {0, 1, 2},
                [](const std::vector<Tensor>& x) {
                  return F::conv1d(x[0], x[1], x[2], F::Conv1dFuncOptions().stride(2).padding(2).dilation(2).groups(2));
                });
  expect_golden("conv1d_unbatched", {wave({3, 9}, 0.3, 0.2), wave({5, 3, 4}, 0.55, 0.7)}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::conv1d(x[0], x[1], Tensor(), F::Conv1dFuncOptions().stride(1).padding(1));
                });
}

TEST(ConvNormGolden, ConvTranspose2d) {
  expect_golden("conv_transpose2d",
                {wave({2, 4, 5, 4}, 0.37, 0.1), wave({4, 3, 3, 2}, 0.51, 0.4), wave({6}, 0.8, 0.2)}, {0, 1, 2},
                [](const std::vector<Tensor>& x) {
                  return F::conv_transpose2d(x[0], x[1], x[2],
                                             F::ConvTranspose2dFuncOptions()
                                                 .stride({2, 3})
                                                 .padding({1, 0})
                                                 .output_padding({1, 2})
                                                 .groups(2)
                                                 .dilation({1, 2}));
                });
  expect_golden("conv_transpose2d_plain", {wave({1, 3, 4, 3}, 0.29, 0.6), wave({3, 2, 2, 2}, 0.63, 0.1)}, {0, 1},
                [](const std::vector<Tensor>& x) { return F::conv_transpose2d(x[0], x[1]); });
  expect_golden("conv_transpose2d_unbatched",
                {wave({2, 3, 3}, 0.41, 0.5), wave({2, 3, 3, 3}, 0.27, 0.9), wave({3}, 0.6, 0.1)}, {0, 1, 2},
                [](const std::vector<Tensor>& x) {
                  return F::conv_transpose2d(x[0], x[1], x[2], F::ConvTranspose2dFuncOptions().stride(2).padding(1));
                });
}

TEST(ConvNormGolden, ConvTranspose1d) {
  expect_golden("conv_transpose1d", {wave({2, 3, 7}, 0.33, 0.2), wave({3, 4, 4}, 0.47, 0.8), wave({4}, 0.7, 0.3)},
                {0, 1, 2}, [](const std::vector<Tensor>& x) {
                  return F::conv_transpose1d(x[0], x[1], x[2],
                                             F::ConvTranspose1dFuncOptions().stride(3).padding(1).output_padding(2));
                });
  expect_golden("conv_transpose1d_groups", {wave({2, 4, 6}, 0.23, 0.2), wave({4, 1, 3}, 0.61, 0.5)}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::conv_transpose1d(
                      x[0], x[1], Tensor(),
                      F::ConvTranspose1dFuncOptions().stride(2).padding(2).output_padding(1).groups(2).dilation(3));
                });
}

TEST(ConvNormGolden, Pool1d) {
  expect_golden("max_pool1d", {wave({2, 3, 11}, 0.77, 0.3)}, {0}, [](const std::vector<Tensor>& x) {
    return F::max_pool1d(x[0], F::MaxPool1dFuncOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true));
  });
  expect_golden("max_pool1d_unbatched", {wave({3, 10}, 0.91, 0.1)}, {0},
                [](const std::vector<Tensor>& x) { return F::max_pool1d(x[0], 2); });
  expect_golden("avg_pool1d", {wave({2, 3, 10}, 0.67, 0.4)}, {0}, [](const std::vector<Tensor>& x) {
    return F::avg_pool1d(x[0], F::AvgPool1dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
  });
  expect_golden("avg_pool1d_pad", {wave({2, 2, 9}, 0.67, 0.4)}, {0}, [](const std::vector<Tensor>& x) {
    return F::avg_pool1d(x[0], F::AvgPool1dFuncOptions(4).stride(3).padding(2));
  });
  expect_golden("adaptive_avg_pool1d", {wave({2, 3, 10}, 0.53, 0.7)}, {0},
                [](const std::vector<Tensor>& x) { return F::adaptive_avg_pool1d(x[0], 4); });
}

TEST(ConvNormGolden, GroupNorm) {
  expect_golden("group_norm", {wave({2, 6, 3, 5}, 0.43, 0.1, 2.0), wave({6}, 0.9, 0.4), wave({6}, 0.7, 1.1)}, {0, 1, 2},
                [](const std::vector<Tensor>& x) {
                  return F::group_norm(x[0], F::GroupNormFuncOptions(3).weight(x[1]).bias(x[2]).eps(1e-5));
                });
  expect_golden("group_norm_3d_noaffine", {wave({3, 4, 7}, 0.61, 0.3, 1.5)}, {0},
                [](const std::vector<Tensor>& x) { return F::group_norm(x[0], F::GroupNormFuncOptions(2).eps(1e-3)); });
}

TEST(ConvNormGolden, InstanceNorm) {
  expect_golden("instance_norm_stats",
                {wave({3, 4, 7}, 0.43, 0.2, 2.0), wave({4}, 0.9, 0.4), wave({4}, 0.7, 1.1), wave({4}, 0.3, 0.5),
                 unit({4}, 0.8, 0.2)},
                {0, 1, 2},
                [](const std::vector<Tensor>& x) {
                  return F::instance_norm(x[0], F::InstanceNormFuncOptions()
                                                    .running_mean(x[3])
                                                    .running_var(x[4])
                                                    .weight(x[1])
                                                    .bias(x[2])
                                                    .momentum(0.2)
                                                    .eps(1e-5));
                },
                {3, 4});
  expect_golden("instance_norm2d", {wave({2, 3, 4, 5}, 0.37, 0.6)}, {0},
                [](const std::vector<Tensor>& x) { return F::instance_norm(x[0]); });
  expect_golden("instance_norm_eval", {wave({2, 4, 6}, 0.37, 0.6), wave({4}, 0.3, 0.5), unit({4}, 0.8, 0.2)}, {0},
                [](const std::vector<Tensor>& x) {
                  return F::instance_norm(
                      x[0], F::InstanceNormFuncOptions().running_mean(x[1]).running_var(x[2]).use_input_stats(false));
                });
}

TEST(ConvNormGolden, BatchNorm1d) {
  for (const auto& [name, shape] : {std::pair<std::string, Shape>{"batch_norm1d_2d", {5, 4}},
                                    std::pair<std::string, Shape>{"batch_norm1d_3d", {3, 4, 5}}}) {
    const bool two_d = shape.size() == 2;
    expect_golden(name,
                  {wave(shape, two_d ? 0.43 : 0.29, two_d ? 0.2 : 0.7, 2.0), wave({4}, 0.9, 0.4), wave({4}, 0.7, 1.1),
                   wave({4}, 0.3, 0.5), unit({4}, 0.8, 0.2)},
                  {0, 1, 2},
                  [](const std::vector<Tensor>& x) {
                    return F::batch_norm(x[0], x[3], x[4], x[1], x[2], /*training=*/true, 0.1, 1e-5);
                  },
                  {3, 4});
  }
}

}  // namespace
}  // namespace colony
