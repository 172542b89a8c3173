// The 3-D pools (F::max_pool3d, avg_pool3d, adaptive_avg/max_pool3d, max_unpool3d), F::lp_pool1d/2d/3d
// and F::fractional_max_pool2d/3d with their modules, and BatchNorm3d / InstanceNorm3d: values,
// indices and gradients against torch in float64 and float32 (tests/nn/pool3d_golden.py writes
// pool3d_golden.h), float64 gradchecks, torch's refusals and printing, and CUDA against the CPU.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/autograd.h"
#include "nn/batchnorm.h"
#include "nn/functional.h"
#include "nn/instancenorm.h"
#include "nn/pooling.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/nn/pool3d_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

namespace F = functional;
using colony::testing::throws_with;
using In = std::vector<Tensor>;
using testing::golden::Op;

// A case that returns (output, indices): "name" checks the output, "name_idx" the indices.
void both(std::map<std::string, Op>& c, const std::string& name,
          const std::function<std::tuple<Tensor, Tensor>(const In&)>& f) {
  c[name] = [f](const In& x, Device) { return std::get<0>(f(x)); };
  c[name + "_idx"] = [f](const In& x, Device) { return std::get<1>(f(x)); };
}

// pool3d_golden.py's cases, by name.
std::map<std::string, Op> calls() {
  std::map<std::string, Op> c;
  both(c, "max_k2", [](const In& x) { return F::max_pool3d_with_indices(x[0], 2); });
  both(c, "max_k3s2p1", [](const In& x) {
    return F::max_pool3d_with_indices(x[0], F::MaxPool3dFuncOptions(3).stride(2).padding(1));
  });
  both(c, "max_dil_ceil", [](const In& x) {
    return F::max_pool3d_with_indices(
        x[0], F::MaxPool3dFuncOptions({2, 3, 2}).stride({2, 1, 2}).padding({1, 0, 1}).dilation({1, 2, 1}).ceil_mode(true));
  });
  both(c, "max_ties", [](const In& x) { return F::max_pool3d_with_indices(x[0], F::MaxPool3dFuncOptions(2).stride(1)); });
  both(c, "max_unbatched", [](const In& x) {
    return F::max_pool3d_with_indices(x[0], F::MaxPool3dFuncOptions({1, 2, 2}).stride({1, 2, 1}));
  });
  c["avg_k2"] = [](const In& x, Device) { return F::avg_pool3d(x[0], 2); };
  c["avg_k3s2p1"] = [](const In& x, Device) { return F::avg_pool3d(x[0], F::AvgPool3dFuncOptions(3).stride(2).padding(1)); };
  c["avg_k3s2p1_exclude_pad"] = [](const In& x, Device) {
    return F::avg_pool3d(x[0], F::AvgPool3dFuncOptions(3).stride(2).padding(1).count_include_pad(false));
  };
  const auto ceil = F::AvgPool3dFuncOptions({2, 3, 2}).stride({2, 2, 3}).padding({1, 1, 0}).ceil_mode(true);
  c["avg_ceil"] = [ceil](const In& x, Device) { return F::avg_pool3d(x[0], ceil); };
  c["avg_ceil_exclude_pad"] = [ceil](const In& x, Device) {
    auto o = ceil;
    return F::avg_pool3d(x[0], o.count_include_pad(false));
  };
  c["avg_divisor"] = [](const In& x, Device) {
    return F::avg_pool3d(x[0], F::AvgPool3dFuncOptions(2).stride(1).padding(1).divisor_override(3));
  };
  c["avg_unbatched"] = [](const In& x, Device) {
    return F::avg_pool3d(x[0], F::AvgPool3dFuncOptions({1, 2, 3}).stride({1, 1, 2}));
  };
  c["aavg"] = [](const In& x, Device) { return F::adaptive_avg_pool3d(x[0], Int3(3, 2, 4)); };
  c["aavg_none"] = [](const In& x, Device) {
    return F::adaptive_avg_pool3d(x[0], F::OptionalInt3(std::nullopt, 3, std::nullopt));
  };
  c["aavg_up"] = [](const In& x, Device) { return F::adaptive_avg_pool3d(x[0], Int3(4, 5, 3)); };
  c["aavg_unbatched"] = [](const In& x, Device) { return F::adaptive_avg_pool3d(x[0], 2); };
  both(c, "amax", [](const In& x) { return F::adaptive_max_pool3d_with_indices(x[0], Int3(3, 2, 4)); });
  both(c, "amax_none", [](const In& x) {
    return F::adaptive_max_pool3d_with_indices(x[0], F::OptionalInt3(2, std::nullopt, 3));
  });
  both(c, "amax_up", [](const In& x) { return F::adaptive_max_pool3d_with_indices(x[0], Int3(4, 5, 3)); });
  both(c, "amax_ties_unbatched", [](const In& x) { return F::adaptive_max_pool3d_with_indices(x[0], 2); });
  auto unpool = [](const Tensor& x, std::optional<std::vector<int64_t>> size) {
    auto [y, i] = F::max_pool3d_with_indices(x, 2);
    return F::max_unpool3d(y, i, F::MaxUnpool3dFuncOptions(2).output_size(size));
  };
  c["unpool"] = [unpool](const In& x, Device) { return unpool(x[0], std::nullopt); };
  c["unpool_size"] = [unpool](const In& x, Device) { return unpool(x[0], std::vector<int64_t>{5, 5, 7}); };
  c["unpool_size5_unbatched"] = [unpool](const In& x, Device) {
    return unpool(x[0], std::vector<int64_t>{1, 2, 4, 5, 5});
  };
  c["unpool_stride"] = [](const In& x, Device) {
    auto [y, i] = F::max_pool3d_with_indices(x[0], F::MaxPool3dFuncOptions(3).stride(2).padding(1));
    return F::max_unpool3d(y, i, F::MaxUnpool3dFuncOptions(3).stride(2).padding(1));
  };
  c["lp1d_p2"] = [](const In& x, Device) { return F::lp_pool1d(x[0], F::LPPool1dFuncOptions(2, 3).stride(2)); };
  c["lp1d_p3_ceil"] = [](const In& x, Device) {
    return F::lp_pool1d(x[0], F::LPPool1dFuncOptions(3, 2).ceil_mode(true));
  };
  c["lp2d_p1_5"] = [](const In& x, Device) {
    return F::lp_pool2d(x[0], F::LPPool2dFuncOptions(1.5, {2, 3}).stride(Int2(1)));
  };
  c["lp2d_p2_ceil"] = [](const In& x, Device) {
    return F::lp_pool2d(x[0], F::LPPool2dFuncOptions(2, 2).ceil_mode(true));
  };
  c["lp2d_inf"] = [](const In& x, Device) {
    return F::lp_pool2d(x[0], F::LPPool2dFuncOptions(std::numeric_limits<double>::infinity(), 2));
  };
  c["lp3d_p2"] = [](const In& x, Device) { return F::lp_pool3d(x[0], F::LPPool3dFuncOptions(2, 2)); };
  c["lp3d_p1_5_stride"] = [](const In& x, Device) {
    return F::lp_pool3d(x[0], F::LPPool3dFuncOptions(1.5, {2, 2, 3}).stride(Int3(1, 2, 2)));
  };
  c["lp3d_ninf_unbatched"] = [](const In& x, Device) {
    return F::lp_pool3d(x[0], F::LPPool3dFuncOptions(-std::numeric_limits<double>::infinity(), 2));
  };
  both(c, "frac2d", [](const In& x) {
    return F::fractional_max_pool2d_with_indices(
        x[0], F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(4, 5))._random_samples(x[1]));
  });
  both(c, "frac2d_ratio", [](const In& x) {
    return F::fractional_max_pool2d_with_indices(
        x[0], F::FractionalMaxPool2dFuncOptions({3, 2}).output_ratio(F::Ratio2(0.5, 0.7))._random_samples(x[1]));
  });
  both(c, "frac2d_tight_unbatched", [](const In& x) {
    return F::fractional_max_pool2d_with_indices(
        x[0], F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(6, 1))._random_samples(x[1]));
  });
  both(c, "frac3d", [](const In& x) {
    return F::fractional_max_pool3d_with_indices(
        x[0], F::FractionalMaxPool3dFuncOptions(2).output_size(Int3(3, 4, 2))._random_samples(x[1]));
  });
  both(c, "frac3d_ratio_unbatched", [](const In& x) {
    return F::fractional_max_pool3d_with_indices(
        x[0],
        F::FractionalMaxPool3dFuncOptions({2, 1, 3}).output_ratio(F::Ratio3(0.5, 0.6, 0.4))._random_samples(x[1]));
  });
  std::map<std::string, Op> all = c;
  for (const auto& [name, op] : c) all[name + "_f32"] = op;
  return all;
}

TEST(Pool3d, MatchesTorch) {
  const auto ops = calls();
  for (const auto& c : testing::pool3d_golden::kCases) EXPECT_TRUE(testing::golden::matches(c, ops, kCPU));
}

// Every case the golden table has is run here (a case without a call fails by name above), and
// every call has a case.
TEST(Pool3d, EveryCallHasAGoldenCase) {
  std::map<std::string, bool> seen;
  for (const auto& c : testing::pool3d_golden::kCases) seen[c.name] = true;
  for (const auto& [name, op] : calls()) EXPECT_TRUE(seen.count(name)) << name;
}

TEST(Pool3d, Gradcheck) {
  using colony::testing::gradcheck;
  const Tensor x = colony::testing::input({1, 2, 4, 5, 5});
  EXPECT_TRUE(gradcheck([](const In& in) { return F::max_pool3d(in[0], F::MaxPool3dFuncOptions(2).stride(1)); }, {x}));
  EXPECT_TRUE(gradcheck(
      [](const In& in) {
        return F::max_pool3d(in[0], F::MaxPool3dFuncOptions({2, 3, 2}).padding({1, 1, 0}).dilation({1, 1, 2}).ceil_mode(true));
      },
      {x}));
  EXPECT_TRUE(gradcheck(
      [](const In& in) {
        return F::avg_pool3d(in[0], F::AvgPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
      },
      {x}));
  EXPECT_TRUE(gradcheck(
      [](const In& in) { return F::avg_pool3d(in[0], F::AvgPool3dFuncOptions(2).stride(1).divisor_override(5)); }, {x}));
  EXPECT_TRUE(gradcheck([](const In& in) { return F::adaptive_avg_pool3d(in[0], Int3(3, 2, 4)); }, {x}));
  EXPECT_TRUE(gradcheck([](const In& in) { return F::adaptive_max_pool3d(in[0], Int3(3, 2, 4)); }, {x}));
  EXPECT_TRUE(gradcheck([](const In& in) { return F::lp_pool3d(in[0], F::LPPool3dFuncOptions(2, 2).stride(Int3(1))); },
                        {x}));
  // Positive inputs: a window whose sum of cubes is <= 0 has no derivative at 0^(1/3).
  Tensor positive = raw::add(raw::rand({2, 3, 7}, TensorOptions(kFloat64)), 0.5);
  positive.requires_grad_(true);
  EXPECT_TRUE(gradcheck([](const In& in) { return F::lp_pool1d(in[0], F::LPPool1dFuncOptions(3, 2)); }, {positive}));
  const Tensor s3 = raw::rand({1, 2, 3}, TensorOptions(kFloat64));
  EXPECT_TRUE(gradcheck(
      [s3](const In& in) {
        return F::fractional_max_pool3d(in[0], F::FractionalMaxPool3dFuncOptions(2).output_size(Int3(2, 3, 3))._random_samples(s3));
      },
      {x}));
  const Tensor s2 = raw::rand({1, 2, 2}, TensorOptions(kFloat64));
  EXPECT_TRUE(gradcheck(
      [s2](const In& in) {
        return F::fractional_max_pool2d(in[0], F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(3, 4))._random_samples(s2));
      },
      {colony::testing::input({1, 2, 6, 7})}));
  EXPECT_TRUE(gradcheck(
      [](const In& in) {
        auto [y, i] = F::max_pool3d_with_indices(in[0], 2);
        return F::max_unpool3d(y, i, 2);
      },
      {colony::testing::input({1, 2, 4, 4, 4})}));
}

// The 2-D kernels now run the volume loops at depth 1: a 3-D pool over [.., 1, H, W] with a
// depth-1 window is the 2-D pool, in values and indices.
TEST(Pool3d, DepthOneIsThe2dPool) {
  Generator gen(5);
  const Tensor x = raw::randn({2, 3, 7, 9}, TensorOptions(kFloat32), &gen);
  const Tensor x3 = raw::unsqueeze(x, 2);
  auto [y2, i2] = F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1).ceil_mode(true));
  auto [y3, i3] = F::max_pool3d_with_indices(x3, F::MaxPool3dFuncOptions({1, 3, 3}).stride({1, 2, 2}).padding({0, 1, 1}).ceil_mode(true));
  EXPECT_TRUE(colony::testing::all_close(raw::squeeze(y3, 2), y2, 0, 0));
  EXPECT_TRUE(colony::testing::all_close(raw::squeeze(i3, 2), i2, 0, 0));
  EXPECT_TRUE(colony::testing::all_close(
      raw::squeeze(F::avg_pool3d(x3, F::AvgPool3dFuncOptions({1, 3, 2}).padding({0, 1, 1}).count_include_pad(false)), 2),
      F::avg_pool2d(x, F::AvgPool2dFuncOptions({3, 2}).padding({1, 1}).count_include_pad(false)), 1e-6, 1e-6));
}

TEST(Pool3d, SixteenBitInputsWidenOnTheCpu) {
  Generator gen(3);
  const Tensor x = raw::randn({2, 2, 4, 6, 5}, TensorOptions(kFloat32), &gen);
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor xl = raw::to(x, kCPU, dt), xr = raw::to(xl, kCPU, kFloat32);
    const Tensor y = F::max_pool3d(xl, 2);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(colony::testing::all_close(raw::to(y, kCPU, kFloat32), F::max_pool3d(xr, 2), 0, 0));
    EXPECT_EQ(F::avg_pool3d(xl, 2).dtype(), dt);
    EXPECT_EQ(F::adaptive_avg_pool3d(xl, 2).dtype(), dt);
    EXPECT_EQ(F::adaptive_max_pool3d(xl, 2).dtype(), dt);
    EXPECT_EQ(F::fractional_max_pool3d(xl, F::FractionalMaxPool3dFuncOptions(2).output_size(Int3(2))).dtype(), dt);
  }
  EXPECT_EQ(F::max_pool3d(raw::zeros({0, 2, 4, 4, 4}, TensorOptions(kFloat32)), 2).sizes(), (Shape{0, 2, 2, 2, 2}));
}

TEST(Pool3d, FractionalDrawsFromTheGenerator) {
  Generator gen(9);
  const Tensor x = raw::randn({2, 3, 9, 8}, TensorOptions(kFloat32), &gen);
  const auto o = F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(4, 4));
  manual_seed(1);
  auto [a, ia] = F::fractional_max_pool2d_with_indices(x, o);
  manual_seed(1);
  auto [b, ib] = F::fractional_max_pool2d_with_indices(x, o);
  EXPECT_TRUE(colony::testing::all_close(ia, ib, 0, 0));
  EXPECT_EQ(a.sizes(), (Shape{2, 3, 4, 4}));
  // Every index is the maximum of a 2 x 2 window inside the plane.
  const Tensor flat = raw::reshape(x, {6, 72});
  EXPECT_TRUE(colony::testing::all_close(raw::reshape(raw::gather(flat, 1, raw::reshape(ia, {6, 16})), {2, 3, 4, 4}), a, 0, 0));
  // output_ratio: int(size * ratio).
  EXPECT_EQ(F::fractional_max_pool2d(x, F::FractionalMaxPool2dFuncOptions(2).output_ratio(0.5)).sizes(),
            (Shape{2, 3, 4, 4}));
  EXPECT_EQ(F::fractional_max_pool3d(raw::randn({3, 7, 8, 9}, TensorOptions(kFloat32), &gen),
                                     F::FractionalMaxPool3dFuncOptions(2).output_ratio(F::Ratio3(0.5, 0.4, 0.75)))
                .sizes(),
            (Shape{3, 3, 3, 6}));
}

TEST(Pool3d, RefusesWhatTorchRefuses) {
  const Tensor x = raw::zeros({2, 3, 4, 5, 6}, TensorOptions(kFloat32));
  auto mp = [](const Tensor& t, F::MaxPool3dFuncOptions o) { return [=] { F::max_pool3d(t, o); }; };
  auto ap = [](const Tensor& t, F::AvgPool3dFuncOptions o) { return [=] { F::avg_pool3d(t, o); }; };
  EXPECT_TRUE(throws_with(mp(x, F::MaxPool3dFuncOptions(3).padding(2)),
                          "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and "
                          "dilation=1"));
  EXPECT_TRUE(throws_with(ap(x, F::AvgPool3dFuncOptions({1, 2, 2}).padding({1, 1, 1})),
                          "pad should be at most half of effective kernel size, but got pad=1, kernel_size=1"));
  EXPECT_TRUE(throws_with(mp(raw::zeros({3, 4, 5}, TensorOptions(kFloat32)), 2),
                          "non-empty 4D or 5D (batch mode) tensor expected for input"));
  EXPECT_TRUE(throws_with(mp(x, F::MaxPool3dFuncOptions(0).stride(1)),
                          "kernel size should be greater than zero, but got kT: 0 kH: 0 kW: 0"));
  EXPECT_TRUE(throws_with(mp(x, F::MaxPool3dFuncOptions(2).stride(0)), "stride should not be zero"));
  EXPECT_TRUE(throws_with(mp(x, F::MaxPool3dFuncOptions(2).dilation(0)),
                          "dilation should be greater than zero, but got dilationT: 0 dilationH: 0 dilationW: 0"));
  EXPECT_TRUE(throws_with(mp(x, F::MaxPool3dFuncOptions(2).padding(-1)), "pad must be non-negative, but got pad: -1"));
  EXPECT_TRUE(throws_with(mp(x, 5), "Given input size: (3x4x5x6). Calculated output size: (3x0x1x1). Output size is too small"));
  EXPECT_TRUE(throws_with(ap(x, 5), "input image (T: 4 H: 5 W: 6) smaller than kernel size (kT: 5 kH: 5 kW: 5)"));
  EXPECT_TRUE(throws_with(ap(x, F::AvgPool3dFuncOptions(2).divisor_override(0)), "divisor must be not zero"));
  EXPECT_TRUE(throws_with(mp(raw::zeros({2, 0, 4, 5, 6}, TensorOptions(kFloat32)), 2),
                          "Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                          "[2, 0, 4, 5, 6] with dimension 1 being empty"));
  EXPECT_TRUE(throws_with(mp(raw::zeros({2, 3, 4, 5, 6}, TensorOptions(kInt64)), 2), "expected a floating point input"));
  EXPECT_TRUE(throws_with([] { F::adaptive_avg_pool3d(raw::zeros({3, 4, 5}, TensorOptions(kFloat32)), 2); },
                          "adaptive_avg_pool3d: Expected 4D or 5D tensor, but got [3, 4, 5]"));
  EXPECT_TRUE(throws_with([] { F::adaptive_max_pool3d(raw::zeros({3, 4, 5}, TensorOptions(kFloat32)), 2); },
                          "Expected 4D or 5D tensor, but got: [3, 4, 5]"));
  EXPECT_TRUE(throws_with([&] { F::adaptive_avg_pool3d(x, -1); },
                          "elements of output_size must be greater than or equal to 0 but received {-1, -1,-1}"));
  EXPECT_TRUE(throws_with([] { AdaptiveMaxPool3d(AdaptiveMaxPool3dOptions(F::OptionalInt3(2, -1, 2))); },
                          "must be non-negative"));
  // max_unpool3d: [4, 5, 6] pooled by 2 unpools by default to [4, 4, 6], too small for the indices.
  Generator gen(2);
  auto [y, i] = F::max_pool3d_with_indices(raw::randn({2, 3, 4, 5, 6}, TensorOptions(kFloat32), &gen), 2);
  EXPECT_TRUE(throws_with([&] { F::max_unpool3d(y, i, 2); }, "Found an invalid max index"));
  EXPECT_TRUE(throws_with([&] { F::max_unpool3d(y, raw::zeros(y.sizes(), TensorOptions(kInt64)) + 99, 2); },
                          "Found an invalid max index: 99 (output volumes are of size 4x4x6)"));
  EXPECT_TRUE(throws_with([&] { F::max_unpool3d(y, i, F::MaxUnpool3dFuncOptions(2).output_size(std::vector<int64_t>{4, 5, 9})); },
                          "(dim 2 must be between 4 and 8)"));
  EXPECT_TRUE(throws_with([&] { F::max_unpool3d(y, i, F::MaxUnpool3dFuncOptions(2).output_size(std::vector<int64_t>{1, 4, 5, 6})); },
                          "output_size should be a sequence containing 3 or 5 elements, but it has a length of '4'"));
  EXPECT_TRUE(throws_with([&] { F::max_unpool3d(y, raw::zeros(y.sizes(), TensorOptions(kFloat32)), 2); },
                          "elements in indices should be type int64 but got: float32"));
  EXPECT_TRUE(throws_with([&] { F::max_unpool3d(raw::zeros({2, 3, 4}, TensorOptions(kFloat32)),
                                                raw::zeros({2, 3, 4}, TensorOptions(kInt64)), 2); },
                          "Input to max_unpooling3d should be a 4d or 5d Tensor"));
  // lp_pool
  EXPECT_TRUE(throws_with([&] { F::lp_pool3d(x, F::LPPool3dFuncOptions(0, 2)); },
                          "norm_type must be a non-zero value, but got 0"));
  EXPECT_TRUE(throws_with([] { LPPool2d(LPPool2dOptions(0, 2)); }, "norm_type must be a non-zero value"));
  // fractional
  const Tensor x4 = raw::zeros({3, 4, 5, 6}, TensorOptions(kFloat32));
  auto fp2 = [&](F::FractionalMaxPool2dFuncOptions o) { return [=] { F::fractional_max_pool2d(x4, o); }; };
  auto fp3 = [&](F::FractionalMaxPool3dFuncOptions o) { return [=] { F::fractional_max_pool3d(x, o); }; };
  EXPECT_TRUE(throws_with(fp2(F::FractionalMaxPool2dFuncOptions(2)),
                          "fractional_max_pool2d requires specifying either an output_size or an output_ratio"));
  EXPECT_TRUE(throws_with(fp2(F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(6))),
                          "fractional_max_pool2d(): pool width 2 too large relative to input width 6"));
  EXPECT_TRUE(throws_with(fp2(F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(5, 4))),
                          "fractional_max_pool2d(): pool height 2 too large relative to input height 5"));
  EXPECT_TRUE(throws_with(fp2(F::FractionalMaxPool2dFuncOptions(0).output_size(Int2(3))),
                          "kernel size should be greater than zero, but got 0x0"));
  EXPECT_TRUE(throws_with(
      fp2(F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(3))._random_samples(raw::rand({3, 2}))),
      "Expect _random_samples to have 3 dimensions, got 2"));
  EXPECT_TRUE(throws_with(
      fp2(F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(3))._random_samples(raw::rand({3, 4, 3}))),
      "Expect _random_samples.size(2) equals to 2; got 3."));
  EXPECT_TRUE(throws_with(fp2(F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(3))._random_samples(
                              raw::rand({1, 4, 2}, TensorOptions(kFloat64)))),
                          "Expect _random_samples to have the same dtype as input"));
  EXPECT_TRUE(throws_with(fp3(F::FractionalMaxPool3dFuncOptions(1).output_size(Int3(3, 4, 5))._random_samples(
                              raw::rand({1, 3, 3}))),
                          "Expect _random_samples.size(0) no less then input batch size."));
  EXPECT_TRUE(throws_with(fp3(F::FractionalMaxPool3dFuncOptions(1).output_size(Int3(3, 4, 5))._random_samples(
                              raw::rand({2, 2, 3}))),
                          "Expect _random_samples.size(1) equals to input channel size."));
  EXPECT_TRUE(throws_with(fp3(F::FractionalMaxPool3dFuncOptions(2).output_size(Int3(3))),
                          "fractional_max_pool3d_out(): pool time 2 too large relative to input time 4"));
  EXPECT_TRUE(throws_with(fp3(F::FractionalMaxPool3dFuncOptions(0).output_size(Int3(3))),
                          "kernel size should be greater than zero, but got 0x0x0"));
  EXPECT_TRUE(throws_with([] { F::fractional_max_pool3d(raw::zeros({2, 0, 4, 5, 6}, TensorOptions(kFloat32)),
                                                        F::FractionalMaxPool3dFuncOptions(1).output_size(Int3(3, 4, 5))); },
                          "Expected input to have non-zero size for non-batch dimensions, but got[2, 0, 4, 5, 6] with "
                          "dimension 1 being empty."));
  EXPECT_TRUE(throws_with([] { FractionalMaxPool2d(FractionalMaxPool2dOptions(2).output_ratio(1.5)); },
                          "output_ratio must be between 0 and 1 (got 1.5)"));
  EXPECT_TRUE(throws_with([] { FractionalMaxPool2d(FractionalMaxPool2dOptions(2)); },
                          "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio"));
  EXPECT_TRUE(throws_with([] { FractionalMaxPool3d(FractionalMaxPool3dOptions(2).output_size(Int3(2)).output_ratio(0.5)); },
                          "only one of output_size and output_ratio may be specified"));
  // BatchNorm3d and InstanceNorm3d
  EXPECT_TRUE(throws_with([] { BatchNorm3d(3).forward(raw::zeros({3, 4, 5, 6}, TensorOptions(kFloat32))); },
                          "expected 5D input (got 4D input)"));
  EXPECT_TRUE(throws_with([] { InstanceNorm3d(3).forward(raw::zeros({3, 4, 5}, TensorOptions(kFloat32))); },
                          "InstanceNorm3d: expected 4-D (unbatched) or 5-D input"));
  EXPECT_TRUE(throws_with(
      [] { InstanceNorm3d(InstanceNorm3dOptions(4).affine(true)).forward(raw::zeros({2, 3, 2, 2, 2}, TensorOptions(kFloat32))); },
      "to match num_features (4)"));
}

TEST(Pool3d, ModulesPrintAsTorch) {
  EXPECT_EQ(MaxPool3d(2).repr(), "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(MaxPool3d(MaxPool3dOptions({2, 3, 1}).stride(1).padding({1, 0, 0}).ceil_mode(true)).repr(),
            "MaxPool3d(kernel_size=(2, 3, 1), stride=1, padding=(1, 0, 0), dilation=1, ceil_mode=True)");
  EXPECT_EQ(AvgPool3d(2).repr(), "AvgPool3d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(AvgPool3d(AvgPool3dOptions({2, 3, 1}).stride(1).padding(1).divisor_override(3)).repr(),
            "AvgPool3d(kernel_size=(2, 3, 1), stride=1, padding=1)");
  EXPECT_EQ(AdaptiveAvgPool3d(2).repr(), "AdaptiveAvgPool3d(output_size=2)");
  EXPECT_EQ(AdaptiveAvgPool3d(F::OptionalInt3(2, std::nullopt, 3)).repr(), "AdaptiveAvgPool3d(output_size=(2, None, 3))");
  EXPECT_EQ(AdaptiveMaxPool3d(2).repr(), "AdaptiveMaxPool3d(output_size=2)");
  EXPECT_EQ(AdaptiveMaxPool3d(F::OptionalInt3(2, std::nullopt, 3)).repr(), "AdaptiveMaxPool3d(output_size=(2, None, 3))");
  EXPECT_EQ(MaxUnpool3d(2).repr(), "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))");
  EXPECT_EQ(MaxUnpool3d(MaxUnpool3dOptions({2, 3, 1}).stride(1).padding(1)).repr(),
            "MaxUnpool3d(kernel_size=(2, 3, 1), stride=(1, 1, 1), padding=(1, 1, 1))");
  EXPECT_EQ(LPPool1d(LPPool1dOptions(2, 3)).repr(), "LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)");
  EXPECT_EQ(LPPool2d(LPPool2dOptions(2, 3).stride(Int2(1)).ceil_mode(true)).repr(),
            "LPPool2d(norm_type=2, kernel_size=3, stride=1, ceil_mode=True)");
  EXPECT_EQ(LPPool3d(LPPool3dOptions(1.5, {2, 3, 1})).repr(),
            "LPPool3d(norm_type=1.5, kernel_size=(2, 3, 1), stride=None, ceil_mode=False)");
  EXPECT_EQ(LPPool2d(LPPool2dOptions(2, {2, 3})).repr(), "LPPool2d(norm_type=2, kernel_size=(2, 3), stride=None, ceil_mode=False)");
  EXPECT_EQ(FractionalMaxPool2d(FractionalMaxPool2dOptions(2).output_size(Int2(3))).repr(), "FractionalMaxPool2d()");
  EXPECT_EQ(FractionalMaxPool3d(FractionalMaxPool3dOptions(2).output_ratio(F::Ratio3(0.5, 0.6, 0.7))).repr(),
            "FractionalMaxPool3d()");
  EXPECT_EQ(BatchNorm3d(3).repr(),
            "BatchNorm3d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)");
  EXPECT_EQ(InstanceNorm3d(3).repr(),
            "InstanceNorm3d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)");
  EXPECT_EQ(InstanceNorm3d(InstanceNorm3dOptions(3).affine(true).track_running_stats(true)).repr(),
            "InstanceNorm3d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)");
}

TEST(Pool3d, ModulesRunTheirFunctionals) {
  Generator gen(4);
  const Tensor x = raw::randn({2, 3, 4, 6, 6}, TensorOptions(kFloat64), &gen);
  MaxPool3d mp(2);
  auto [y, i] = mp.forward_with_indices(x);
  EXPECT_TRUE(colony::testing::all_close(mp.forward(x), y, 0, 0));
  EXPECT_TRUE(colony::testing::all_close(MaxUnpool3d(2).forward(y, i), F::max_unpool3d(y, i, 2), 0, 0));
  EXPECT_TRUE(colony::testing::all_close(AvgPool3d(2).forward(x), F::avg_pool3d(x, 2), 0, 0));
  EXPECT_TRUE(colony::testing::all_close(AdaptiveAvgPool3d(3).forward(x), F::adaptive_avg_pool3d(x, 3), 0, 0));
  EXPECT_TRUE(colony::testing::all_close(AdaptiveMaxPool3d(3).forward(x), F::adaptive_max_pool3d(x, 3), 0, 0));
  EXPECT_TRUE(colony::testing::all_close(LPPool3d(LPPool3dOptions(2, 2)).forward(x),
                                         F::lp_pool3d(x, F::LPPool3dFuncOptions(2, 2)), 0, 0));
  const Tensor s = raw::rand({2, 3, 3}, TensorOptions(kFloat64), &gen);
  FractionalMaxPool3d fp(FractionalMaxPool3dOptions(2).output_size(Int3(2, 3, 3))._random_samples(s));
  EXPECT_EQ(fp.buffers().size(), 1u);
  EXPECT_TRUE(colony::testing::all_close(
      fp.forward(x),
      F::fractional_max_pool3d(x, F::FractionalMaxPool3dFuncOptions(2).output_size(Int3(2, 3, 3))._random_samples(s)), 0, 0));
  // BatchNorm3d normalizes each channel over (N, D, H, W) as batch_norm does.
  BatchNorm3d bn(3);
  const Tensor z = bn.forward(raw::to(x, kCPU, kFloat32));
  const Tensor m = raw::mean(z, {0, 2, 3, 4});
  for (double v : colony::testing::values(m)) EXPECT_NEAR(v, 0.0, 1e-5);
  InstanceNorm3d in(3);
  const Tensor w = in.forward(x);
  for (double v : colony::testing::values(raw::mean(w, {2, 3, 4}))) EXPECT_NEAR(v, 0.0, 1e-9);
  EXPECT_EQ(in.forward(raw::select(x, 0, 0)).sizes(), (Shape{3, 4, 6, 6}));
}

TEST(Pool3d, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const auto ops = calls();
  for (const auto& c : testing::pool3d_golden::kCases) {
    EXPECT_TRUE(testing::golden::matches(c, ops, Device::cuda(0), 1e-5));
  }
}

TEST(Pool3d, OnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  Generator gen(8);
  const Tensor x = raw::randn({4, 8, 6, 10, 12}, TensorOptions(kFloat32), &gen);
  const Tensor xd = raw::to(x, dev, kFloat32);
  auto same = [&](const std::function<Tensor(const Tensor&)>& f, double tol) {
    Tensor a = x;
    a.requires_grad_(true);
    Tensor b = xd;
    b.requires_grad_(true);
    const Tensor ya = f(a), yb = f(b);
    EXPECT_TRUE(colony::testing::all_close(raw::to(yb, kCPU, kFloat32), ya, tol, tol));
    const Tensor g = raw::randn(ya.sizes(), TensorOptions(kFloat32), &gen);
    sum(mul(ya, g)).backward();
    sum(mul(yb, raw::to(g, dev, kFloat32))).backward();
    EXPECT_TRUE(colony::testing::all_close(raw::to(b.grad(), kCPU, kFloat32), a.grad(), tol, tol));
  };
  same([](const Tensor& t) { return F::max_pool3d(t, F::MaxPool3dFuncOptions(3).stride(2).padding(1)); }, 1e-6);
  same([](const Tensor& t) { return F::avg_pool3d(t, F::AvgPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true)); }, 1e-5);
  same([](const Tensor& t) { return F::avg_pool3d(t, F::AvgPool3dFuncOptions(2).stride(1).count_include_pad(false).divisor_override(7)); }, 1e-5);
  same([](const Tensor& t) { return F::adaptive_avg_pool3d(t, Int3(4, 3, 5)); }, 1e-5);
  same([](const Tensor& t) { return F::adaptive_max_pool3d(t, Int3(4, 3, 5)); }, 1e-6);
  same([](const Tensor& t) { return F::lp_pool3d(t, F::LPPool3dFuncOptions(2, 2)); }, 1e-4);
  const Tensor s3 = raw::rand({4, 8, 3}, TensorOptions(kFloat32), &gen);
  same([&](const Tensor& t) {
    return F::fractional_max_pool3d(t, F::FractionalMaxPool3dFuncOptions(2).output_size(Int3(3, 5, 7))._random_samples(
                                           raw::to(s3, t.device(), kFloat32)));
  }, 1e-6);
  // bfloat16 and float16 run on the device without widening.
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor yd = F::max_pool3d(raw::to(xd, dev, dt), 2);
    EXPECT_TRUE(colony::testing::all_close(raw::to(yd, kCPU, kFloat32), F::max_pool3d(raw::to(raw::to(x, kCPU, dt), kCPU, kFloat32), 2), 0, 0));
  }
  colony::testing::expect_cuda_module_matches_cpu([] { return std::make_shared<BatchNorm3d>(8); }, x);
  colony::testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<InstanceNorm3d>(InstanceNorm3dOptions(8).affine(true)); }, x);
}

}  // namespace
}  // namespace colony::nn
