// unique, unique_consecutive, bincount, histc, searchsorted and bucketize (autograd/unique.cc)
// against torch's results (reduce_golden.h, written by reduce_golden.py), and the errors.
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::reduce_golden::golden_inputs;
using testing::reduce_golden::golden_multi;
using testing::reduce_golden::matches_golden;
using testing::reduce_golden::MultiCase;
using In = const std::vector<Tensor>&;

template <typename F>
void check(const std::string& name, Device device, F op) {
  const MultiCase& c = golden_multi(name);
  std::vector<Tensor> xs = golden_inputs(c, device);
  EXPECT_TRUE(matches_golden(c, xs, op(xs))) << name;
}

std::vector<Tensor> all3(const std::tuple<Tensor, Tensor, Tensor>& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

void check_unique_cases(Device device) {
  for (const char* name : {"unique/f64", "unique/i64", "unique/bool", "unique/empty"}) {
    check(name, device, [](In x) { return all3(unique(x[0], true, true, true)); });
  }
  for (const char* name : {"unique_consecutive/f64", "unique_consecutive/i32"}) {
    check(name, device, [](In x) { return all3(unique_consecutive(x[0], true, true)); });
  }
  for (const char* name : {"unique/dim0", "unique/dim0/f64_3d", "unique/dim0/signed_zero", "unique/dim0/bool",
                           "unique/dim0/empty"}) {
    check(name, device, [](In x) { return all3(unique_dim(x[0], 0, true, true, true)); });
  }
  check("unique/dim1", device, [](In x) { return all3(unique_dim(x[0], 1, true, true, true)); });
  check("unique/dim1/f64_3d", device, [](In x) { return all3(unique_dim(x[0], 1, true, true, true)); });
  check("unique/dim-1/f64_3d", device, [](In x) { return all3(unique_dim(x[0], -1, true, true, true)); });
  check("unique/dim1/empty_slices", device, [](In x) { return all3(unique_dim(x[0], 1, true, true, true)); });
  check("unique_consecutive/dim0", device, [](In x) { return all3(unique_consecutive(x[0], true, true, 0)); });
  check("unique_consecutive/dim1", device, [](In x) { return all3(unique_consecutive(x[0], true, true, 1)); });
  check("unique_consecutive/dim0/f64_3d", device,
        [](In x) { return all3(unique_consecutive(x[0], true, true, 0)); });
  check("bincount", device, [](In x) { return std::vector<Tensor>{bincount(x[0])}; });
  check("bincount/minlength", device, [](In x) { return std::vector<Tensor>{x[0].bincount(Tensor(), 6)}; });
  check("bincount/weights", device, [](In x) { return std::vector<Tensor>{bincount(x[0], x[1])}; });
  check("bincount/weights/i64", device, [](In x) { return std::vector<Tensor>{bincount(x[0], x[1])}; });
  check("bincount/empty", device, [](In x) { return std::vector<Tensor>{bincount(x[0], Tensor(), 2)}; });
  check("histc", device, [](In x) { return std::vector<Tensor>{histc(x[0], 4, 0, 4)}; });
  check("histc/range", device, [](In x) { return std::vector<Tensor>{x[0].histc(3)}; });
  check("histc/constant", device, [](In x) { return std::vector<Tensor>{histc(x[0], 4)}; });
  check("searchsorted/left", device, [](In x) { return std::vector<Tensor>{searchsorted(x[0], x[1])}; });
  check("searchsorted/right", device, [](In x) { return std::vector<Tensor>{searchsorted(x[0], x[1], false, true)}; });
  check("searchsorted/side_int32", device,
        [](In x) { return std::vector<Tensor>{searchsorted(x[0], x[1], true, false, "right")}; });
  check("searchsorted/batched", device, [](In x) { return std::vector<Tensor>{searchsorted(x[0], x[1])}; });
  check("searchsorted/i64", device, [](In x) { return std::vector<Tensor>{searchsorted(x[0], x[1])}; });
  check("bucketize", device, [](In x) { return std::vector<Tensor>{bucketize(x[0], x[1])}; });
  check("bucketize/right", device, [](In x) { return std::vector<Tensor>{bucketize(x[0], x[1], true, true)}; });
}

TEST(Unique, MatchesTorch) { check_unique_cases(kCPU); }

TEST(Unique, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_unique_cases(Device::cuda(0));
}

TEST(Unique, ResultsHaveNoGradient) {
  Tensor x = raw::tensor({2.0, 1.0, 2.0}, TensorOptions(kFloat64));
  x.requires_grad_(true);
  auto [values, inverse, counts] = unique(x, true, true, true);
  EXPECT_FALSE(values.requires_grad());
  // Not asked for: empty, as libtorch's _unique2.
  EXPECT_EQ(std::get<1>(unique(x)).numel(), 0);
  EXPECT_EQ(std::get<2>(unique(x)).numel(), 0);
  EXPECT_FALSE(histc(x, 2).requires_grad());
}

TEST(Unique, Errors) {
  EXPECT_TRUE(throws_with([] { bincount(raw::tensor({1.0}, TensorOptions(kFloat32))); },
                          "bincount: expected a 1-D tensor of non-negative integers, got float32 [1]"));
  EXPECT_TRUE(throws_with([] { bincount(raw::tensor({1.0, -2.0}, TensorOptions(kInt64))); },
                          "bincount: expected non-negative values, got -2"));
  EXPECT_TRUE(throws_with([] { bincount(raw::tensor({1.0}, TensorOptions(kInt64)), raw::ones({2})); },
                          "bincount: expected weights of the input's shape [1], got [2]"));
  EXPECT_TRUE(throws_with([] { histc(raw::tensor({1.0}, TensorOptions(kInt64))); },
                          "histc: expected a floating point input, got int64"));
  EXPECT_TRUE(throws_with([] { histc(raw::ones({2}), 0); }, "histc: expected bins > 0, got 0"));
  EXPECT_TRUE(throws_with([] { histc(raw::ones({2}), 2, 3.0, 1.0); }, "histc: expected max >= min"));
  EXPECT_TRUE(throws_with([] { searchsorted(raw::ones({3}), raw::ones({2}), false, true, "left"); },
                          "searchsorted: side and right can't be set to opposites"));
  EXPECT_TRUE(throws_with([] { searchsorted(raw::ones({3}), raw::ones({2}), false, false, "up"); },
                          "searchsorted: expected side 'left' or 'right', got 'up'"));
  EXPECT_TRUE(throws_with([] { searchsorted(raw::ones({2, 3}), raw::ones({3, 2})); },
                          "searchsorted: expected values with the sorted sequence's leading dims [2]"));
  EXPECT_TRUE(throws_with([] { bucketize(raw::ones({2}), raw::ones({2, 2})); },
                          "bucketize: expected 1-D boundaries, got [2, 2]"));
  EXPECT_TRUE(throws_with([] { unique_dim(raw::ones({3, 0}), 0); },
                          "unique: There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                          "applied"));
  EXPECT_TRUE(throws_with([] { unique_dim(raw::scalar_tensor(1.0), 0); },
                          "unique: Dimension specified as 0 but tensor has no dimensions"));
  EXPECT_TRUE(throws_with([] { unique_dim(raw::ones({2, 2}), 2); }, "unique"));
  EXPECT_TRUE(throws_with([] { unique_consecutive(raw::ones({0, 2}), false, false, 1); },
                          "unique_consecutive: There are 0 sized dimensions"));
}

TEST(Unique, DimResultsHaveNoGradientAndKeepTheDefaults) {
  Tensor x = raw::tensor({{2.0, 1.0}, {0.0, 1.0}, {2.0, 1.0}}, TensorOptions(kFloat64));
  x.requires_grad_(true);
  auto [values, inverse, counts] = unique_dim(x, 0);
  EXPECT_FALSE(values.requires_grad());
  EXPECT_TRUE(testing::all_close(values, raw::tensor({{0.0, 1.0}, {2.0, 1.0}}, TensorOptions(kFloat64))));
  EXPECT_EQ(inverse.numel(), 0);  // not asked for: empty, as libtorch's
  EXPECT_EQ(counts.numel(), 0);
}

}  // namespace
}  // namespace colony
