// autocast (autograd/autocast.h): the guard's state and nesting, each op class's output dtype under
// both 16-bit dtypes, gradients in the parameters' dtype, batch norm, and the cast cache. The nn
// functions (F::linear, the losses) are covered in tests/nn/functional_test.cc.
#include "autograd/autocast.h"

#include <gtest/gtest.h>

#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "runtime/cuda.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;

Tensor randn(const Shape& shape, uint64_t seed, bool requires_grad = false) {
  Generator gen(seed);
  Tensor t = raw::randn(shape, TensorOptions(kFloat32), &gen);
  if (requires_grad) t.requires_grad_();
  return t;
}

TEST(Autocast, GuardSetsRestoresAndNests) {
  EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
  EXPECT_EQ(get_autocast_dtype(DeviceType::CPU), kBFloat16);  // PyTorch's defaults
  EXPECT_EQ(get_autocast_dtype(DeviceType::CUDA), kFloat16);
  {
    AutocastGuard outer(DeviceType::CPU, kFloat16);
    EXPECT_TRUE(is_autocast_enabled(DeviceType::CPU));
    EXPECT_FALSE(is_autocast_enabled(DeviceType::CUDA));
    EXPECT_EQ(get_autocast_dtype(DeviceType::CPU), kFloat16);
    {
      AutocastGuard inner(DeviceType::CPU, kBFloat16);
      EXPECT_EQ(get_autocast_dtype(DeviceType::CPU), kBFloat16);
      {
        AutocastGuard off(DeviceType::CPU, false);  // keeps the dtype, switches off
        EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
        EXPECT_EQ(get_autocast_dtype(DeviceType::CPU), kBFloat16);
        EXPECT_EQ(mm(randn({2, 3}, 1), randn({3, 2}, 2)).dtype(), kFloat32);
      }
      EXPECT_TRUE(is_autocast_enabled(DeviceType::CPU));
    }
    EXPECT_EQ(get_autocast_dtype(DeviceType::CPU), kFloat16);
  }
  EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
  EXPECT_EQ(get_autocast_dtype(DeviceType::CPU), kBFloat16);
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { AutocastGuard g(DeviceType::CPU, kFloat32); },
                                                 "AutocastGuard: dtype must be float16 or bfloat16 on cpu, got float32"));
}

TEST(Autocast, OpPolicyOutputDtypes) {
  for (DType low : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    AutocastGuard amp(DeviceType::CPU, low);
    Tensor a = randn({4, 6}, 3), b = randn({6, 5}, 4);
    // Lower precision: matrix products and convolution (its bias too).
    EXPECT_EQ(mm(a, b).dtype(), low);
    EXPECT_EQ(matmul(a, b).dtype(), low);
    EXPECT_EQ(matmul(randn({6}, 5), b).dtype(), low);
    EXPECT_EQ(bmm(randn({2, 4, 6}, 7), randn({2, 6, 3}, 8)).dtype(), low);
    Tensor img = randn({2, 3, 8, 8}, 9), filt = randn({4, 3, 3, 3}, 10), fb = randn({4}, 11);
    EXPECT_EQ(conv2d(img, filt, fb).dtype(), low);
    // Everything else keeps its input's dtype...
    Tensor h = mm(a, b);
    EXPECT_EQ(relu(h).dtype(), low);
    EXPECT_EQ(max_pool2d(conv2d(img, filt), 2).dtype(), low);
    EXPECT_EQ(h.flatten().dtype(), low);
    // ...binary ops of mixed dtypes promote to the widest...
    EXPECT_EQ((h + randn({4, 5}, 12)).dtype(), kFloat32);
    EXPECT_EQ((h * h).dtype(), low);
    // ...and float32 ones run in float32.
    EXPECT_EQ(softmax(h, 1).dtype(), kFloat32);
    EXPECT_EQ(log_softmax(h, 1).dtype(), kFloat32);
    EXPECT_EQ(sum(h).dtype(), kFloat32);
    EXPECT_EQ(mean(h, {1}).dtype(), kFloat32);
    EXPECT_EQ(var(h).dtype(), kFloat32);
    EXPECT_EQ(exp(h).dtype(), kFloat32);
    EXPECT_EQ(log(abs(h)).dtype(), kFloat32);
    EXPECT_EQ(pow(h, 2.0).dtype(), kFloat32);
    EXPECT_EQ(rsqrt(abs(h)).dtype(), kFloat32);
    // float64 and integers are never cast.
    Tensor d = raw::to(a, kCPU, kFloat64);
    EXPECT_EQ(mm(d, raw::to(b, kCPU, kFloat64)).dtype(), kFloat64);
    EXPECT_EQ(sum(raw::ones({3}, TensorOptions(kInt64))).dtype(), kInt64);
    // The CPU guard leaves CUDA's autocast off.
    EXPECT_FALSE(is_autocast_enabled(DeviceType::CUDA));
  }
  // Outside the guard: float32 again.
  EXPECT_EQ(mm(randn({2, 3}, 1), randn({3, 2}, 2)).dtype(), kFloat32);
}

TEST(Autocast, CudaGuardLeavesCpuOpsAlone) {
  AutocastGuard amp(DeviceType::CUDA, kFloat16);
  EXPECT_TRUE(is_autocast_enabled(DeviceType::CUDA));
  EXPECT_EQ(mm(randn({2, 3}, 1), randn({3, 2}, 2)).dtype(), kFloat32);
}

// A two-layer network forward under autocast, backward outside it (as PyTorch recommends).
struct Grads {
  Tensor loss, x, w1, b1, w2;
};
Grads mlp_grads(DType low, bool autocast_on) {
  Tensor x = randn({8, 16}, 20, true), w1 = randn({32, 16}, 21, true), b1 = randn({32}, 22, true);
  Tensor w2 = randn({8, 32}, 23, true);
  Tensor loss;
  {
    AutocastGuard amp(DeviceType::CPU, low, autocast_on);
    Tensor h = relu(mm(x, t(w1)) + b1);  // promotes to float32: b1 is float32
    loss = neg(mean(log_softmax(mm(h, t(w2)), 1)));
  }
  loss.backward();
  return {loss, x.grad(), w1.grad(), b1.grad(), w2.grad()};
}

TEST(Autocast, GradientsArriveInTheParametersDtype) {
  Grads ref = mlp_grads(kBFloat16, false);
  for (DType low : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    Grads g = mlp_grads(low, true);
    EXPECT_EQ(g.loss.dtype(), kFloat32);
    for (const Tensor& t : {g.x, g.w1, g.b1, g.w2}) EXPECT_EQ(t.dtype(), kFloat32);
    // bfloat16 keeps 8 bits of mantissa, float16 11: the gradients agree to a few of those.
    const double tol = low == kBFloat16 ? 5e-2 : 1e-2;
    EXPECT_TRUE(all_close(g.loss, ref.loss, tol, tol));
    EXPECT_TRUE(all_close(g.w1, ref.w1, tol, tol));
    EXPECT_TRUE(all_close(g.b1, ref.b1, tol, tol));
    EXPECT_TRUE(all_close(g.w2, ref.w2, tol, tol));
    EXPECT_TRUE(all_close(g.x, ref.x, tol, tol));
  }
}

// A small CNN (conv, relu, max pool, linear) under bfloat16 autocast, its convolutions and matrix
// products once on the bfloat16 tiles (the emulated copy here; AVX512_BF16 CPUs run the real one
// by default) and once widened to float32: the same gradients up to the order of float32
// additions before each bfloat16 rounding, and both within bfloat16's precision of float32.
struct CnnGrads {
  Tensor loss, w1, b1, w2;
};
CnnGrads cnn_grads(bool autocast_on) {
  Tensor x = randn({4, 3, 12, 12}, 30), w1 = randn({6, 3, 5, 5}, 31, true), b1 = randn({6}, 32, true);
  Tensor w2 = randn({10, 6 * 4 * 4}, 33, true);
  Tensor loss;
  {
    AutocastGuard amp(DeviceType::CPU, kBFloat16, autocast_on);
    Tensor h = max_pool2d(relu(conv2d(x, mul(w1, 0.2), b1)), 2);
    loss = neg(mean(log_softmax(mm(reshape(h, {4, 6 * 4 * 4}), t(mul(w2, 0.1))), 1)));
  }
  loss.backward();
  return {loss, w1.grad(), b1.grad(), w2.grad()};
}

TEST(Autocast, Bfloat16CnnOnTheBf16TilesMatchesTheWidenedKernels) {
  using namespace kernels::cpu;
  CnnGrads native, widened;
  {
    ScopedSmallGemmBf16Fns use(&bf16_emulated::small_gemm_bf16_fns());
    native = cnn_grads(true);
  }
  {
    ScopedSmallGemmBf16Fns none(nullptr);
    widened = cnn_grads(true);
  }
  const CnnGrads ref = cnn_grads(false);
  for (const Tensor& g : {native.w1, native.b1, native.w2}) EXPECT_EQ(g.dtype(), kFloat32);
  EXPECT_TRUE(all_close(native.loss, widened.loss, 1e-2, 1e-3));
  EXPECT_TRUE(all_close(native.w1, widened.w1, 1e-2, 1e-3));
  EXPECT_TRUE(all_close(native.b1, widened.b1, 1e-2, 1e-3));
  EXPECT_TRUE(all_close(native.w2, widened.w2, 1e-2, 1e-3));
  EXPECT_TRUE(all_close(native.w1, ref.w1, 5e-2, 5e-2));
  EXPECT_TRUE(all_close(native.w2, ref.w2, 5e-2, 5e-2));
}

TEST(Autocast, BatchNormComputesInFloat32AndKeepsTheInputDtype) {
  for (DType low : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    Tensor x16 = raw::to(randn({4, 3, 5, 5}, 30), kCPU, low);
    x16.requires_grad_();
    Tensor w = randn({3}, 31, true), b = randn({3}, 32, true);
    Tensor rm = raw::zeros({3}), rv = raw::ones({3});
    Tensor y;
    {
      AutocastGuard amp(DeviceType::CPU, low);
      y = batch_norm(x16, w, b, rm, rv, /*training=*/true);
    }
    EXPECT_EQ(y.dtype(), low);
    EXPECT_EQ(rm.dtype(), kFloat32);
    // The float32 computation on the same (rounded) input, rounded once.
    Tensor rm32 = raw::zeros({3}), rv32 = raw::ones({3});
    Tensor y32 = batch_norm(raw::to(x16.detach(), kCPU, kFloat32), w.detach(), b.detach(), rm32, rv32, true);
    EXPECT_TRUE(all_close(y, raw::to(y32, kCPU, low), 0, 0));
    EXPECT_TRUE(all_close(rm, rm32, 0, 0));
    EXPECT_TRUE(all_close(rv, rv32, 0, 0));
    sum(y).backward();
    EXPECT_EQ(x16.grad().dtype(), low);
    EXPECT_EQ(w.grad().dtype(), kFloat32);
    EXPECT_EQ(b.grad().dtype(), kFloat32);
  }
}

TEST(Autocast, CastCacheMakesOneCopyPerWeightUntilItChanges) {
  Tensor w = randn({5, 6}, 40, true), x = randn({4, 6}, 41);
  {
    AutocastGuard amp(DeviceType::CPU, kBFloat16);
    Tensor c1 = autocast::cast(autocast::Op::mm, w);
    Tensor y1 = mm(x, t(w)), y2 = mm(x * 2.0, t(w));  // two uses, one copy
    EXPECT_TRUE(autocast::cast(autocast::Op::mm, w).is_same(c1));
    EXPECT_EQ(autocast::cache_size(), 1u);
    // Activations (non-leaves) and tensors that need no gradient are not cached.
    autocast::cast(autocast::Op::mm, x);
    autocast::cast(autocast::Op::mm, y1);
    EXPECT_EQ(autocast::cache_size(), 1u);
    {
      AutocastGuard nested(DeviceType::CPU, kBFloat16);  // an inner exit keeps the cache
    }
    EXPECT_EQ(autocast::cache_size(), 1u);
    // An in-place update (the optimizer's) invalidates the copy.
    {
      NoGradGuard no_grad;
      w.fill_(0.5);
    }
    Tensor c2 = autocast::cast(autocast::Op::mm, w);
    EXPECT_FALSE(c2.is_same(c1));
    EXPECT_EQ(testing::values(c2)[0], 0.5);
    // The other 16-bit dtype gets its own entry.
    AutocastGuard half(DeviceType::CPU, kFloat16);
    EXPECT_EQ(autocast::cast(autocast::Op::mm, w).dtype(), kFloat16);
    EXPECT_EQ(autocast::cache_size(), 2u);
  }
  EXPECT_EQ(autocast::cache_size(), 0u);  // the outermost guard's exit clears it
}

TEST(Autocast, OpPolicyOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  for (DType low : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    Tensor a = raw::to(randn({64, 32}, 50), dev, kFloat32), w = raw::to(randn({16, 32}, 51), dev, kFloat32);
    Tensor bias = raw::to(randn({16}, 52), dev, kFloat32);
    w.requires_grad_();
    bias.requires_grad_();
    Tensor img = raw::to(randn({2, 3, 8, 8}, 53), dev, kFloat32), filt = raw::to(randn({4, 3, 3, 3}, 54), dev, kFloat32);
    Tensor y, loss, conv;
    {
      AutocastGuard amp(DeviceType::CUDA, low);
      y = mm(a, t(w));
      conv = conv2d(img, filt);
      loss = neg(mean(log_softmax(y, 1)));
      EXPECT_EQ(softmax(y, 1).dtype(), kFloat32);
      EXPECT_EQ((y + bias).dtype(), kFloat32);
    }
    EXPECT_EQ(y.dtype(), low);
    EXPECT_EQ(conv.dtype(), low);
    EXPECT_EQ(loss.dtype(), kFloat32);
    Tensor y32 = mm(a, t(w.detach()));
    EXPECT_TRUE(all_close(raw::to(y, kCPU, kFloat32), raw::to(y32, kCPU, kFloat32), 2e-2, 5e-2));
    loss.backward();
    EXPECT_EQ(w.grad().dtype(), kFloat32);
    EXPECT_EQ(w.grad().device(), dev);
  }
}

}  // namespace
}  // namespace colony
