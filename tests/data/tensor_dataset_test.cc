#include "data/tensor_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "data/dataloader.h"
#include "data/sampler.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

// Example i: data {i, 10 i}, target i % 3.
TensorDataset numbers(int64_t n) {
  std::vector<float> d;
  std::vector<int64_t> t;
  for (int64_t i = 0; i < n; ++i) {
    d.push_back(static_cast<float>(i));
    d.push_back(static_cast<float>(10 * i));
    t.push_back(i % 3);
  }
  return TensorDataset(raw::from_vector(d, {n, 2}), raw::from_vector(t));
}

TEST(TensorDataset, IndexesAlongTheFirstDimension) {
  TensorDataset ds = numbers(5);
  EXPECT_EQ(ds.size(), 5);
  EXPECT_EQ(ds.example_shape(), (Shape{2}));
  Example e = ds.get(4);
  EXPECT_EQ(values(e.data), (std::vector<double>{4, 40}));
  EXPECT_EQ(e.target.item<int64_t>(), 1);
  EXPECT_TRUE(throws_with([&] { ds.get(5); }, "out of range"));
}

TEST(TensorDataset, BatchesThroughTheDataLoaderWithASampler) {
  RandomSampler sampler(10, 3);
  DataLoader loader(numbers(10), sampler, DataLoaderOptions(4).workers(2));
  std::vector<double> seen;
  for (auto& batch : loader) {
    std::vector<double> d = values(batch.data), t = values(batch.target);
    for (int64_t r = 0; r < batch.size(); ++r) {
      EXPECT_EQ(d[2 * r + 1], 10 * d[2 * r]);
      EXPECT_EQ(t[r], static_cast<int64_t>(d[2 * r]) % 3);
      seen.push_back(d[2 * r]);
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(TensorDataset, RefusesMismatchedOrFloatTargets) {
  Tensor data = raw::zeros({4, 2});
  EXPECT_TRUE(throws_with([&] { TensorDataset(data, raw::zeros({3}, kInt64)); }, "one class index per example"));
  EXPECT_TRUE(throws_with([&] { TensorDataset(data, raw::zeros({4})); }, "integral class indices"));
}

}  // namespace
}  // namespace colony::data
