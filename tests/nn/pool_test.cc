// Max pooling with indices, adaptive max pooling and max unpooling (nn/functional_pool.cc,
// nn/pooling.h, the AdaptiveMaxPool2dForward kernel): outputs, indices and gradients against torch
// in float64 (tests/nn/pool_golden.py writes pool_golden.h from the same closed-form input, ties
// included), gradchecks, the modules' options, printing and state, torch's refusals, bfloat16, and
// the CUDA kernel against the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "nn/any_module.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/pool_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

// pool_golden.py's wave: 2 sin(a i + b), rounded to halves for the ties cases.
Tensor wave(const Shape& shape, double a, double b, bool ties = false, DType dtype = kFloat64) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[i] = 2.0 * std::sin(a * static_cast<double>(i) + b);
    if (ties) v[i] = std::nearbyint(v[i] * 2) / 2;  // torch.round: half to even, as nearbyint
  }
  return raw::to(raw::from_vector(v, shape, TensorOptions(kFloat64)), kCPU, dtype);
}

using Pair = std::tuple<Tensor, Tensor>;
using Fn = std::function<Pair(const Tensor&)>;  // (output, indices or undefined)
using std::nullopt;

Pair unpool2d(const Tensor& x, std::optional<std::vector<int64_t>> size = nullopt) {
  auto [y, i] = F::max_pool2d_with_indices(x, 2);
  return {F::max_unpool2d(y, i, F::MaxUnpool2dFuncOptions(2).output_size(size)), Tensor()};
}
Pair unpool1d(const Tensor& x, std::optional<std::vector<int64_t>> size = nullopt) {
  auto [y, i] = F::max_pool1d_with_indices(x, F::MaxPool1dFuncOptions(3).stride(2));
  return {F::max_unpool1d(y, i, F::MaxUnpool1dFuncOptions(3).stride(2).output_size(size)), Tensor()};
}

struct Case {
  std::string name;
  Shape shape;
  bool ties;
  Fn fn;
};

// pool_golden.py's CASES, in its order.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"max2d_k3s2p1", {2, 2, 5, 6}, false,
       [](const Tensor& x) { return F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1)); }},
      {"max2d_dil2_ceil", {1, 2, 7, 8}, false,
       [](const Tensor& x) {
         return F::max_pool2d_with_indices(
             x, F::MaxPool2dFuncOptions({2, 3}).stride({2, 1}).padding({1, 0}).dilation(2).ceil_mode(true));
       }},
      {"max2d_ties", {1, 2, 6, 6}, true,
       [](const Tensor& x) { return F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions(3).stride(1)); }},
      {"max2d_unbatched", {2, 4, 5}, false, [](const Tensor& x) { return F::max_pool2d_with_indices(x, 2); }},
      {"max1d_k3s2p1", {2, 3, 9}, false,
       [](const Tensor& x) { return F::max_pool1d_with_indices(x, F::MaxPool1dFuncOptions(3).stride(2).padding(1)); }},
      {"max1d_ties_unbatched", {3, 10}, true,
       [](const Tensor& x) { return F::max_pool1d_with_indices(x, F::MaxPool1dFuncOptions(4).stride(2).dilation(2)); }},
      {"adaptive2d", {2, 2, 7, 9}, false,
       [](const Tensor& x) { return F::adaptive_max_pool2d_with_indices(x, F::OptionalInt2(Int2(3, 4))); }},
      {"adaptive2d_none", {1, 3, 5, 7}, false,
       [](const Tensor& x) { return F::adaptive_max_pool2d_with_indices(x, F::OptionalInt2(nullopt, 3)); }},
      {"adaptive2d_up", {1, 2, 4, 3}, false,
       [](const Tensor& x) { return F::adaptive_max_pool2d_with_indices(x, F::OptionalInt2(5, 5)); }},
      {"adaptive2d_ties", {1, 2, 8, 8}, true, [](const Tensor& x) { return F::adaptive_max_pool2d_with_indices(x, 3); }},
      {"adaptive1d", {2, 3, 10}, false, [](const Tensor& x) { return F::adaptive_max_pool1d_with_indices(x, 4); }},
      {"adaptive1d_ties_unbatched", {3, 11}, true,
       [](const Tensor& x) { return F::adaptive_max_pool1d_with_indices(x, 5); }},
      {"unpool2d", {1, 2, 5, 6}, false, [](const Tensor& x) { return unpool2d(x); }},
      {"unpool2d_size", {1, 2, 5, 7}, false, [](const Tensor& x) { return unpool2d(x, std::vector<int64_t>{5, 7}); }},
      {"unpool2d_size4", {2, 1, 4, 4}, false,
       [](const Tensor& x) { return unpool2d(x, std::vector<int64_t>{2, 1, 5, 5}); }},
      {"unpool1d", {2, 2, 9}, false, [](const Tensor& x) { return unpool1d(x); }},
      {"unpool1d_size", {2, 2, 10}, false, [](const Tensor& x) { return unpool1d(x, std::vector<int64_t>{10}); }},
  };
  return all;
}

const std::vector<double>& golden(const std::string& key) {
  const auto& g = colony::testing::pool_golden();
  auto it = g.find(key);
  if (it == g.end()) throw std::runtime_error("no golden values for " + key);
  return it->second;
}

TEST(MaxPoolIndices, MatchTorchInFloat64) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Tensor x = wave(c.shape, 0.37, 0.1, c.ties);
    x.requires_grad_(true);
    auto [y, idx] = c.fn(x);
    Shape shape;
    for (double v : golden(c.name + ".shape")) shape.push_back(static_cast<int64_t>(v));
    EXPECT_EQ(y.sizes(), shape);
    EXPECT_TRUE(colony::testing::matches_values(y, golden(c.name + ".out"), 1e-12)) << "output";
    if (idx.defined()) {
      EXPECT_EQ(idx.dtype(), kInt64);
      EXPECT_EQ(idx.sizes(), shape);
      EXPECT_FALSE(idx.requires_grad());
      EXPECT_EQ(values(idx), golden(c.name + ".indices")) << "indices";
    }
    colony::sum(colony::mul(y, wave(y.sizes(), 0.31, 0.2))).backward();
    EXPECT_TRUE(colony::testing::matches_values(x.grad(), golden(c.name + ".grad"), 1e-12)) << "gradient";
  }
}

TEST(MaxPoolIndices, Gradchecks) {
  using colony::testing::gradcheck;
  using colony::testing::input;
  using V = std::vector<Tensor>;
  EXPECT_TRUE(gradcheck([](const V& x) { return std::get<0>(F::adaptive_max_pool2d_with_indices(x[0], F::OptionalInt2(3, 2))); },
                        {input({2, 2, 5, 4})}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::adaptive_max_pool2d(x[0], F::OptionalInt2(6, nullopt)); },
                        {input({1, 2, 4, 3})}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::adaptive_max_pool1d(x[0], 3); }, {input({2, 2, 7})}));
  EXPECT_TRUE(gradcheck(
      [](const V& x) { return std::get<0>(F::max_pool2d_with_indices(x[0], F::MaxPool2dFuncOptions(3).stride(1))); },
      {input({1, 2, 5, 5})}));
  // max_unpool2d's gradient in its input, at fixed indices (a permutation within each plane).
  Tensor idx = raw::from_vector<int64_t>({5, 0, 3, 2, 7, 1, 4, 6}, {1, 2, 2, 2}, TensorOptions(kInt64));
  EXPECT_TRUE(gradcheck([idx](const V& x) { return F::max_unpool2d(x[0], idx, F::MaxUnpool2dFuncOptions(2).stride(1)); },
                        {input({1, 2, 2, 2})}));
  Tensor idx1 = raw::from_vector<int64_t>({3, 0, 1, 2, 0, 4}, {2, 3}, TensorOptions(kInt64));
  EXPECT_TRUE(gradcheck([idx1](const V& x) { return F::max_unpool1d(x[0], idx1, F::MaxUnpool1dFuncOptions(2)); },
                        {input({2, 3})}));
}

// A NaN beats every number (torch's isnan rule), and the later NaN of a window wins.
TEST(MaxPoolIndices, AdaptiveMaxTakesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = raw::from_vector<double>({1, nan, 3, nan, 2, 0}, {1, 1, 6}, TensorOptions(kFloat64));
  auto [y, idx] = F::adaptive_max_pool1d_with_indices(x, 2);
  EXPECT_EQ(values(idx), (std::vector<double>{1, 3}));
  EXPECT_TRUE(std::isnan(values(y)[0]) && std::isnan(values(y)[1]));
}

// bfloat16: the maxima are bfloat16 inputs, exact; the gradients of overlapping windows are summed
// (a bfloat16 element that is the maximum of two windows gets both gradients).
TEST(MaxPoolIndices, BFloat16OverlappingWindowsSumTheirGradients) {
  Tensor x32 = wave({1, 2, 6, 6}, 0.37, 0.1, false, kFloat32);
  const std::vector<std::function<Tensor(const Tensor&)>> pools = {
      [](const Tensor& x) { return F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(1)); },
      [](const Tensor& x) { return F::adaptive_max_pool2d(x, 4); },
  };
  for (const auto& pool : pools) {
    Tensor xb = raw::to(x32, kCPU, kBFloat16), xf = raw::to(xb, kCPU, kFloat32);
    xb.requires_grad_(true);
    xf.requires_grad_(true);
    Tensor yb = pool(xb), yf = pool(xf);
    EXPECT_EQ(yb.dtype(), kBFloat16);
    EXPECT_EQ(values(yb), values(yf));
    colony::sum(yb).backward();
    colony::sum(yf).backward();
    EXPECT_EQ(values(xb.grad()), values(xf.grad()));
  }
}

TEST(PoolingModules, OptionsPrintingAndState) {
  EXPECT_EQ(AdaptiveMaxPool2d(7).repr(), "AdaptiveMaxPool2d(output_size=7)");
  EXPECT_EQ(AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({3, nullopt})).repr(), "AdaptiveMaxPool2d(output_size=(3, None))");
  EXPECT_EQ(AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions(Int2(3, 4))).repr(), "AdaptiveMaxPool2d(output_size=(3, 4))");
  EXPECT_EQ(AdaptiveMaxPool1d(3).repr(), "AdaptiveMaxPool1d(output_size=3)");
  EXPECT_EQ(MaxUnpool2d(2).repr(), "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))");
  EXPECT_EQ(MaxUnpool1d(MaxUnpool1dOptions(3).stride(2)).repr(), "MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(0,))");
  EXPECT_EQ(MaxUnpool2dOptions(3).stride(), Int2(3));  // stride defaults to kernel_size
  EXPECT_EQ(MaxUnpool1dOptions(3).padding(), 0);
  EXPECT_TRUE(AdaptiveMaxPool2d(3).state_dict().empty());
  EXPECT_TRUE(MaxUnpool2d(2).named_parameters().empty());
  EXPECT_TRUE(throws_with([] { AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({-1, 2})); }, "must be non-negative"));

  // forward_with_indices (torch's return_indices=True) feeds MaxUnpool's forward.
  Tensor x = wave({2, 3, 6, 8}, 0.37, 0.1);
  MaxPool2d pool(2);
  MaxUnpool2d unpool(2);
  auto [y, idx] = pool.forward_with_indices(x);
  EXPECT_EQ(values(y), values(pool.forward(x)));
  Tensor back = unpool.forward(y, idx);
  EXPECT_EQ(back.sizes(), x.sizes());
  EXPECT_EQ(values(pool.forward(back)), values(y));  // the maxima return to their places
  EXPECT_EQ(unpool.forward(y, idx, std::vector<int64_t>{7, 9}).sizes(), (Shape{2, 3, 7, 9}));
  AdaptiveMaxPool2d amp(AdaptiveMaxPool2dOptions({2, nullopt}));
  EXPECT_EQ(amp.forward(x).sizes(), (Shape{2, 3, 2, 8}));
  EXPECT_EQ(values(std::get<1>(amp.forward_with_indices(x))),
            values(std::get<1>(F::adaptive_max_pool2d_with_indices(x, F::OptionalInt2(2, 8)))));

  Tensor x1 = wave({2, 5, 9}, 0.37, 0.1);
  MaxPool1d pool1(MaxPool1dOptions(3).stride(2));
  auto [y1, idx1] = pool1.forward_with_indices(x1);
  EXPECT_EQ(MaxUnpool1d(MaxUnpool1dOptions(3).stride(2)).forward(y1, idx1).sizes(), (Shape{2, 5, 9}));
  EXPECT_EQ(AdaptiveMaxPool1d(4).forward(x1).sizes(), (Shape{2, 5, 4}));

  // Through AnyModule: MaxUnpool2d's forward takes 2 or 3 arguments; a Sequential of pools.
  AnyModule any(std::make_shared<MaxUnpool2d>(2));
  EXPECT_EQ(any.forward(y, idx).sizes(), x.sizes());
  Sequential seq(std::make_shared<AdaptiveMaxPool2d>(3), std::make_shared<AdaptiveMaxPool2d>(1));
  EXPECT_EQ(seq.forward(x).sizes(), (Shape{2, 3, 1, 1}));
}

TEST(PoolingModules, TorchsRefusals) {
  Tensor x = wave({1, 2, 4, 4}, 0.37, 0.1);
  auto [y, idx] = F::max_pool2d_with_indices(x, 2);
  auto unpool = [&](const Tensor& in, const Tensor& ind, F::MaxUnpool2dFuncOptions o) { F::max_unpool2d(in, ind, o); };
  EXPECT_TRUE(throws_with([&] { unpool(y, idx, F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{5})); },
                          "output_size should be a sequence containing 2 or 4 elements, but it has a length of '1'"));
  EXPECT_TRUE(throws_with([&] { unpool(y, idx, F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{6, 4})); },
                          "invalid output_size \"[6, 4]\" (dim 0 must be between 2 and 6)"));
  EXPECT_TRUE(throws_with([&] { unpool(y, raw::to(idx, kCPU, kInt32), 2); },
                          "elements in indices should be type int64 but got: int32"));
  EXPECT_TRUE(throws_with([&] { unpool(y, raw::narrow(idx, 1, 0, 1), 2); },
                          "Expected shape of indices to be same as that of the input tensor ([1, 2, 2, 2]) but got "
                          "indices tensor with shape: [1, 1, 2, 2]"));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { unpool(y, raw::add(idx, raw::full_like(idx, 20)), 2); },
                                             "Found an invalid max index: 2"));
  EXPECT_TRUE(throws_with([&] { unpool(raw::select(raw::select(y, 0, 0), 0, 0), raw::select(raw::select(idx, 0, 0), 0, 0), 2); },
                          "should be a 3d or 4d Tensor, but got a tensor with 2 dimensions."));
  EXPECT_TRUE(throws_with([&] { F::adaptive_max_pool2d(wave({2, 3}, 0.3, 0.1), 2); }, "3-D (C,H,W) or 4-D (N,C,H,W)"));
  EXPECT_TRUE(throws_with([&] { F::adaptive_max_pool2d(wave({2, 0, 3, 3}, 0.3, 0.1), 2); },
                          "expected non-empty channel and spatial dims"));
  EXPECT_TRUE(throws_with([&] { F::adaptive_max_pool1d(wave({2, 3, 4, 5}, 0.3, 0.1), 2); },
                          "expected 2-D (unbatched [C, L]) or 3-D ([N, C, L]) input"));
  EXPECT_TRUE(throws_with([&] { F::adaptive_max_pool2d(raw::to(x, kCPU, kInt64), 2); }, "floating"));
  // An output size of 0 is an empty output, as torch's.
  EXPECT_EQ(F::adaptive_max_pool2d(x, F::OptionalInt2(0, 2)).sizes(), (Shape{1, 2, 0, 2}));
}

// The CUDA kernel against the CPU: outputs, indices (ties included) and the gradient.
TEST(MaxPoolIndices, AdaptiveMaxOnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (bool ties : {false, true}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      Tensor cpu = wave({2, 3, 9, 7}, 0.37, 0.1, ties, dtype);
      Tensor gpu = raw::to(cpu, Device::cuda(0), dtype);
      cpu.requires_grad_(true);
      gpu.requires_grad_(true);
      auto [yc, ic] = F::adaptive_max_pool2d_with_indices(cpu, F::OptionalInt2(4, 5));
      auto [yg, ig] = F::adaptive_max_pool2d_with_indices(gpu, F::OptionalInt2(4, 5));
      EXPECT_EQ(values(raw::to(yg, kCPU, dtype)), values(yc));
      EXPECT_EQ(values(raw::to(ig, kCPU, kInt64)), values(ic));
      colony::sum(colony::mul(yc, wave(yc.sizes(), 0.31, 0.2, false, dtype))).backward();
      colony::sum(colony::mul(yg, raw::to(wave(yg.sizes(), 0.31, 0.2, false, dtype), Device::cuda(0), dtype))).backward();
      EXPECT_TRUE(colony::testing::all_close(raw::to(gpu.grad(), kCPU, dtype), cpu.grad(), 1e-6, 1e-6));
      // bfloat16 and float16 run the kernel in float32: the maxima are exact.
      Tensor h = raw::to(gpu, Device::cuda(0), kBFloat16);
      EXPECT_EQ(values(raw::to(std::get<0>(F::adaptive_max_pool2d_with_indices(h, 3)), kCPU, kFloat32)),
                values(raw::to(F::adaptive_max_pool2d(raw::to(raw::to(h, kCPU, kBFloat16), kCPU, kFloat32), 3), kCPU,
                               kFloat32)));
    }
  }
}

}  // namespace
}  // namespace colony::nn

namespace colony::nn {
namespace {

// torch's spelling F.adaptive_avg_pool2d(x, 1) (global average pooling) compiles and means [1, 1].
TEST(AdaptiveAvgPool2d, TakesAPlainNumber) {
  Tensor x = raw::arange(2 * 3 * 4 * 4, TensorOptions(kFloat32)).reshape({2, 3, 4, 4});
  Tensor y = functional::adaptive_avg_pool2d(x, 1);
  EXPECT_EQ(y.sizes(), (Shape{2, 3, 1, 1}));
  EXPECT_TRUE(raw::equal(y, functional::adaptive_avg_pool2d(x, Int2(1, 1))));
  EXPECT_EQ(functional::adaptive_avg_pool2d(x, 2).sizes(), (Shape{2, 3, 2, 2}));
}

}  // namespace
}  // namespace colony::nn
