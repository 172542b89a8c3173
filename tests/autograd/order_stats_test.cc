// median, nanmedian, kthvalue, quantile, nanquantile, nansum and nanmean (autograd/order_stats.cc)
// against torch's values, indices and gradients (reduce_golden.h, written by reduce_golden.py),
// float64 gradient checks, and the errors.
#include "tests/autograd/gradcheck.h"
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using testing::throws_with;
using testing::reduce_golden::Case;
using testing::reduce_golden::golden;
using testing::reduce_golden::golden_input;
using testing::reduce_golden::matches_golden;
using In = const std::vector<Tensor>&;

// Checks the golden case `name` with op(x) returning values only, or (values, indices).
template <typename F>
void check(const char* name, Device device, F op) {
  const Case& c = golden(name);
  Tensor x = golden_input(c, device);
  auto result = op(x);
  if constexpr (std::is_same_v<decltype(result), Tensor>) {
    EXPECT_TRUE(matches_golden(c, x, result));
  } else {
    EXPECT_TRUE(matches_golden(c, x, result.first, result.second));
  }
}

void check_order_stats(Device device) {
  for (const char* name : {"median/all", "median/all/even", "median/all/nan", "median/empty"}) {
    check(name, device, [](const Tensor& x) { return median(x); });
  }
  check("median/dim1", device, [](const Tensor& x) { return median(x, 1); });
  check("median/dim0/keepdim", device, [](const Tensor& x) { return x.median(-2, /*keepdim=*/true); });
  check("median/nan", device, [](const Tensor& x) { return median(x, 1); });
  check("median/f32", device, [](const Tensor& x) { return median(x, 1); });
  check("median/i64", device, [](const Tensor& x) { return median(x, 1); });
  check("median/scalar", device, [](const Tensor& x) { return median(x, 0); });
  check("nanmedian/dim1", device, [](const Tensor& x) { return nanmedian(x, 1); });
  check("nanmedian/i32", device, [](const Tensor& x) { return x.nanmedian(1); });
  check("nanmedian/all", device, [](const Tensor& x) { return nanmedian(x); });
  check("nanmedian/all_nan", device, [](const Tensor& x) { return x.nanmedian(); });
  check("kthvalue/dim1", device, [](const Tensor& x) { return kthvalue(x, 2, 1); });
  check("kthvalue/dim0/keepdim", device, [](const Tensor& x) { return x.kthvalue(3, 0, /*keepdim=*/true); });
  check("kthvalue/nan", device, [](const Tensor& x) { return kthvalue(x, 4); });
  check("kthvalue/i64", device, [](const Tensor& x) { return kthvalue(x, 1); });
  // Ties: the element torch's CPU names (kernels/common/select.h), gradients to it.
  check("kthvalue/ties", device, [](const Tensor& x) { return kthvalue(x, 17, 1); });
  check("kthvalue/ties/first", device, [](const Tensor& x) { return kthvalue(x, 1, 1); });
  check("kthvalue/ties/last", device, [](const Tensor& x) { return kthvalue(x, 40, 1); });
  check("kthvalue/ties/dim0/keepdim", device, [](const Tensor& x) { return kthvalue(x, 2, 0, true); });
  check("kthvalue/ties/f32", device, [](const Tensor& x) { return kthvalue(x, 29, -1); });
  check("kthvalue/ties/i64", device, [](const Tensor& x) { return kthvalue(x, 11, 1); });
  check("kthvalue/ties/u8", device, [](const Tensor& x) { return kthvalue(x, 23, 1); });
  check("kthvalue/ties/3d", device, [](const Tensor& x) { return kthvalue(x, 5, 1); });
  check("kthvalue/short_ties", device, [](const Tensor& x) { return kthvalue(x, 2, 1); });
  check("kthvalue/signed_zero", device, [](const Tensor& x) { return kthvalue(x, 2, 1); });
  check("kthvalue/nan_ties", device, [](const Tensor& x) { return kthvalue(x, 6, 1); });
  check("median/ties", device, [](const Tensor& x) { return median(x, 1); });
  check("median/ties/dim0", device, [](const Tensor& x) { return median(x, 0); });
  check("median/ties/3d/keepdim", device, [](const Tensor& x) { return median(x, 1, true); });
  check("median/ties/i32", device, [](const Tensor& x) { return median(x, -1); });
  check("median/signed_zero", device, [](const Tensor& x) { return median(x, 1); });
  check("median/nan_ties", device, [](const Tensor& x) { return median(x, 1); });
  check("nanmedian/ties", device, [](const Tensor& x) { return nanmedian(x, 1); });
  check("nanmedian/all_nan_rows", device, [](const Tensor& x) { return nanmedian(x, 1); });
  check("nanmedian/all_nan_long", device, [](const Tensor& x) { return nanmedian(x, -1); });
  check("median/empty_rows", device, [](const Tensor& x) { return median(x, 0); });
  check("kthvalue/empty_rows", device, [](const Tensor& x) { return kthvalue(x, 2, 1); });
  check("kthvalue/scalar", device, [](const Tensor& x) { return kthvalue(x, 1); });
  check("nansum/all", device, [](const Tensor& x) { return nansum(x); });
  check("nansum/dim1", device, [](const Tensor& x) { return nansum(x, {1}); });
  check("nansum/keepdim", device, [](const Tensor& x) { return x.nansum({0}, /*keepdim=*/true); });
  check("nansum/i32", device, [](const Tensor& x) { return nansum(x, {0}); });
  check("nansum/bool", device, [](const Tensor& x) { return nansum(x); });
  check("nanmean/all", device, [](const Tensor& x) { return nanmean(x); });
  check("nanmean/dim1", device, [](const Tensor& x) { return nanmean(x, {1}); });
  check("nanmean/f32", device, [](const Tensor& x) { return x.nanmean({-1}, /*keepdim=*/true); });
  const Tensor q = raw::to(raw::tensor({0.0, 0.25, 0.5, 0.8, 1.0}, TensorOptions(kFloat64)), device, kFloat64);
  for (const char* mode : {"linear", "lower", "higher", "midpoint", "nearest"}) {
    check((std::string("quantile/") + mode).c_str(), device,
          [&](const Tensor& x) { return quantile(x, q, 1, false, mode); });
  }
  check("quantile/all", device, [](const Tensor& x) { return quantile(x, 0.3); });
  check("quantile/all/keepdim", device, [&](const Tensor& x) { return x.quantile(q, std::nullopt, true); });
  check("quantile/dim0/keepdim", device, [](const Tensor& x) { return quantile(x, 0.4, 0, true); });
  check("quantile/nearest_tie", device, [&](const Tensor& x) {
    return quantile(x, raw::to(raw::tensor({0.1, 0.3, 0.5, 0.7}, TensorOptions(kFloat64)), device, kFloat64),
                    std::nullopt, false, "nearest");
  });
  check("quantile/f32", device, [&](const Tensor& x) {
    return quantile(x, raw::to(raw::tensor({0.1, 0.9}, TensorOptions(kFloat32)), device, kFloat32), -1);
  });
  check("quantile/nan", device, [](const Tensor& x) { return quantile(x, 0.5, 1); });
  check("nanquantile/dim1", device, [&](const Tensor& x) { return nanquantile(x, q, 1); });
  check("nanquantile/all", device, [](const Tensor& x) { return x.nanquantile(0.6); });
  check("quantile/scalar", device, [](const Tensor& x) { return quantile(x, 0.5, 0); });
}

TEST(OrderStats, MatchesTorch) { check_order_stats(kCPU); }

TEST(OrderStats, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_order_stats(Device::cuda(0));
}

// Long rows with many ties in every dtype the kernels dispatch: median's and nanmedian's index is
// the stable sort's at their rank (the order is total), kthvalue's value the sort's at k - 1 and
// its index one holding that value; the same on CUDA.
void check_against_sort(Device device) {
  Tensor base = raw::unary(raw::UnaryOp::Floor, raw::mul(raw::rand({7, 1001}, TensorOptions(kFloat64)), 9.0));
  for (DType dtype : {kFloat64, kFloat32, kFloat16, kBFloat16, kInt64, kInt32, kUInt8}) {
    Tensor x = raw::to(base, device, dtype);
    Tensor order = raw::sort(x, 1).second;
    auto [mv, mi] = median(x, 1);
    EXPECT_TRUE(testing::all_close(raw::to(mi, kCPU, kInt64), raw::to(raw::select(order, 1, 500), kCPU, kInt64)))
        << dtype_name(dtype);
    auto [nv, ni] = nanmedian(x, 1);
    EXPECT_TRUE(testing::all_close(raw::to(ni, kCPU, kInt64), raw::to(raw::select(order, 1, 500), kCPU, kInt64)))
        << dtype_name(dtype);
    for (int64_t k : {1, 2, 333, 1000, 1001}) {
      auto [kv, ki] = kthvalue(x, k, 1);
      Tensor sorted_k = raw::select(raw::sort(x, 1).first, 1, k - 1);
      EXPECT_TRUE(testing::all_close(raw::to(kv, kCPU, kFloat64), raw::to(sorted_k, kCPU, kFloat64))) << k;
      Tensor at = raw::squeeze(raw::gather(x, 1, raw::unsqueeze(ki, 1)), 1);
      EXPECT_TRUE(testing::all_close(raw::to(at, kCPU, kFloat64), raw::to(kv, kCPU, kFloat64))) << k;
    }
  }
}

TEST(OrderStats, AgreesWithTheSortOnLongRows) { check_against_sort(kCPU); }

TEST(OrderStats, AgreesWithTheSortOnLongRows_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_against_sort(Device::cuda(0));
}

// The stable-sort path a CUDA median takes for few rows (raw::median_by_sort) names the element the
// selection names, on the CPU here: ties, rows with NaNs, a row of NaNs (nanmedian's libstdc++
// index), along either dim, keepdim, every dtype.
TEST(OrderStats, SortPathNamesWhatTheSelectionNames) {
  Tensor base = raw::unary(raw::UnaryOp::Floor, raw::mul(raw::rand({6, 37}, TensorOptions(kFloat64)), 5.0));
  Tensor nan = raw::full({}, std::nan(""), TensorOptions(kFloat64));
  base.index_put_({1, 3}, nan);
  base.index_put_({2, indexing::Slice(0, 20)}, nan);
  base.index_put_({4}, nan);  // a row of NaNs
  for (DType dtype : {kFloat64, kFloat32, kBFloat16, kInt64, kUInt8}) {
    Tensor x = raw::to(is_floating(dtype) ? base : nan_to_num(base, 0.0), kCPU, dtype);
    for (bool ignore_nan : {false, true}) {
      for (int64_t dim : {1, 0}) {
        for (bool keepdim : {false, true}) {
          auto [sv, si] = raw::median_by_sort(x, dim, keepdim, ignore_nan);
          auto [v, i] = ignore_nan ? raw::nanmedian(x, dim, keepdim) : raw::median(x, dim, keepdim);
          const std::string what = std::string(dtype_name(dtype)) + (ignore_nan ? " nanmedian" : " median") +
                                   " dim " + std::to_string(dim) + (keepdim ? " keepdim" : "");
          EXPECT_EQ(si.sizes(), i.sizes()) << what;
          EXPECT_TRUE(testing::all_close(si, i, 0, 0)) << what;
          EXPECT_TRUE(testing::all_close(raw::to(sv, kCPU, kFloat64), raw::to(v, kCPU, kFloat64), 0, 0)) << what;
        }
      }
    }
  }
}

TEST(OrderStats, Gradcheck) {
  // input() draws distinct values, so finite differences do not reorder them.
  for (Tensor x : {input({3, 5}), strided_input({3, 5}), input({2, 3, 4})}) {
    for (int64_t dim : {0, -1}) {
      EXPECT_TRUE(gradcheck([&](In in) { return median(in[0], dim).first; }, {x}));
      EXPECT_TRUE(gradcheck([&](In in) { return nanmedian(in[0], dim, true).first; }, {x}));
      EXPECT_TRUE(gradcheck([&](In in) { return kthvalue(in[0], 2, dim).first; }, {x}));
      EXPECT_TRUE(gradcheck([&](In in) { return nansum(in[0], {dim}); }, {x}));
      EXPECT_TRUE(gradcheck([&](In in) { return nanmean(in[0], {dim}); }, {x}));
      for (const char* mode : {"linear", "lower", "higher", "midpoint", "nearest"}) {
        EXPECT_TRUE(gradcheck([&](In in) { return quantile(in[0], 0.3, dim, false, mode); }, {x})) << mode;
        EXPECT_TRUE(gradcheck([&](In in) { return nanquantile(in[0], 0.7, dim, true, mode); }, {x})) << mode;
      }
    }
    EXPECT_TRUE(gradcheck([&](In in) { return median(in[0]); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return nanmedian(in[0]); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return quantile(in[0], raw::tensor({0.1, 0.5, 0.95}, TensorOptions(kFloat64))); },
                          {x}));
  }
}

TEST(OrderStats, MedianOfAllSharesTheGradientAmongTies) {
  // torch: the three 1s get a third each.
  Tensor x = raw::tensor({3.0, 1.0, 1.0, 1.0, 2.0}, TensorOptions(kFloat64));
  x.requires_grad_(true);
  median(x).backward();
  EXPECT_TRUE(testing::all_close(x.grad(), raw::tensor({0.0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0}, TensorOptions(kFloat64))));
}

TEST(OrderStats, Errors) {
  Tensor x = raw::tensor({{1.0, 2.0, 3.0}}, TensorOptions(kFloat32));
  EXPECT_TRUE(throws_with([&] { median(x, 2); }, "median"));
  EXPECT_TRUE(throws_with([&] { median(raw::zeros({2, 0}), 1); },
                          "median: expected reduction dim 1 to have non-zero size"));
  EXPECT_TRUE(throws_with([&] { median(raw::tensor({1.0}, TensorOptions(kBool))); },
                          "median: expected a numeric input, got bool"));
  EXPECT_TRUE(throws_with([&] { kthvalue(x, 4); },
                          "kthvalue: selected number k (4) out of range for dimension 1 of size 3"));
  EXPECT_TRUE(throws_with([&] { kthvalue(x, 0); }, "expected 1 <= k <= 3"));
  EXPECT_TRUE(throws_with([&] { kthvalue(raw::zeros({3, 0}), 1); },
                          "kthvalue: expected reduction dim 1 to have non-zero size"));
  EXPECT_TRUE(throws_with([&] { kthvalue(raw::tensor({1.0}, TensorOptions(kBool)), 1); },
                          "kthvalue: expected a numeric input, got bool"));
  EXPECT_TRUE(throws_with([&] { nanmedian(x, -3); }, "nanmedian"));
  EXPECT_TRUE(throws_with([&] { quantile(x, 1.5); }, "quantile: expected q in [0, 1], got 1.5"));
  EXPECT_TRUE(throws_with([&] { quantile(raw::tensor({1.0}, TensorOptions(kInt64)), 0.5); },
                          "quantile: expected a float32 or float64 input, got int64"));
  EXPECT_TRUE(throws_with([&] { quantile(x, raw::tensor({0.5}, TensorOptions(kFloat64))); },
                          "quantile: expected q of the input's dtype float32, got float64"));
  EXPECT_TRUE(throws_with([&] { quantile(raw::zeros({0}), 0.5); }, "quantile: expected a non-empty input tensor"));
  EXPECT_TRUE(throws_with([&] { nanquantile(x, 0.5, 1, false, "cubic"); },
                          "nanquantile: expected interpolation 'linear', 'lower', 'higher', 'midpoint' or "
                          "'nearest', got 'cubic'"));
  EXPECT_TRUE(throws_with([&] { quantile(x, raw::zeros({2, 2}, TensorOptions(kFloat32))); },
                          "quantile: expected q as a number or a 0-D or 1-D tensor, got 2-D"));
  EXPECT_TRUE(throws_with([&] { nanmean(raw::tensor({1.0}, TensorOptions(kInt64))); },
                          "nanmean: expected a floating point input, got int64"));
}

}  // namespace
}  // namespace colony
