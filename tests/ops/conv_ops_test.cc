// conv2d (ops/conv_ops.cc, declared in ops/raw_nn_ops.h) against naive loops written from the
// definition (tests/kernels/conv_reference.h), gradients against finite differences in float64,
// and the CUDA path against the CPU. The CPU kernels themselves: tests/kernels/conv_test.cc.
#include "ops/raw_nn_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "tensor/threads.h"
#include "tests/kernels/conv_reference.h"
#include "tests/ops/nn_op_testing.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using raw::Int2;
using namespace colony::testing;  // NOLINT(build/namespaces): the shared helpers of these tests

// bfloat16 convolutions through the front functions: with bfloat16 tiles (the emulated copies here,
// the AVX512_BF16 or AMX ones where the CPU has them) every stride-1 case runs natively; without,
// or with another stride, the operands are widened to float32. Either way each output is the float64
// reference on the bfloat16 inputs, up to float32 accumulation and one bfloat16 rounding (2^-9
// relative; 1e-2 allows for the float32 sums of the weight gradients).
void expect_bf16_convolutions_match_naive(bool native_expected) {
  uint32_t seed = 500;
  for (const ConvCase& k : conv_cases()) {
    const kernels::Conv2dGeometry g = geometry(k);
    const bool stride1 = k.stride.h == 1 && k.stride.w == 1;
    EXPECT_EQ(kernels::cpu::conv2d_native_16bit(kBFloat16, g), native_expected && stride1) << name(k);
    ConvDims d = dims(k);
    Tensor xt = random_tensor(x_shape(k), seed++, kBFloat16), wt = random_tensor(w_shape(k), seed++, kBFloat16);
    Tensor bt = random_tensor({k.o}, seed++, kBFloat16);
    Tensor gyt = random_tensor({k.n, k.o, d.ho, d.wo}, seed++, kBFloat16);
    // The reference sees exactly the bfloat16 values.
    std::vector<double> ref = naive_conv(k, values(xt), values(wt), values(bt));
    NaiveGrads ref_g = naive_conv_backward(k, values(gyt), values(xt), values(wt));
    SCOPED_TRACE(name(k));
    Tensor y = raw::conv2d(xt, wt, k.bias ? bt : Tensor(), k.stride, k.padding, k.dilation, k.groups);
    ASSERT_EQ(y.dtype(), kBFloat16);
    std::string where;
    const double tol = 1e-2;
    EXPECT_TRUE(close(values(y), ref, tol, &where)) << "forward " << where;
    raw::Conv2dGrads grads = raw::conv2d_backward(gyt, xt, wt, {k.stride, k.padding, k.dilation, k.groups});
    ASSERT_EQ(grads.grad_weight.dtype(), kBFloat16);
    EXPECT_TRUE(close(values(grads.grad_input), ref_g.gx, tol, &where)) << "grad_input " << where;
    EXPECT_TRUE(close(values(grads.grad_weight), ref_g.gw, tol, &where)) << "grad_weight " << where;
    EXPECT_TRUE(close(values(grads.grad_bias), ref_g.gb, tol, &where)) << "grad_bias " << where;
  }
}

TEST(Conv2d, Bfloat16MatchesNaiveNativelyWithBf16TilesAndWidenedWithout) {
  using namespace kernels::cpu;
  {
    ScopedAmxGemmFns no_amx(nullptr);
    for (const SmallGemmBf16Fns* t : runnable_bf16_copies()) {
      SCOPED_TRACE(t->isa);
      ScopedSmallGemmBf16Fns use(t);
      expect_bf16_convolutions_match_naive(true);
    }
  }
  // AMX tiles alone (the emulated copy anywhere, the hardware where usable): every pass on them.
  for (const AmxGemmFns* t : runnable_amx_copies()) {
    SCOPED_TRACE(t->isa);
    ScopedSmallGemmBf16Fns no_bf16_tiles(nullptr);
    ScopedAmxGemmFns use(t);
    expect_bf16_convolutions_match_naive(true);
  }
  // Both (as on an AMX CPU): every stride-1 case taken by the kernels, which widen fewer than 16
  // output channels per group themselves (conv2d_native_16bit).
  for (const SmallGemmBf16Fns* t : runnable_bf16_copies()) {
    for (const AmxGemmFns* a : runnable_amx_copies()) {
      SCOPED_TRACE(std::string(t->isa) + " and " + a->isa);
      ScopedSmallGemmBf16Fns use_bf16(t);
      ScopedAmxGemmFns use_amx(a);
      expect_bf16_convolutions_match_naive(true);
    }
  }
  {
    SCOPED_TRACE("no bfloat16 tiles: widened");
    ScopedSmallGemmBf16Fns none(nullptr);
    ScopedAmxGemmFns no_amx(nullptr);
    expect_bf16_convolutions_match_naive(false);
  }
}

TEST(Conv2d, FrontFunctionMatchesNaiveWithNonContiguousInputs) {
  const ConvCase k{2, 4, 7, 9, 6, 3, 3, 1, 1, 1, 2, true};
  ConvDims d = dims(k);
  // input built as [N, W, H, C] and permuted to [N, C, H, W]: every stride differs from contiguous
  std::vector<double> x = random_values(shape_numel(x_shape(k)), 11);
  std::vector<double> w = random_values(shape_numel(w_shape(k)), 12);
  std::vector<double> b = random_values(k.o, 13);
  Tensor xc = from(x, x_shape(k));
  Tensor x_nc = raw::permute(raw::contiguous(raw::permute(xc, {0, 3, 2, 1})), {0, 3, 2, 1});
  ASSERT_FALSE(x_nc.is_contiguous());
  Tensor wc = from(w, w_shape(k));
  Tensor w_nc = raw::transpose(raw::contiguous(raw::transpose(wc, 2, 3)), 2, 3);
  ASSERT_FALSE(w_nc.is_contiguous());
  Tensor bias_strided = raw::slice(from([&] {
                                     std::vector<double> twice;
                                     for (double v : b) twice.insert(twice.end(), {v, 0.0});
                                     return twice;
                                   }(), {2 * k.o}), 0, 0, 2 * k.o, 2);
  Tensor y = raw::conv2d(x_nc, w_nc, bias_strided, k.stride, k.padding, k.dilation, k.groups);
  EXPECT_EQ(y.sizes(), (Shape{k.n, k.o, d.ho, d.wo}));
  EXPECT_TRUE(all_close(y, from(naive_conv(k, x, w, b), y.sizes()), 1e-12, 1e-12));
}

// conv2d_backward's three gradients against the naive ones; atol_sum for weight and bias, which
// sum over the batch and the output positions.
void expect_grads_match_naive(const raw::Conv2dGrads& grads, const ConvCase& k, const std::vector<double>& gy,
                              const std::vector<double>& x, const std::vector<double>& w, double rtol, double atol,
                              double atol_sum) {
  NaiveGrads ref = naive_conv_backward(k, gy, x, w);
  EXPECT_TRUE(all_close(grads.grad_input, from(ref.gx, x_shape(k)), rtol, atol));
  EXPECT_TRUE(all_close(grads.grad_weight, from(ref.gw, w_shape(k)), rtol, atol_sum));
  EXPECT_TRUE(all_close(grads.grad_bias, from(ref.gb, {k.o}), rtol, atol_sum));
}

TEST(Conv2d, LeNetShapesInFloat32) {
  // Both LeNet layers at a batch the thread pool splits unevenly.
  ThreadCount threads(3);
  for (const ConvCase& k : {ConvCase{5, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},
                            ConvCase{5, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true}}) {
    SCOPED_TRACE(name(k));
    ConvDims d = dims(k);
    std::vector<double> x = random_values(shape_numel(x_shape(k)), 21);
    std::vector<double> w = random_values(shape_numel(w_shape(k)), 22);
    std::vector<double> b = random_values(k.o, 23);
    std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, 24);
    Tensor y = raw::conv2d(from(x, x_shape(k), kFloat32), from(w, w_shape(k), kFloat32), from(b, {k.o}, kFloat32));
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TRUE(all_close(y, from(naive_conv(k, x, w, b), y.sizes()), 1e-4, 1e-4));
    auto grads = raw::conv2d_backward(from(gy, y.sizes(), kFloat32), from(x, x_shape(k), kFloat32),
                                      from(w, w_shape(k), kFloat32), {1, 0, 1, 1});
    expect_grads_match_naive(grads, k, gy, x, w, 1e-4, 1e-4, 1e-3);
  }
}

TEST(Conv2d, AutoMayPickDifferentAlgorithmsPerGradient) {
  // 288 x 20 weights: Auto computes grad_input directly and grad_weight through im2col + Eigen.
  const ConvCase k{2, 32, 6, 6, 20, 3, 3, 1, 1, 1, 1, true};
  const kernels::Conv2dGeometry g = geometry(k);
  ASSERT_NE(kernels::cpu::choose_conv_algorithm(g, kernels::cpu::ConvPass::BackwardInput),
            kernels::cpu::choose_conv_algorithm(g, kernels::cpu::ConvPass::BackwardWeight));
  ConvDims d = dims(k);
  std::vector<double> x = random_values(shape_numel(x_shape(k)), 25), w = random_values(shape_numel(w_shape(k)), 26);
  std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, 27);
  auto grads = raw::conv2d_backward(from(gy, {k.n, k.o, d.ho, d.wo}), from(x, x_shape(k)), from(w, w_shape(k)),
                                    {k.stride, k.padding, k.dilation, k.groups});
  expect_grads_match_naive(grads, k, gy, x, w, 1e-12, 1e-12, 1e-12);
}

TEST(Conv2d, ThreadCountDoesNotChangeResultsBeyondRounding) {
  const ConvCase k{7, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true};
  ConvDims d = dims(k);
  Tensor x = random_tensor(x_shape(k), 31, kFloat32), w = random_tensor(w_shape(k), 32, kFloat32);
  Tensor b = random_tensor({k.o}, 33, kFloat32), gy = random_tensor({k.n, k.o, d.ho, d.wo}, 34, kFloat32);
  auto run = [&](int n) {
    ThreadCount threads(n);
    return std::make_pair(raw::conv2d(x, w, b), raw::conv2d_backward(gy, x, w, {}));
  };
  auto one = run(1), four = run(4);
  EXPECT_TRUE(raw::equal(one.first, four.first));  // images are independent: same arithmetic
  EXPECT_TRUE(raw::equal(one.second.grad_input, four.second.grad_input));
  EXPECT_TRUE(all_close(one.second.grad_weight, four.second.grad_weight, 1e-5, 1e-4));
  EXPECT_TRUE(all_close(one.second.grad_bias, four.second.grad_bias, 1e-5, 1e-4));
}

// Finite differences of L = sum(conv2d(x, w, b) * r) against conv2d_backward(r).
double conv_loss(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& r, const ConvCase& k) {
  return raw::sum(raw::mul(raw::conv2d(x, w, b, k.stride, k.padding, k.dilation, k.groups), r)).item();
}

TEST(Conv2d, BackwardMatchesFiniteDifferences) {
  for (const ConvCase& k : {ConvCase{2, 4, 6, 5, 6, 3, 2, 1, {1, 0}, {1, 2}, 2, true},   // direct
                            ConvCase{2, 3, 7, 6, 4, 3, 3, 2, 1, 1, 1, true}}) {         // im2col
    SCOPED_TRACE(name(k));
    ConvDims d = dims(k);
    Tensor x = random_tensor(x_shape(k), 41), w = random_tensor(w_shape(k), 42), b = random_tensor({k.o}, 43);
    Tensor r = random_tensor({k.n, k.o, d.ho, d.wo}, 44);
    auto grads = raw::conv2d_backward(r, x, w, {k.stride, k.padding, k.dilation, k.groups});
    auto loss = [&] { return conv_loss(x, w, b, r, k); };
    EXPECT_TRUE(all_close(grads.grad_input, from(numeric_grad(x, loss), x.sizes()), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_weight, from(numeric_grad(w, loss), w.sizes()), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_bias, from(numeric_grad(b, loss), b.sizes()), 1e-6, 1e-7));
  }
}

TEST(Conv2d, OutputMaskSkipsUnwantedGradients) {
  Tensor x = random_tensor({2, 3, 8, 8}, 51), w = random_tensor({4, 3, 3, 3}, 52);
  Tensor gy = random_tensor({2, 4, 6, 6}, 53);
  auto all = raw::conv2d_backward(gy, x, w, {});
  auto weight_only = raw::conv2d_backward(gy, x, w, {}, {false, true, false});
  EXPECT_FALSE(weight_only.grad_input.defined());
  EXPECT_FALSE(weight_only.grad_bias.defined());
  EXPECT_TRUE(raw::equal(weight_only.grad_weight, all.grad_weight));
  auto input_only = raw::conv2d_backward(gy, x, w, {}, {true, false, false});
  EXPECT_FALSE(input_only.grad_weight.defined());
  EXPECT_TRUE(raw::equal(input_only.grad_input, all.grad_input));
}

TEST(Conv2d, EmptyBatch) {
  Tensor x = raw::zeros({0, 3, 8, 8}, kFloat64), w = random_tensor({4, 3, 3, 3}, 54);
  Tensor y = raw::conv2d(x, w);
  EXPECT_EQ(y.sizes(), (Shape{0, 4, 6, 6}));
  auto grads = raw::conv2d_backward(raw::zeros({0, 4, 6, 6}, kFloat64), x, w, {});
  EXPECT_EQ(grads.grad_input.sizes(), x.sizes());
  EXPECT_EQ(values(grads.grad_weight), std::vector<double>(4 * 3 * 9, 0.0));
  EXPECT_EQ(values(grads.grad_bias), std::vector<double>(4, 0.0));
}

TEST(Conv2d, Errors) {
  Tensor w = raw::zeros({6, 3, 5, 5});
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({32, 3072}), w); },
                          "conv2d: input must be 4-D (N,C,H,W), got [32, 3072]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({32, 4, 32, 32}), w); },
                          "conv2d: expected input with 3 channels (weight [6, 3, 5, 5], groups 1), got [32, 4, 32, 32]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 4, 4}), w); },
                          "conv2d: kernel 5x5 is larger than the padded input 4x4 (input [1, 3, 4, 4], padding (0, 0))"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, {}, 1, 0, 2); },
                          "kernel 5x5 (9x9 with dilation (2, 2)) is larger than the padded input 8x8"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}, kFloat64), w); },
                          "conv2d: expected weight of dtype float64 like input, got float32"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), raw::zeros({6, 3, 5})); },
                          "conv2d: weight must be 4-D (O,C/groups,kH,kW), got [6, 3, 5]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, raw::zeros({5})); },
                          "conv2d: expected bias of shape [6] (one per output channel of weight [6, 3, 5, 5]), got [5]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 6, 8, 8}), raw::zeros({6, 3, 3, 3}), {}, 1, 0, 1, 4); },
                          "weight [6, 3, 3, 3] has 6 output channels, which groups 4 does not divide"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, {}, {1, 0}); },
                          "conv2d: stride must be positive, got (1, 0)"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, {}, 1, -1); },
                          "conv2d: padding must be non-negative, got (-1, -1)"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}, kInt64), raw::zeros({6, 3, 5, 5}, kInt64)); },
                          "conv2d: expected a floating point input, got int64"));
  EXPECT_TRUE(throws_with(
      [&] { raw::conv2d_backward(raw::zeros({1, 6, 3, 3}), raw::zeros({1, 3, 8, 8}), w, {}); },
      "conv2d_backward: expected grad_output of shape [1, 6, 4, 4] (the output of input [1, 3, 8, 8] and weight "
      "[6, 3, 5, 5]), got [1, 6, 3, 3]"));
  const kernels::Conv2dGeometry g = geometry({1, 3, 8, 8, 6, 5, 5, 2, 0, 1, 1, false});
  EXPECT_TRUE(throws_with(
      [&] {
        kernels::cpu::conv2d_forward(kFloat32, g, nullptr, nullptr, nullptr, nullptr,
                                     kernels::cpu::ConvAlgorithm::Direct);
      },
      "the direct algorithm needs stride 1"));
}

// ---------------------------------------------------------------------------------------------
// CUDA against the CPU (skipped without a GPU).

TEST(Conv2d, MatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  uint32_t seed = 600;
  for (const ConvCase& k : conv_cases()) {
    ConvDims d = dims(k);
    Tensor x = random_tensor(x_shape(k), seed++), w = random_tensor(w_shape(k), seed++);
    Tensor b = k.bias ? random_tensor({k.o}, seed++) : Tensor();
    Tensor gy = random_tensor({k.n, k.o, d.ho, d.wo}, seed++);
    Tensor y_cpu = raw::conv2d(x, w, b, k.stride, k.padding, k.dilation, k.groups);
    raw::Conv2dParams p{k.stride, k.padding, k.dilation, k.groups};
    auto g_cpu = raw::conv2d_backward(gy, x, w, p);
    // float64 is exact up to summation order; float32 may use TF32 tensor cores (10-bit mantissa).
    for (DType dt : {kFloat64, kFloat32, kFloat16}) {
      SCOPED_TRACE(name(k) + " " + dtype_name(dt));
      const double tol = dt == kFloat64 ? 1e-10 : dt == kFloat32 ? 2e-2 : 6e-2;
      Tensor y = raw::conv2d(to_cuda(x, dt), to_cuda(w, dt), b.defined() ? to_cuda(b, dt) : Tensor(), k.stride,
                             k.padding, k.dilation, k.groups);
      EXPECT_TRUE(all_close(to_cpu64(y), y_cpu, tol, tol));
      auto g = raw::conv2d_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, dt), p);
      EXPECT_TRUE(all_close(to_cpu64(g.grad_input), g_cpu.grad_input, tol, tol));
      EXPECT_TRUE(all_close(to_cpu64(g.grad_weight), g_cpu.grad_weight, tol, tol * 10));
      EXPECT_TRUE(all_close(to_cpu64(g.grad_bias), g_cpu.grad_bias, tol, tol * 10));
      auto masked = raw::conv2d_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, dt), p, {false, true, false});
      EXPECT_FALSE(masked.grad_input.defined());
      EXPECT_TRUE(all_close(to_cpu64(masked.grad_weight), g_cpu.grad_weight, tol, tol * 10));
    }
  }
  EXPECT_TRUE(throws_with([&] { raw::conv2d(to_cuda(raw::zeros({1, 3, 8, 8}), kFloat32), raw::zeros({6, 3, 5, 5})); },
                          "conv2d: expected weight on cuda:0 like input, got cpu"));
}

// The bfloat16 bias of a CUDA convolution (cuDNN's cudnnAddTensor forward and
// cudnnConvolutionBackwardBias backward, on the path `--amp bf16` takes) against the CPU on the
// same bfloat16 values. The bias alone: the output with bias minus the output without is the bias,
// up to the two bfloat16 roundings of the outputs (2^-8 of their size each); grad_bias is the sum of
// grad_output over N, H and W, up to one bfloat16 rounding of the sum and float32 accumulation.
TEST(Conv2d, BFloat16BiasMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  uint32_t seed = 650;
  for (const ConvCase& k : {ConvCase{2, 3, 12, 12, 6, 5, 5, 1, 0, 1, 1, true},
                            ConvCase{4, 8, 9, 7, 16, 3, 3, 2, 1, 1, 2, true}}) {
    SCOPED_TRACE(name(k));
    ConvDims d = dims(k);
    Tensor x = random_tensor(x_shape(k), seed++, kBFloat16), w = random_tensor(w_shape(k), seed++, kBFloat16);
    Tensor b = random_tensor({k.o}, seed++, kBFloat16);
    Tensor gy = random_tensor({k.n, k.o, d.ho, d.wo}, seed++, kBFloat16);
    Tensor y_cpu = raw::conv2d(x, w, b, k.stride, k.padding, k.dilation, k.groups);
    Tensor y = raw::conv2d(to_cuda(x, kBFloat16), to_cuda(w, kBFloat16), to_cuda(b, kBFloat16), k.stride, k.padding,
                           k.dilation, k.groups);
    Tensor y_nobias = raw::conv2d(to_cuda(x, kBFloat16), to_cuda(w, kBFloat16), Tensor(), k.stride, k.padding,
                                  k.dilation, k.groups);
    ASSERT_EQ(y.dtype(), kBFloat16);
    EXPECT_TRUE(all_close(to_cpu64(y), to_cpu64(y_cpu), 2e-2, 2e-2));
    // y - y_nobias, channel by channel, is the bias.
    std::vector<double> with = values(y), without = values(y_nobias), bias = values(b);
    const int64_t plane = d.ho * d.wo;
    int64_t bad = 0;
    for (size_t i = 0; i < with.size(); ++i) {
      const double expected = bias[(i / plane) % k.o];
      const double tol = std::ldexp(std::abs(with[i]) + std::abs(without[i]), -8) + 1e-6;
      bad += std::abs(with[i] - without[i] - expected) > tol;
    }
    EXPECT_EQ(bad, 0) << "elements whose bias is off";

    raw::Conv2dParams p{k.stride, k.padding, k.dilation, k.groups};
    auto g = raw::conv2d_backward(to_cuda(gy, kBFloat16), to_cuda(x, kBFloat16), to_cuda(w, kBFloat16), p);
    ASSERT_EQ(g.grad_bias.dtype(), kBFloat16);
    std::vector<double> gb = values(g.grad_bias), gys = values(gy);
    for (int64_t o = 0; o < k.o; ++o) {
      double sum = 0, l1 = 0;
      for (int64_t n = 0; n < k.n; ++n) {
        for (int64_t j = 0; j < plane; ++j) {
          const double v = gys[(n * k.o + o) * plane + j];
          sum += v;
          l1 += std::abs(v);
        }
      }
      EXPECT_NEAR(gb[o], sum, std::ldexp(std::abs(sum), -8) + l1 * 1e-4) << "grad_bias[" << o << "]";
    }
    auto g_cpu = raw::conv2d_backward(gy, x, w, p);
    EXPECT_TRUE(all_close(to_cpu64(g.grad_bias), to_cpu64(g_cpu.grad_bias), 1e-2, 1e-2));
  }
}

// cuBLAS and cuDNN handles are per thread and go back to a pool when a thread exits
// (runtime/cuda/handle_pool.h): threads one after another take over the same handles, threads at
// once get their own, and every result stays right.
TEST(Conv2d, HandlesPassFromThreadToThread_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor x = random_tensor({4, 3, 12, 12}, 900), w = random_tensor({5, 3, 3, 3}, 901);
  Tensor a = random_tensor({33, 17}, 902), b = random_tensor({17, 9}, 903);
  const Tensor y_cpu = raw::conv2d(x, w), m_cpu = raw::mm(a, b);
  auto run = [&]() -> ::testing::AssertionResult {
    Tensor y = raw::conv2d(to_cuda(x, kFloat32), to_cuda(w, kFloat32));
    Tensor m = raw::mm(to_cuda(a, kFloat32), to_cuda(b, kFloat32));
    auto conv_ok = all_close(to_cpu64(y), y_cpu, 2e-2, 2e-2);
    if (!conv_ok) return conv_ok << " (conv2d)";
    auto mm_ok = all_close(to_cpu64(m), m_cpu, 2e-2, 2e-2);
    if (!mm_ok) return mm_ok << " (mm)";
    return ::testing::AssertionSuccess();
  };
  for (int i = 0; i < 6; ++i) {
    ::testing::AssertionResult ok = ::testing::AssertionSuccess();
    std::thread([&] { ok = run(); }).join();
    EXPECT_TRUE(ok) << "thread " << i << ", one after another";
  }
  std::vector<::testing::AssertionResult> ok(4, ::testing::AssertionSuccess());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { ok[i] = run(); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ok[i]) << "thread " << i << ", at once";
}

// float16/bfloat16 on the CPU: the float32 kernels on the widened operands, rounded once, so the
// results equal the rounded float32 results bit for bit.
TEST(LowPrecisionCpu, ConvRoundsTheFloat32Result) {
  for (DType dt : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = low(random_tensor({2, 3, 12, 12}, 71, kFloat32), dt), w = low(random_tensor({6, 3, 5, 5}, 72, kFloat32), dt);
    Tensor b = low(random_tensor({6}, 73, kFloat32), dt), gy = low(random_tensor({2, 6, 10, 10}, 74, kFloat32), dt);
    Tensor y = raw::conv2d(x, w, b, 1, 1);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(all_close(y, low(raw::conv2d(f32(x), f32(w), f32(b), 1, 1), dt), 0, 0));
    raw::Conv2dGrads g = raw::conv2d_backward(gy, x, w, {1, 1, 1, 1});
    raw::Conv2dGrads g32 = raw::conv2d_backward(f32(gy), f32(x), f32(w), {1, 1, 1, 1});
    EXPECT_EQ(g.grad_weight.dtype(), dt);
    EXPECT_TRUE(all_close(g.grad_input, low(g32.grad_input, dt), 0, 0));
    EXPECT_TRUE(all_close(g.grad_weight, low(g32.grad_weight, dt), 0, 0));
  }
}

}  // namespace
}  // namespace colony
