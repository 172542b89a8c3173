// searchsorted and bucketize (autograd/searchsorted.cc, ops/search_ops.cc, kernels/*/search.*)
// against torch's positions (searchsorted_golden.h, written by searchsorted_golden.py), a long row
// against std::lower_bound / upper_bound, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "tests/autograd/searchsorted_golden.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::searchsorted_golden::Case;
using testing::searchsorted_golden::kCases;
using testing::searchsorted_golden::Operand;

Tensor make(const Operand& o, Device device) {
  Tensor flat = raw::from_vector(o.values, {static_cast<int64_t>(o.values.size())}, TensorOptions(kFloat64));
  return raw::to(raw::reshape(flat, o.shape), device, o.dtype);
}

::testing::AssertionResult matches_torch(const Case& c, const Tensor& got) {
  const DType want_dtype = c.out_int32 ? kInt32 : kInt64;
  if (got.dtype() != want_dtype || got.sizes() != c.out_shape) {
    return ::testing::AssertionFailure() << c.name << ": " << dtype_name(got.dtype()) << " " << shape_str(got.sizes())
                                         << ", torch's " << dtype_name(want_dtype) << " " << shape_str(c.out_shape);
  }
  std::vector<double> v = testing::values(got);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<double>(c.out[i])) {
      return ::testing::AssertionFailure() << c.name << " element " << i << ": " << v[i] << ", torch " << c.out[i];
    }
  }
  return ::testing::AssertionSuccess();
}

void check_golden(Device device) {
  for (const Case& c : kCases) {
    Tensor seq = make(c.sequence, device), values = make(c.values, device);
    Tensor sorter = c.sorter.values.empty() ? Tensor() : make(c.sorter, device);
    EXPECT_TRUE(matches_torch(c, searchsorted(seq, values, c.out_int32, c.right, std::nullopt, sorter)));
    // side spells the same search; bucketize is the same search of a 1-D sequence.
    EXPECT_TRUE(matches_torch(
        c, searchsorted(seq, values, c.out_int32, false, std::string(c.right ? "right" : "left"), sorter)));
    if (c.sequence.shape.size() == 1 && !sorter.defined()) {
      EXPECT_TRUE(matches_torch(c, bucketize(values, seq, c.out_int32, c.right)));
    }
  }
}

TEST(SearchSorted, MatchesTorch) { check_golden(kCPU); }

TEST(SearchSorted, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_golden(Device::cuda(0));
}

// 100,000 boundaries with runs of equal values and 200,000 values: the positions of
// std::lower_bound and std::upper_bound (the definition for a sorted row without NaN). Comparing
// every value with every boundary would take 2e10 comparisons and as many bytes.
void check_long_row(Device device) {
  const int64_t n = 100000, m = 200000;
  std::vector<double> seq(n), vals(m);
  for (int64_t i = 0; i < n; ++i) seq[i] = static_cast<double>(i / 4) - 1000.0;
  for (int64_t j = 0; j < m; ++j) vals[j] = static_cast<double>((j * 7919) % (n / 2)) * 0.5 - 1100.0;
  Tensor s = raw::to(raw::from_vector(seq, {n}, TensorOptions(kFloat64)), device, kFloat64);
  Tensor v = raw::to(raw::from_vector(vals, {m}, TensorOptions(kFloat64)), device, kFloat64);
  for (bool right : {false, true}) {
    std::vector<double> got = testing::values(bucketize(v, s, false, right));
    ASSERT_EQ(got.size(), vals.size());
    int64_t wrong = 0;
    for (int64_t j = 0; j < m; ++j) {
      const auto at = right ? std::upper_bound(seq.begin(), seq.end(), vals[j])
                            : std::lower_bound(seq.begin(), seq.end(), vals[j]);
      if (got[j] != static_cast<double>(at - seq.begin())) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << (right ? "right" : "left");
  }
}

TEST(SearchSorted, LongRowMatchesStdBounds) { check_long_row(kCPU); }

TEST(SearchSorted, LongRowMatchesStdBounds_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_long_row(Device::cuda(0));
}

// A scalar value gives a 0-D result; an integral sequence searches a fractional scalar in float32
// (torch: searchsorted(tensor([1, 2, 3]), 2.5) == 2).
TEST(SearchSorted, ScalarValues) {
  Tensor seq = raw::tensor({1.0, 2.0, 3.0}, TensorOptions(kInt64));
  Tensor a = searchsorted(seq, 2.5);
  EXPECT_EQ(a.dim(), 0);
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_EQ(a.item<int64_t>(), 2);
  EXPECT_EQ(searchsorted(seq, 2.0, false, true).item<int64_t>(), 2);
  EXPECT_EQ(bucketize(2.0, seq).item<int64_t>(), 1);
  EXPECT_EQ(bucketize(2.0, seq, true, true).dtype(), kInt32);
}

TEST(SearchSorted, ResultHasNoGradient) {
  Tensor seq = raw::tensor({1.0, 2.0, 3.0}, TensorOptions(kFloat64));
  Tensor v = raw::tensor({1.5}, TensorOptions(kFloat64));
  v.requires_grad_(true);
  EXPECT_FALSE(searchsorted(seq, v).requires_grad());
}

TEST(SearchSorted, Errors) {
  Tensor seq = raw::tensor({1.0, 2.0, 3.0}, TensorOptions(kFloat64));
  Tensor v = raw::tensor({2.0}, TensorOptions(kFloat64));
  EXPECT_TRUE(throws_with([&] { searchsorted(seq, v, false, true, "left"); },
                          "searchsorted: side and right can't be set to opposites"));
  EXPECT_TRUE(throws_with([&] { searchsorted(seq, v, false, false, "up"); },
                          "searchsorted: expected side 'left' or 'right', got 'up'"));
  EXPECT_TRUE(throws_with([] { searchsorted(raw::ones({2, 3}), raw::ones({3, 2})); },
                          "searchsorted: expected values with the sorted sequence's leading dims [2] (boundaries "
                          "[2, 3]), got [3, 2]"));
  EXPECT_TRUE(throws_with([] { searchsorted(raw::ones({2, 3}), raw::scalar_tensor(1.0)); },
                          "searchsorted: expected values with the sorted sequence's leading dims [2]"));
  EXPECT_TRUE(throws_with([] { searchsorted(raw::scalar_tensor(1.0), raw::ones({2})); },
                          "searchsorted: expected a 1-D or N-D sorted sequence, got 0-D"));
  EXPECT_TRUE(throws_with([&] { searchsorted(seq, v, false, false, std::nullopt, raw::zeros({3}, TensorOptions(kInt32))); },
                          "searchsorted: expected an int64 sorter, got int32"));
  EXPECT_TRUE(throws_with([&] { searchsorted(seq, v, false, false, std::nullopt, raw::zeros({2}, TensorOptions(kInt64))); },
                          "searchsorted: expected a sorter of the sorted sequence's shape [3], got [2]"));
  EXPECT_TRUE(throws_with(
      [&] { searchsorted(seq, v, false, false, std::nullopt, raw::tensor({0.0, 1.0, 3.0}, TensorOptions(kInt64))); },
      "searchsorted: sorter index out of range: expected entries in [0, 3), got 3"));
  EXPECT_TRUE(throws_with(
      [&] { searchsorted(seq, v, false, false, std::nullopt, raw::tensor({0.0, -1.0, 2.0}, TensorOptions(kInt64))); },
      "searchsorted: sorter index out of range: expected entries in [0, 3), got -1"));
  EXPECT_TRUE(throws_with(
      [] { searchsorted(raw::ones({2}, TensorOptions(kBool)), raw::ones({1}, TensorOptions(kBool))); },
      "searchsorted: expected numbers, got bool"));
  EXPECT_TRUE(throws_with([] { searchsorted(Tensor(), raw::ones({1})); },
                          "searchsorted: expected a defined sorted sequence"));
  EXPECT_TRUE(throws_with([] { bucketize(raw::ones({2}), raw::ones({2, 2})); },
                          "bucketize: expected 1-D boundaries, got [2, 2]"));
}

}  // namespace
}  // namespace colony
