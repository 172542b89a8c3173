// nn/normalization.h: F::layer_norm / F::rms_norm and the LayerNorm / RMSNorm modules: values and
// gradients against float64 references computed here, the 16-bit dtypes, the default eps, the
// parameter gradients' independence of the thread count, options, printing, errors, and CUDA
// against the CPU. Finite-difference checks of the float64 gradients: tests/autograd/norm_test.cc.
#include "nn/normalization.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony {
namespace {

namespace F = nn::functional;
using testing::all_close;
using testing::throws_with;

Tensor sample(const Shape& shape, uint64_t seed, double scale = 3.0, double shift = 2.0, DType dtype = kFloat32) {
  Generator gen(seed);
  Tensor t = raw::add(raw::mul(raw::randn(shape, TensorOptions(kFloat64), &gen), scale), shift);
  return raw::to(t, kCPU, dtype);
}

// Row by row in float64: (x - mean) / sqrt(var + eps) * w + b (RMSNorm: x / sqrt(mean(x^2) + eps) * w).
Tensor reference(const Tensor& x, int64_t cols, const Tensor& w, const Tensor& b, double eps, bool rms) {
  std::vector<double> v = testing::values(x), wv, bv;
  if (w.defined()) wv = testing::values(w);
  if (b.defined()) bv = testing::values(b);
  for (size_t r = 0; r * cols < v.size(); ++r) {
    double* row = v.data() + r * cols;
    double mean = 0, var = 0;
    if (!rms) {
      for (int64_t i = 0; i < cols; ++i) mean += row[i];
      mean /= cols;
    }
    for (int64_t i = 0; i < cols; ++i) var += (row[i] - mean) * (row[i] - mean);
    const double rstd = 1 / std::sqrt(var / cols + eps);
    for (int64_t i = 0; i < cols; ++i) {
      row[i] = (row[i] - mean) * rstd * (w.defined() ? wv[i] : 1.0) + (b.defined() ? bv[i] : 0.0);
    }
  }
  return raw::from_vector(v, x.sizes());
}

TEST(LayerNorm, MatchesTheFloat64Formula) {
  // 45 columns: five full AVX2 vectors and a tail; a mean of 2 with spread 3 tests the two-pass variance.
  Tensor x = sample({6, 7, 45}, 1);
  Tensor w = sample({45}, 2, 1.0, 1.0), b = sample({45}, 3, 1.0, 0.0);
  EXPECT_TRUE(all_close(F::layer_norm(x, F::LayerNormFuncOptions({45}).weight(w).bias(b)),
                        reference(x, 45, w, b, 1e-5, false), 1e-5, 1e-5));
  Tensor w2 = sample({7, 45}, 4, 1.0, 1.0);
  EXPECT_TRUE(all_close(F::layer_norm(x, F::LayerNormFuncOptions({7, 45}).weight(w2).eps(1e-3)),
                        reference(x, 7 * 45, w2, Tensor(), 1e-3, false), 1e-5, 1e-5));
  Tensor d = sample({5, 9}, 5, 3.0, 2.0, kFloat64);
  EXPECT_TRUE(all_close(F::layer_norm(d, F::LayerNormFuncOptions({9})), reference(d, 9, Tensor(), Tensor(), 1e-5, false),
                        1e-13, 1e-13));
}

TEST(RMSNorm, MatchesTheFloat64FormulaAndDefaultsEpsToTheDtypesEpsilon) {
  Tensor x = sample({4, 3, 40}, 6);
  Tensor w = sample({40}, 7, 1.0, 1.0);
  EXPECT_TRUE(all_close(F::rms_norm(x, F::RMSNormFuncOptions({40}).weight(w).eps(1e-6)),
                        reference(x, 40, w, Tensor(), 1e-6, true), 1e-5, 1e-5));
  // Values near 1e-4: mean(x^2) ~ 1e-8 is below float32's epsilon (1.19e-7), which then dominates
  // the denominator, as torch.nn.functional.rms_norm's eps=None does.
  Tensor small = sample({3, 16}, 8, 1e-4, 0.0);
  const double f32_eps = std::numeric_limits<float>::epsilon();
  EXPECT_TRUE(all_close(F::rms_norm(small, F::RMSNormFuncOptions({16})), reference(small, 16, Tensor(), Tensor(), f32_eps, true),
                        1e-5, 1e-7));
  EXPECT_FALSE(all_close(F::rms_norm(small, F::RMSNormFuncOptions({16})),
                         reference(small, 16, Tensor(), Tensor(), 1e-6, true), 1e-2, 0));
  Tensor small64 = raw::to(small, kCPU, kFloat64);
  EXPECT_TRUE(all_close(F::rms_norm(small64, F::RMSNormFuncOptions({16})),
                        reference(small64, 16, Tensor(), Tensor(), std::numeric_limits<double>::epsilon(), true), 1e-12, 0));
}

// Gradients of sum(out * g) for float32 against the float64 op's (whose gradients
// tests/autograd/norm_test.cc checks by finite differences), for rows spanning several of the CPU
// backward's 64-row blocks.
TEST(LayerNorm, Float32GradientsMatchFloat64) {
  for (bool rms : {false, true}) {
    SCOPED_TRACE(rms ? "rms_norm" : "layer_norm");
    Tensor x = sample({150, 37}, 9), w = sample({37}, 10, 1.0, 1.0), b = sample({37}, 11, 1.0, 0.0);
    Tensor g = sample({150, 37}, 12, 1.0, 0.0);
    std::vector<Tensor> grads[2];
    for (DType dt : {kFloat64, kFloat32}) {
      Tensor xi = raw::to(x, kCPU, dt), wi = raw::to(w, kCPU, dt), bi = raw::to(b, kCPU, dt);
      xi.requires_grad_(true);
      wi.requires_grad_(true);
      bi.requires_grad_(true);
      Tensor out = rms ? rms_norm(xi, {37}, wi, 1e-5) : layer_norm(xi, {37}, wi, bi, 1e-5);
      sum(mul(out, raw::to(g, kCPU, dt))).backward();
      grads[dt == kFloat32] = {xi.grad(), wi.grad(), rms ? Tensor() : bi.grad()};
    }
    EXPECT_TRUE(all_close(grads[1][0], grads[0][0], 1e-4, 1e-5));
    EXPECT_TRUE(all_close(grads[1][1], grads[0][1], 1e-4, 1e-4));
    if (!rms) {
      EXPECT_TRUE(all_close(grads[1][2], grads[0][2], 1e-4, 1e-4));
    }
    EXPECT_EQ(grads[1][1].dtype(), kFloat32);
  }
}

TEST(LayerNorm, SixteenBitInputsComputeInFloat32) {
  Tensor x = sample({8, 50}, 13), w = sample({50}, 14, 1.0, 1.0), b = sample({50}, 15, 1.0, 0.0);
  for (DType low : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    const double ulp = low == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    Tensor xl = raw::to(x, kCPU, low);
    Tensor xw = raw::to(xl, kCPU, kFloat32);  // the values the op sees
    for (DType param : {kFloat32, low}) {
      SCOPED_TRACE(dtype_name(param));
      // Fresh leaves each time (to() returns the tensor itself when the dtype is already right).
      Tensor wp = raw::clone(raw::to(w, kCPU, param)), bp = raw::clone(raw::to(b, kCPU, param));
      wp.requires_grad_(true);
      bp.requires_grad_(true);
      Tensor out = layer_norm(xl, {50}, wp, bp);
      EXPECT_EQ(out.dtype(), low);
      // One rounding of the output to `low` from the float32 result.
      Tensor expected = layer_norm(xw, {50}, raw::to(wp.detach(), kCPU, kFloat32), raw::to(bp.detach(), kCPU, kFloat32));
      EXPECT_TRUE(all_close(raw::to(out, kCPU, kFloat32), expected, ulp, 1e-3));
      sum(out).backward();
      EXPECT_EQ(wp.grad().dtype(), param);
      EXPECT_EQ(bp.grad().dtype(), param);
      // dbias = sum of the ones over the rows, exactly.
      EXPECT_TRUE(all_close(raw::to(bp.grad(), kCPU, kFloat32), raw::full({50}, 8.0, kFloat32), 0, 0));
      Tensor r = rms_norm(xl, {50}, wp);
      EXPECT_EQ(r.dtype(), low);
      EXPECT_TRUE(all_close(raw::to(r, kCPU, kFloat32), rms_norm(xw, {50}, raw::to(wp.detach(), kCPU, kFloat32)),
                            ulp, 1e-3));
    }
  }
}

// torch 2.15's outputs (normalization_golden.py, beside this file) where the semantics are not the
// obvious ones: rms_norm's default eps for 16-bit inputs is float32's epsilon, not the input
// dtype's (which would give 0.00113 for bfloat16), and layer_norm of a bfloat16 row is normalized
// in float32 and rounded once.
TEST(RMSNorm, DefaultEpsOfSixteenBitInputsMatchesPyTorch) {
  Tensor row = raw::full({1, 4}, 1e-4, kFloat32);
  EXPECT_EQ(testing::values(F::rms_norm(raw::to(row, kCPU, kBFloat16), F::RMSNormFuncOptions({4})))[0], 0.279296875);
  EXPECT_EQ(testing::values(F::rms_norm(raw::to(row, kCPU, kFloat16), F::RMSNormFuncOptions({4})))[0], 0.2783203125);
  EXPECT_NEAR(testing::values(F::rms_norm(row, F::RMSNormFuncOptions({4})))[0], 0.27819743752479553, 1e-7);
  EXPECT_NEAR(testing::values(F::rms_norm(raw::to(row, kCPU, kFloat64), F::RMSNormFuncOptions({4})))[0],
              0.9999999888977693, 1e-15);
  Tensor x = raw::to(raw::from_vector(std::vector<double>{1.0, 2.0, 3.5, -4.25, 100.0}, {1, 5}), kCPU, kBFloat16);
  const std::vector<double> torch_ln = {-0.48828125, -0.462890625, -0.42578125, -0.62109375, 1.9921875};
  EXPECT_EQ(testing::values(F::layer_norm(x, F::LayerNormFuncOptions({5}))), torch_ln);
}

TEST(LayerNorm, ResultsDoNotDependOnTheThreadCount) {
  const int before = get_num_threads();
  Tensor x = sample({1000, 96}, 16), w = sample({96}, 17, 1.0, 1.0), b = sample({96}, 18, 1.0, 0.0);
  Tensor g = sample({1000, 96}, 19, 1.0, 0.0);
  std::vector<std::vector<double>> runs;
  for (int threads : {1, 2, 3, 4}) {
    set_num_threads(threads);
    Tensor xi = raw::clone(x), wi = raw::clone(w), bi = raw::clone(b);
    for (Tensor* t : {&xi, &wi, &bi}) t->requires_grad_(true);
    sum(mul(layer_norm(xi, {96}, wi, bi), g)).backward();
    std::vector<double> all = testing::values(xi.grad());
    for (const Tensor& t : {wi.grad(), bi.grad()}) {
      std::vector<double> v = testing::values(t);
      all.insert(all.end(), v.begin(), v.end());
    }
    runs.push_back(all);
  }
  set_num_threads(before);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_EQ(runs[i], runs[0]) << "thread count run " << i;
}

TEST(LayerNorm, ModuleHasPyTorchsParametersInitAndPrinting) {
  nn::LayerNorm ln(nn::LayerNormOptions({32}));
  auto named = ln.named_parameters();
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].first, "weight");
  EXPECT_EQ(named[1].first, "bias");
  EXPECT_TRUE(all_close(ln.weight, raw::full({32}, 1.0, kFloat32), 0, 0));
  EXPECT_TRUE(all_close(ln.bias, raw::zeros({32}, kFloat32), 0, 0));
  EXPECT_EQ(ln.repr(), "LayerNorm((32,), eps=1e-05, elementwise_affine=True, bias=True)");  // torch 2.15's
  nn::LayerNorm no_bias(nn::LayerNormOptions({4, 8}).bias(false).eps(1e-6));
  ASSERT_EQ(no_bias.named_parameters().size(), 1u);
  EXPECT_EQ(no_bias.weight.sizes(), (Shape{4, 8}));
  EXPECT_EQ(no_bias.repr(), "LayerNorm((4, 8), eps=1e-06, elementwise_affine=True, bias=False)");
  nn::LayerNorm plain(nn::LayerNormOptions({8}).elementwise_affine(false));
  EXPECT_TRUE(plain.named_parameters().empty());
  EXPECT_EQ(plain.repr(), "LayerNorm((8,), eps=1e-05, elementwise_affine=False, bias=False)");
  Tensor x = sample({3, 4, 8}, 20);
  EXPECT_TRUE(all_close(plain.forward(x), reference(x, 8, Tensor(), Tensor(), 1e-5, false), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(no_bias.forward(x), reference(x, 32, no_bias.weight, Tensor(), 1e-6, false), 1e-5, 1e-5));
}

TEST(RMSNorm, ModuleHasPyTorchsParametersInitAndPrinting) {
  nn::RMSNorm rms(nn::RMSNormOptions({16}));
  auto named = rms.named_parameters();
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].first, "weight");
  EXPECT_TRUE(all_close(rms.weight, raw::full({16}, 1.0, kFloat32), 0, 0));
  EXPECT_EQ(rms.repr(), "RMSNorm((16,), eps=None, elementwise_affine=True)");
  nn::RMSNorm plain(nn::RMSNormOptions({16}).eps(1e-6).elementwise_affine(false));
  EXPECT_TRUE(plain.named_parameters().empty());
  EXPECT_EQ(plain.repr(), "RMSNorm((16,), eps=1e-06, elementwise_affine=False)");
  Tensor x = sample({5, 16}, 21);
  EXPECT_TRUE(all_close(plain.forward(x), reference(x, 16, Tensor(), Tensor(), 1e-6, true), 1e-5, 1e-6));
}

TEST(LayerNorm, BadInputsSayWhatWasExpected) {
  Tensor x = sample({3, 8}, 22);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { layer_norm(x, {7}); },
                                                 "expected input with shape [*, 7] (its last 1 dims equal to "
                                                 "normalized_shape), got input of shape [3, 8]"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { layer_norm(x, {8}, raw::ones({4})); },
                                                 "expected weight of shape normalized_shape [8], got [4]"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { rms_norm(x, {8}, raw::ones({8}, kFloat64)); },
                                                 "expected weight as float32 on cpu"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { layer_norm(raw::zeros({3, 8}, kInt64), {8}); },
                                                 "expected a floating point input, got int64"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { nn::LayerNorm(nn::LayerNormOptions({})); },
                                                 "normalized_shape must be non-empty"));
}

TEST(LayerNorm, AutocastWidensToFloat32) {
  nn::LayerNorm ln(nn::LayerNormOptions({24}));
  Tensor x = raw::to(sample({4, 24}, 23), kCPU, kBFloat16);
  Tensor out;
  {
    AutocastGuard amp(DeviceType::CPU, kBFloat16);
    out = ln.forward(x);
  }
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_TRUE(all_close(out, ln.forward(raw::to(x, kCPU, kFloat32)), 0, 0));
  sum(out).backward();
  EXPECT_EQ(ln.weight.grad().dtype(), kFloat32);
}

TEST(LayerNorm, ModulesMatchTheCpuOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<nn::LayerNorm>(nn::LayerNormOptions({45})); },
                                          sample({70, 45}, 24));
  // Rows longer than a warp's limit (1024) go to the block-per-row kernels.
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<nn::LayerNorm>(nn::LayerNormOptions({2, 1100})); },
                                          sample({3, 2, 1100}, 25), {1e-4, 1e-5, 1e-3});
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<nn::RMSNorm>(nn::RMSNormOptions({45})); },
                                          sample({70, 45}, 26));
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<nn::RMSNorm>(nn::RMSNormOptions({2200}).eps(1e-6)); }, sample({5, 2200}, 27),
      {1e-4, 1e-5, 1e-3});
}

TEST(LayerNorm, SixteenBitOnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  for (DType low : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    const double ulp = low == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    Tensor x = raw::to(sample({300, 64}, 28), kCPU, low);
    Tensor w = sample({64}, 29, 1.0, 1.0), b = sample({64}, 30, 1.0, 0.0);
    Tensor cpu = layer_norm(x, {64}, w, b);
    Tensor gpu = layer_norm(raw::to(x, dev, low), {64}, raw::to(w, dev, kFloat32), raw::to(b, dev, kFloat32));
    EXPECT_TRUE(all_close(raw::to(gpu, kCPU, kFloat32), raw::to(cpu, kCPU, kFloat32), ulp, 1e-2));
    Tensor rc = rms_norm(x, {64}, w), rg = rms_norm(raw::to(x, dev, low), {64}, raw::to(w, dev, kFloat32));
    EXPECT_TRUE(all_close(raw::to(rg, kCPU, kFloat32), raw::to(rc, kCPU, kFloat32), ulp, 1e-2));
  }
}

}  // namespace
}  // namespace colony
