// F::conv3d / F::conv_transpose3d and nn::Conv3d / nn::ConvTranspose3d (ops/conv3d_ops.cc,
// kernels/cpu/conv3d.cc, kernels/cuda/cudnn_conv.cc): values and the gradients of every input
// against torch in float64 and float32 (tests/nn/conv3d_golden.py writes conv3d_golden.h), float64
// gradchecks, torch's refusals, initialization and printing as torch's, 16-bit inputs computed in
// float32, the CPU's backward across thread counts, and CUDA against the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/autograd.h"
#include "autograd/autocast.h"
#include "nn/conv.h"
#include "nn/conv_transpose.h"
#include "nn/functional.h"
#include "tensor/threads.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/conv3d_golden.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"
#include "tests/tf32_guard.h"

namespace colony::nn {
namespace {

namespace F = functional;
using colony::testing::all_close;
using colony::testing::throws_with;
using In = std::vector<Tensor>;
using testing::golden::Op;

Tensor bias_of(const In& x) { return x.size() > 2 ? x[2] : Tensor(); }

// A module built by `make`, its weight and bias replaced by the case's inputs 1 and 2 (so their
// gradients are the case's), run by `run`.
template <typename M>
Tensor with_params(std::shared_ptr<M> m, const In& x, Device device) {
  m->to(device, x[0].dtype());
  m->weight = x[1];
  m->bias = x[2];
  return m->forward(x[0]);
}

// conv3d_golden.py's cases, by name.
std::map<std::string, Op> calls() {
  std::map<std::string, Op> c;
  auto conv = [](F::Conv3dFuncOptions o) {
    return [o](const In& x, Device) { return F::conv3d(x[0], x[1], bias_of(x), o); };
  };
  auto convt = [](F::ConvTranspose3dFuncOptions o) {
    return [o](const In& x, Device) { return F::conv_transpose3d(x[0], x[1], bias_of(x), o); };
  };
  c["c3_basic"] = conv(F::Conv3dFuncOptions().padding(1));
  c["c3_stride_nobias"] = conv(F::Conv3dFuncOptions().stride({2, 1, 2}).padding({0, 1, 2}));
  c["c3_dilation"] = conv(F::Conv3dFuncOptions().dilation({2, 1, 3}).padding(1));
  c["c3_groups"] = conv(F::Conv3dFuncOptions().groups(2).stride({1, 2, 1}));
  c["c3_depthwise"] = conv(F::Conv3dFuncOptions().groups(3).padding({1, 0, 1}));
  c["c3_same_even"] = conv(F::Conv3dFuncOptions().padding("same").dilation({1, 2, 1}));
  c["c3_valid"] = conv(F::Conv3dFuncOptions().padding("valid").stride(2));
  c["c3_unbatched"] = conv(F::Conv3dFuncOptions().padding({1, 1, 0}));
  c["c3_pointwise"] = conv(F::Conv3dFuncOptions().stride({1, 2, 3}));
  c["c3_wide"] = conv(F::Conv3dFuncOptions().padding(1));
  c["c3_wide_stride2"] = conv(F::Conv3dFuncOptions().stride({1, 1, 2}).padding({1, 0, 1}));
  c["c3_wide_stride2_odd"] = conv(F::Conv3dFuncOptions().stride({2, 1, 2}).padding({0, 1, 1}));
  c["c3_blocks"] = conv(F::Conv3dFuncOptions().padding(1));
  c["ct3_wide_stride2"] = convt(F::ConvTranspose3dFuncOptions().stride({1, 1, 2}).padding({0, 1, 1}));
  c["ct3_basic"] = convt(F::ConvTranspose3dFuncOptions().stride(2).padding(1).output_padding(1));
  c["ct3_groups_dilation"] = convt(
      F::ConvTranspose3dFuncOptions().groups(2).stride({1, 2, 2}).output_padding({0, 1, 0}).dilation({1, 2, 1}));
  c["ct3_nobias"] = convt(F::ConvTranspose3dFuncOptions().stride({2, 1, 3}).output_padding({1, 0, 2}));
  c["ct3_unbatched"] = convt(F::ConvTranspose3dFuncOptions().padding({1, 0, 1}));
  c["m3_reflect"] = [](const In& x, Device d) {
    return with_params(std::make_shared<Conv3d>(
                           Conv3dOptions(2, 2, 3).padding({1, 2, 1}).padding_mode("reflect").stride({1, 2, 1})),
                       x, d);
  };
  c["m3_replicate_same"] = [](const In& x, Device d) {
    return with_params(
        std::make_shared<Conv3d>(Conv3dOptions(2, 2, {3, 3, 2}).padding("same").padding_mode("replicate")), x, d);
  };
  c["m3_circular"] = [](const In& x, Device d) {
    return with_params(
        std::make_shared<Conv3d>(Conv3dOptions(2, 4, 3).padding(1).padding_mode("circular").groups(2)), x, d);
  };
  c["mt3_output_size"] = [](const In& x, Device d) {
    auto m = std::make_shared<ConvTranspose3d>(ConvTranspose3dOptions(2, 2, 3).stride(2).padding(1));
    m->to(d, x[0].dtype());
    m->weight = x[1];
    m->bias = x[2];
    return m->forward(x[0], {4, 6, 3});
  };
  std::map<std::string, Op> all = c;
  for (const auto& [name, op] : c) all[name + "_f32"] = op;
  return all;
}

// float32 to 2e-5 relative: torch's CPU kernels (oneDNN) sum the products in another order.
constexpr double kF32Tol = 2e-5;

TEST(Conv3d, MatchesTorch) {
  const auto ops = calls();
  for (const auto& c : testing::conv3d_golden::kCases) EXPECT_TRUE(testing::golden::matches(c, ops, kCPU, kF32Tol));
}

// The batch is split over the threads (each part with a private weight gradient, summed in a fixed
// order): every thread count gives torch's values.
TEST(Conv3d, MatchesTorchOnOneThreadAndThree) {
  const auto ops = calls();
  const int saved = get_num_threads();
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    for (const auto& c : testing::conv3d_golden::kCases) EXPECT_TRUE(testing::golden::matches(c, ops, kCPU, kF32Tol));
  }
  set_num_threads(saved);
}

TEST(Conv3d, Gradcheck) {
  using colony::testing::gradcheck;
  using colony::testing::input;
  const Tensor x = input({2, 4, 4, 5, 4}, -1.0, 1.0, 1), w = input({6, 2, 2, 3, 2}, -1.0, 1.0, 2);
  const Tensor b = input({6}, -1.0, 1.0, 3);
  EXPECT_TRUE(gradcheck(
      [](const In& in) {
        return F::conv3d(in[0], in[1], in[2],
                         F::Conv3dFuncOptions().stride({1, 2, 1}).padding({1, 0, 2}).dilation({2, 1, 1}).groups(2));
      },
      {x, w, b}));
  EXPECT_TRUE(gradcheck([](const In& in) { return F::conv3d(in[0], in[1], Tensor(), F::Conv3dFuncOptions().padding("same")); },
                        {input({1, 2, 3, 4, 4}, -1.0, 1.0, 4), input({3, 2, 2, 3, 2}, -1.0, 1.0, 5)}));
  const Tensor xt = input({2, 4, 2, 3, 2}, -1.0, 1.0, 6), wt = input({4, 3, 3, 2, 3}, -1.0, 1.0, 7);
  EXPECT_TRUE(gradcheck(
      [](const In& in) {
        return F::conv_transpose3d(
            in[0], in[1], in[2],
            F::ConvTranspose3dFuncOptions().stride({2, 1, 3}).padding({1, 0, 1}).output_padding({1, 0, 2}).groups(2));
      },
      {xt, wt, input({6}, -1.0, 1.0, 8)}));
}

TEST(Conv3d, EitherGradientAloneMatchesAll) {
  const Tensor x = colony::testing::input({2, 3, 4, 5, 6}, -1.0, 1.0, 1);
  const Tensor w = colony::testing::input({4, 3, 3, 3, 3}, -1.0, 1.0, 2);
  const raw::Conv3dParams p{{1, 2, 1}, 1, 1, 1};
  const Tensor gy = colony::testing::input(raw::conv3d(x, w, Tensor(), p.stride, p.padding).sizes(), -1.0, 1.0, 3);
  const raw::Conv2dGrads all = raw::conv3d_backward(gy, x, w, p);
  EXPECT_TRUE(all_close(raw::conv3d_backward(gy, x, w, p, {true, false, false}).grad_input, all.grad_input, 0, 0));
  EXPECT_TRUE(all_close(raw::conv3d_backward(gy, x, w, p, {false, true, false}).grad_weight, all.grad_weight, 0, 0));
  EXPECT_TRUE(all_close(raw::conv3d_backward(gy, x, w, p, {false, false, true}).grad_bias, all.grad_bias, 0, 0));
}

TEST(Conv3d, EmptyBatch) {
  const Tensor x = raw::zeros({0, 2, 3, 3, 3}), w = raw::ones({4, 2, 2, 2, 2});
  EXPECT_EQ(F::conv3d(x, w).sizes(), Shape({0, 4, 2, 2, 2}));
  const raw::Conv2dGrads g = raw::conv3d_backward(raw::zeros({0, 4, 2, 2, 2}), x, w, {});
  EXPECT_EQ(g.grad_input.sizes(), x.sizes());
  EXPECT_TRUE(all_close(g.grad_weight, raw::zeros({4, 2, 2, 2, 2}), 0, 0));
  EXPECT_TRUE(all_close(g.grad_bias, raw::zeros({4}), 0, 0));
}

TEST(Conv3d, SixteenBitInputsComputeInFloat32) {
  const Tensor x = colony::testing::input({1, 3, 4, 5, 4}, -1.0, 1.0, 1);
  const Tensor w = colony::testing::input({4, 3, 3, 3, 3}, -1.0, 1.0, 2);
  const Tensor b = colony::testing::input({4}, -1.0, 1.0, 3);
  for (DType dt : {kBFloat16, kFloat16}) {
    const Tensor x16 = raw::to(x, kCPU, dt), w16 = raw::to(w, kCPU, dt), b16 = raw::to(b, kCPU, dt);
    auto f32 = [](const Tensor& t) { return raw::to(t, kCPU, kFloat32); };
    const Tensor want = raw::to(raw::conv3d(f32(x16), f32(w16), f32(b16), 1, 1), kCPU, dt);
    const Tensor got = raw::conv3d(x16, w16, b16, 1, 1);
    EXPECT_EQ(got.dtype(), dt);
    EXPECT_TRUE(all_close(got, want, 0, 0));
    const Tensor wt16 = raw::to(raw::narrow(w, 0, 0, 3), kCPU, dt), bt16 = raw::to(raw::narrow(b, 0, 0, 3), kCPU, dt);
    const Tensor wantt = raw::to(raw::conv_transpose3d(f32(x16), f32(wt16), f32(bt16), 2, 1, 1), kCPU, dt);
    EXPECT_TRUE(all_close(raw::conv_transpose3d(x16, wt16, bt16, 2, 1, 1), wantt, 0, 0));
  }
}

TEST(Conv3d, AutocastRunsInTheLowerPrecision) {
  const Tensor x = colony::testing::input({1, 2, 3, 4, 4}, -1.0, 1.0, 1);
  const Tensor x32 = raw::to(x, kCPU, kFloat32);
  const Tensor w = raw::to(colony::testing::input({3, 2, 2, 2, 2}, -1.0, 1.0, 2), kCPU, kFloat32);
  const Tensor wt = raw::to(colony::testing::input({2, 3, 2, 2, 2}, -1.0, 1.0, 3), kCPU, kFloat32);
  AutocastGuard guard(DeviceType::CPU, kBFloat16);
  EXPECT_EQ(conv3d(x32, w).dtype(), kBFloat16);
  EXPECT_EQ(conv_transpose3d(x32, wt).dtype(), kBFloat16);
}

TEST(Conv3d, RefusesAsTorch) {
  const Tensor x = raw::zeros({1, 4, 5, 6, 6}), w = raw::zeros({6, 2, 3, 3, 3});
  auto conv = [](Tensor x, Tensor w, F::Conv3dFuncOptions o = {}, Tensor b = Tensor()) {
    return [=] { F::conv3d(x, w, b, o); };
  };
  EXPECT_TRUE(throws_with(conv(raw::zeros({4, 5, 6}), w),
                          "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: [4, 5, 6]"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(3)),
                          "Given groups=3, weight of size [6, 2, 3, 3, 3], expected input[1, 4, 5, 6, 6] to have 6 "
                          "channels, but got 4 channels instead"));
  EXPECT_TRUE(throws_with(conv(x, raw::zeros({5, 2, 3, 3, 3}), F::Conv3dFuncOptions().groups(2)),
                          "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
                          "[5, 2, 3, 3, 3] instead"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(2).stride({1, 0, 1})),
                          "non-positive stride is not supported"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(2).padding(-1)), "negative padding is not supported"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(2).dilation(0)), "non-positive dilation is not supported"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(0)), "non-positive groups is not supported"));
  EXPECT_TRUE(throws_with(conv(x, raw::zeros({6, 2, 7, 3, 3}), F::Conv3dFuncOptions().groups(2)),
                          "Calculated padded input size per channel: (5 x 6 x 6). Kernel size: (7 x 3 x 3). Kernel "
                          "size can't be greater than actual input size"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(2), raw::zeros({5})),
                          "Given weight of size [6, 2, 3, 3, 3], expected bias to be 1-dimensional with 6 elements, but "
                          "got bias of size [5] instead"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(2).padding("same").stride(2)),
                          "padding='same' is not supported for strided convolutions"));
  EXPECT_TRUE(throws_with(conv(x, w, F::Conv3dFuncOptions().groups(2).padding("foo")), "Invalid padding string: 'foo'"));
  EXPECT_TRUE(throws_with(conv(x, raw::zeros({6, 2, 3, 3})), "expected a 5-D weight"));
  EXPECT_TRUE(throws_with(conv(x, raw::zeros({6, 2, 3, 3, 3}, TensorOptions(kFloat64)), F::Conv3dFuncOptions().groups(2)),
                          "expected weight of dtype float32 like input, got float64"));
  EXPECT_TRUE(throws_with(conv(raw::zeros({1, 4, 5, 6, 6}, TensorOptions(kInt64)),
                               raw::zeros({6, 2, 3, 3, 3}, TensorOptions(kInt64)), F::Conv3dFuncOptions().groups(2)),
                          "expected a floating point input"));

  auto convt = [](Tensor x, Tensor w, F::ConvTranspose3dFuncOptions o = {}) {
    return [=] { F::conv_transpose3d(x, w, Tensor(), o); };
  };
  EXPECT_TRUE(throws_with(convt(x, raw::zeros({3, 3, 3, 3, 3})),
                          "Given transposed=1, weight of size [3, 3, 3, 3, 3], expected input[1, 4, 5, 6, 6] to have 3 "
                          "channels, but got 4 channels instead"));
  EXPECT_TRUE(throws_with(convt(x, raw::zeros({4, 3, 3, 3, 3}), F::ConvTranspose3dFuncOptions().groups(3)),
                          "Given groups=3, expected weight to be divisible by 3 at dimension 0"));
  EXPECT_TRUE(throws_with(convt(x, raw::zeros({4, 3, 3, 3, 3}), F::ConvTranspose3dFuncOptions().output_padding(1)),
                          "output padding must be smaller than stride"));
  EXPECT_TRUE(throws_with(convt(raw::zeros({2, 4, 5}), raw::zeros({4, 3, 3, 3, 3})),
                          "Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input of size: "
                          "[2, 4, 5]"));

  EXPECT_TRUE(throws_with([] { Conv3d(Conv3dOptions(4, 6, 3).groups(4)); },
                          "Conv3d: in_channels (4) and out_channels (6) must be divisible by groups (4)"));
  EXPECT_TRUE(throws_with([] { Conv3d(Conv3dOptions(4, 6, 3).padding_mode("foo")); },
                          "padding_mode must be one of {'zeros', 'reflect', 'replicate', 'circular'}, but got "
                          "padding_mode='foo'"));
  EXPECT_TRUE(throws_with([] { Conv3d(Conv3dOptions(4, 6, 3).padding("same").stride(2)); },
                          "padding='same' is not supported for strided convolutions"));
  EXPECT_TRUE(throws_with([] { ConvTranspose3d(ConvTranspose3dOptions(4, 6, 3).padding_mode("reflect")); },
                          "Only \"zeros\" padding mode is supported for ConvTranspose3d"));
  ConvTranspose3d up(ConvTranspose3dOptions(2, 2, 3).stride(2).padding(1));
  EXPECT_TRUE(throws_with([&] { up.forward(raw::zeros({1, 2, 2, 3, 2}), {4, 7, 3}); },
                          "requested an output size of [4, 7, 3], but valid sizes range from [3, 5, 3] to [4, 6, 4]"));
}

std::string printed(const Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

TEST(Conv3d, PrintsAsTorch) {
  EXPECT_EQ(printed(Conv3d(Conv3dOptions(4, 6, 3))), "Conv3d(4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1))");
  EXPECT_EQ(printed(Conv3d(Conv3dOptions(4, 6, {1, 3, 3})
                               .stride({1, 2, 2})
                               .padding({0, 1, 1})
                               .dilation(2)
                               .groups(2)
                               .bias(false)
                               .padding_mode("reflect"))),
            "Conv3d(4, 6, kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), dilation=(2, 2, 2), groups=2, "
            "bias=False, padding_mode=reflect)");
  EXPECT_EQ(printed(Conv3d(Conv3dOptions(4, 6, 3).padding("same"))),
            "Conv3d(4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=same)");
  EXPECT_EQ(printed(ConvTranspose3d(ConvTranspose3dOptions(4, 6, 3))),
            "ConvTranspose3d(4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1))");
  EXPECT_EQ(printed(ConvTranspose3d(ConvTranspose3dOptions(4, 6, 3)
                                        .stride(2)
                                        .padding(1)
                                        .output_padding(1)
                                        .groups(2)
                                        .bias(false)
                                        .dilation({1, 2, 2}))),
            "ConvTranspose3d(4, 6, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), dilation=(1, 2, 2), "
            "output_padding=(1, 1, 1), groups=2, bias=False)");
}

TEST(Conv3d, InitializedAsTorch) {
  // kaiming_uniform_(a = sqrt(5)): bound 1 / sqrt(fan_in) for weight and bias alike; fan_in =
  // weight.size(1) * kernel elements (out / groups * k for the transposed weight).
  Conv3d c(Conv3dOptions(4, 6, {2, 3, 3}).groups(2));
  EXPECT_EQ(c.weight.sizes(), Shape({6, 2, 2, 3, 3}));
  ConvTranspose3d t(ConvTranspose3dOptions(4, 6, 3).groups(2));
  EXPECT_EQ(t.weight.sizes(), Shape({4, 3, 3, 3, 3}));
  for (const auto& [w, b, fan_in] : {std::make_tuple(c.weight, c.bias, 2.0 * 18), std::make_tuple(t.weight, t.bias, 3.0 * 27)}) {
    const double bound = 1.0 / std::sqrt(fan_in);
    for (const Tensor& p : {w, b}) {
      double lo = 1, hi = -1;
      for (double v : colony::testing::values(p)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      EXPECT_GE(lo, -bound);
      EXPECT_LE(hi, bound);
      EXPECT_GT(hi - lo, bound);  // drawn, not constant
    }
  }
  EXPECT_EQ(c.named_parameters().size(), 2u);
  EXPECT_EQ(Conv3d(Conv3dOptions(4, 6, 3).bias(false)).named_parameters().size(), 1u);
}

TEST(Conv3d, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  testing::Tf32Guard tf32(false);
  const auto ops = calls();
  for (const auto& c : testing::conv3d_golden::kCases) {
    EXPECT_TRUE(testing::golden::matches(c, ops, Device::cuda(0), kF32Tol));
  }
}

TEST(Conv3d, ModulesOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = colony::testing::input({2, 8, 6, 10, 9}, -1.0, 1.0, 1);
  const Tensor x32 = raw::to(x, kCPU, kFloat32);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Conv3d>(Conv3dOptions(8, 16, 3).stride({1, 2, 2}).padding(1).groups(2)); }, x32);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Conv3d>(Conv3dOptions(8, 4, {2, 3, 3}).padding("same").dilation({1, 2, 1})); }, x32);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<ConvTranspose3d>(ConvTranspose3dOptions(8, 6, 3).stride(2).padding(1).output_padding(1)); },
      x32);
}

TEST(Conv3d, SixteenBitOnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = colony::testing::input({2, 4, 5, 6, 7}, -1.0, 1.0, 1);
  const Tensor w = colony::testing::input({6, 4, 3, 3, 3}, -1.0, 1.0, 2);
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor cpu = raw::conv3d(raw::to(x, kCPU, dt), raw::to(w, kCPU, dt), Tensor(), 1, 1);
    const Tensor gpu = raw::conv3d(raw::to(x, Device::cuda(0), dt), raw::to(w, Device::cuda(0), dt), Tensor(), 1, 1);
    EXPECT_TRUE(all_close(raw::to(gpu, kCPU, kFloat64), raw::to(cpu, kCPU, kFloat64), 2e-2, 2e-2));
  }
}

}  // namespace
}  // namespace colony::nn
