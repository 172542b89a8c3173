// batch_norm (ops/batch_norm_ops.cc, declared in ops/raw_nn_ops.h) against the formulas
// computed here in double, gradients against finite differences in float64, and the CUDA path
// against the CPU.
#include "ops/raw_nn_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/ops/nn_op_testing.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using raw::Int2;
using namespace colony::testing;  // NOLINT(build/namespaces): the shared helpers of these tests

// ---------------------------------------------------------------------------------------------
// Batch norm against the formulas computed here in double.

struct NaiveBn {
  std::vector<double> y, mean, invstd, running_mean, running_var;
};

NaiveBn naive_batch_norm(const Shape& shape, const std::vector<double>& x, const std::vector<double>& w,
                         const std::vector<double>& b, std::vector<double> rm, std::vector<double> rv, bool training,
                         double momentum, double eps) {
  const int64_t n = shape[0], c = shape[1], s = shape_numel(shape) / (n * c), m = n * s;
  NaiveBn r;
  r.y.resize(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = 0, var = 0;
    if (training) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < s; ++j) mean += x[(i * c + ch) * s + j];
      mean /= m;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < s; ++j) var += std::pow(x[(i * c + ch) * s + j] - mean, 2);
      rm[ch] = (1 - momentum) * rm[ch] + momentum * mean;
      rv[ch] = (1 - momentum) * rv[ch] + momentum * var / (m - 1);
      var /= m;
    } else {
      mean = rm[ch];
      var = rv[ch];
    }
    const double invstd = 1 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.invstd.push_back(invstd);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) {
        const int64_t k = (i * c + ch) * s + j;
        r.y[k] = (x[k] - mean) * invstd * w[ch] + b[ch];
      }
  }
  r.running_mean = rm;
  r.running_var = rv;
  return r;
}

TEST(BatchNorm, TrainingNormalizesWithBatchStatisticsAndUpdatesRunningStats) {
  for (const Shape& shape : {Shape{4, 3, 5, 6}, Shape{6, 5}, Shape{2, 4, 3, 2, 2}}) {
    SCOPED_TRACE(shape_str(shape));
    const int64_t c = shape[1];
    std::vector<double> x = random_values(shape_numel(shape), 500, -2, 5);  // |mean| > std
    std::vector<double> w = random_values(c, 501), b = random_values(c, 502);
    std::vector<double> rm = random_values(c, 503), rv = random_values(c, 504, 0.5, 2);
    NaiveBn ref = naive_batch_norm(shape, x, w, b, rm, rv, true, 0.3, 1e-3);
    for (DType dt : {kFloat64, kFloat32}) {
      const double tol = dt == kFloat64 ? 1e-12 : 1e-5;
      Tensor running_mean = from(rm, {c}, dt), running_var = from(rv, {c}, dt);
      const uint32_t version = running_mean.version();
      auto r = raw::batch_norm(from(x, shape, dt), from(w, {c}, dt), from(b, {c}, dt), running_mean, running_var,
                               true, 0.3, 1e-3);
      EXPECT_TRUE(all_close(r.output, from(ref.y, shape), tol, tol));
      EXPECT_TRUE(all_close(r.save_mean, from(ref.mean, {c}), tol, tol));
      EXPECT_TRUE(all_close(r.save_invstd, from(ref.invstd, {c}), tol, tol));
      EXPECT_TRUE(all_close(running_mean, from(ref.running_mean, {c}), tol, tol));
      EXPECT_TRUE(all_close(running_var, from(ref.running_var, {c}), tol, tol));  // unbiased
      EXPECT_GT(running_mean.version(), version);
    }
  }
}

TEST(BatchNorm, EvaluationUsesRunningStatsAndLeavesThemAlone) {
  const Shape shape{3, 4, 2, 5};
  std::vector<double> x = random_values(shape_numel(shape), 510);
  std::vector<double> w = random_values(4, 511), b = random_values(4, 512);
  std::vector<double> rm = random_values(4, 513), rv = random_values(4, 514, 0.5, 2);
  NaiveBn ref = naive_batch_norm(shape, x, w, b, rm, rv, false, 0.1, 1e-5);
  Tensor running_mean = from(rm, {4}), running_var = from(rv, {4});
  auto r = raw::batch_norm(from(x, shape), from(w, {4}), from(b, {4}), running_mean, running_var, false);
  EXPECT_TRUE(all_close(r.output, from(ref.y, shape), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(r.save_mean, from(rm, {4}), 0, 0));
  EXPECT_TRUE(all_close(r.save_invstd, from(ref.invstd, {4}), 1e-14, 0));
  EXPECT_EQ(values(running_mean), rm);
  EXPECT_EQ(values(running_var), rv);
}

TEST(BatchNorm, WithoutAffineOrRunningStatsAndWithNonContiguousRunningStats) {
  const Shape shape{5, 3, 4};
  std::vector<double> x = random_values(shape_numel(shape), 520);
  std::vector<double> ones(3, 1.0), zeros(3, 0.0);
  NaiveBn ref = naive_batch_norm(shape, x, ones, zeros, zeros, ones, true, 0.1, 1e-5);
  auto r = raw::batch_norm(from(x, shape), Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_TRUE(all_close(r.output, from(ref.y, shape), 1e-12, 1e-12));
  // running stats viewed with stride 2: the update must land in the viewed elements
  Tensor storage = raw::zeros({6}, kFloat64);
  Tensor rm = raw::slice(storage, 0, 0, 6, 2);
  Tensor rv = raw::ones({3}, kFloat64);
  raw::batch_norm(from(x, shape), Tensor(), Tensor(), rm, rv, true);
  EXPECT_TRUE(all_close(rm, from(ref.running_mean, {3}), 1e-12, 1e-12));
  EXPECT_EQ(values(storage)[1], 0.0);
}

TEST(BatchNorm, BackwardMatchesFiniteDifferences) {
  const Shape shape{3, 2, 3, 2};
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "evaluation");
    Tensor x = random_tensor(shape, 530), w = random_tensor({2}, 531), b = random_tensor({2}, 532);
    Tensor rm = random_tensor({2}, 533), rv = raw::add(raw::abs(random_tensor({2}, 534)), 0.5);
    Tensor r = random_tensor(shape, 535);
    auto fwd = raw::batch_norm(x, w, b, raw::clone(rm), raw::clone(rv), training, 0.1, 1e-3);
    auto grads = raw::batch_norm_backward(r, x, w, fwd.save_mean, fwd.save_invstd, training);
    auto loss = [&] {
      return raw::sum(raw::mul(raw::batch_norm(x, w, b, raw::clone(rm), raw::clone(rv), training, 0.1, 1e-3).output, r))
          .item();
    };
    EXPECT_TRUE(all_close(grads.grad_input, from(numeric_grad(x, loss), shape), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_weight, from(numeric_grad(w, loss), {2}), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_bias, from(numeric_grad(b, loss), {2}), 1e-6, 1e-7));
    auto masked = raw::batch_norm_backward(r, x, w, fwd.save_mean, fwd.save_invstd, training, {false, true, false});
    EXPECT_FALSE(masked.grad_input.defined());
    EXPECT_FALSE(masked.grad_bias.defined());
    EXPECT_TRUE(all_close(masked.grad_weight, grads.grad_weight, 0, 0));
  }
}

TEST(BatchNorm, Errors) {
  Tensor w = raw::ones({3});
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({1, 3}), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: expected more than 1 value per channel when training, got input of shape [1, 3]"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({2, 3}), w, w, Tensor(), Tensor(), false); },
                          "batch_norm: running_mean and running_var are required in evaluation mode"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({2, 4, 5}), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: expected weight of shape [4] (one per channel of input [2, 4, 5]), got [3]"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({6}), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: input must have at least 2 dims (N,C,...), got [6]"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({2, 3}, kFloat64), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: expected weight as float64 on cpu like input, got float32 on cpu"));
}

// ---------------------------------------------------------------------------------------------
// CUDA against the CPU (skipped without a GPU).

TEST(BatchNorm, MatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const Shape& shape : {Shape{4, 3, 5, 6}, Shape{6, 5}, Shape{64, 8, 33, 17}}) {
    const int64_t c = shape[1];
    Tensor x = random_tensor(shape, 800), w = random_tensor({c}, 801), b = random_tensor({c}, 802);
    Tensor gy = random_tensor(shape, 803);
    for (bool training : {true, false}) {
      Tensor rm = random_tensor({c}, 804), rv = raw::add(raw::abs(random_tensor({c}, 805)), 0.5);
      Tensor rm_cpu = raw::clone(rm), rv_cpu = raw::clone(rv);
      auto f_cpu = raw::batch_norm(x, w, b, rm_cpu, rv_cpu, training, 0.2, 1e-4);
      auto g_cpu = raw::batch_norm_backward(gy, x, w, f_cpu.save_mean, f_cpu.save_invstd, training);
      for (DType dt : {kFloat64, kFloat32}) {
        SCOPED_TRACE(shape_str(shape) + (training ? " training " : " eval ") + dtype_name(dt));
        const double tol = dt == kFloat64 ? 1e-10 : 1e-4;
        Tensor rm_gpu = to_cuda(rm, dt), rv_gpu = to_cuda(rv, dt);
        auto f = raw::batch_norm(to_cuda(x, dt), to_cuda(w, dt), to_cuda(b, dt), rm_gpu, rv_gpu, training, 0.2, 1e-4);
        EXPECT_TRUE(all_close(to_cpu64(f.output), f_cpu.output, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(f.save_mean), f_cpu.save_mean, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(f.save_invstd), f_cpu.save_invstd, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(rm_gpu), rm_cpu, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(rv_gpu), rv_cpu, tol, tol));
        auto g = raw::batch_norm_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, dt), f.save_mean, f.save_invstd,
                                          training);
        EXPECT_TRUE(all_close(to_cpu64(g.grad_input), g_cpu.grad_input, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(g.grad_weight), g_cpu.grad_weight, tol, tol * 100));
        EXPECT_TRUE(all_close(to_cpu64(g.grad_bias), g_cpu.grad_bias, tol, tol * 100));
      }
    }
  }
}

TEST(BatchNorm, HalfInputsKeepStatisticsInFloat32_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Shape shape{8, 4, 9, 7};
  Tensor x = random_tensor(shape, 810), w = random_tensor({4}, 811), b = random_tensor({4}, 812);
  Tensor gy = random_tensor(shape, 813);
  Tensor rm = random_tensor({4}, 814), rv = raw::add(raw::abs(random_tensor({4}, 815)), 0.5);
  // The float64 CPU reference sees the 16-bit inputs' values.
  for (DType dt : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor xr = to_cpu64(to_cuda(x, dt)), gyr = to_cpu64(to_cuda(gy, dt));
    Tensor rm_cpu = raw::clone(rm), rv_cpu = raw::clone(rv);
    auto f_cpu = raw::batch_norm(xr, w, b, rm_cpu, rv_cpu, true, 0.2, 1e-4);
    auto g_cpu = raw::batch_norm_backward(gyr, xr, w, f_cpu.save_mean, f_cpu.save_invstd, true);
    const double tol = dt == kFloat16 ? 1e-2 : 5e-2;
    // Mixed precision (PyTorch's autocast case): float32 weight, bias and running statistics.
    Tensor rm_gpu = to_cuda(rm, kFloat32), rv_gpu = to_cuda(rv, kFloat32);
    auto f = raw::batch_norm(to_cuda(x, dt), to_cuda(w, kFloat32), to_cuda(b, kFloat32), rm_gpu, rv_gpu, true, 0.2, 1e-4);
    EXPECT_EQ(f.output.dtype(), dt);
    EXPECT_EQ(f.save_mean.dtype(), kFloat32);
    EXPECT_EQ(f.save_invstd.dtype(), kFloat32);
    EXPECT_EQ(rm_gpu.dtype(), kFloat32);
    EXPECT_TRUE(all_close(to_cpu64(f.output), f_cpu.output, tol, tol));
    // Statistics computed and kept in float32: far tighter than the 16-bit output.
    EXPECT_TRUE(all_close(to_cpu64(f.save_mean), f_cpu.save_mean, 1e-5, 1e-5));
    EXPECT_TRUE(all_close(to_cpu64(f.save_invstd), f_cpu.save_invstd, 1e-5, 1e-5));
    EXPECT_TRUE(all_close(to_cpu64(rm_gpu), rm_cpu, 1e-5, 1e-5));
    EXPECT_TRUE(all_close(to_cpu64(rv_gpu), rv_cpu, 1e-5, 1e-5));
    auto g = raw::batch_norm_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, kFloat32), f.save_mean, f.save_invstd,
                                      true);
    EXPECT_EQ(g.grad_weight.dtype(), kFloat32);
    EXPECT_TRUE(all_close(to_cpu64(g.grad_input), g_cpu.grad_input, tol, tol));
    EXPECT_TRUE(all_close(to_cpu64(g.grad_weight), g_cpu.grad_weight, 1e-4, 1e-3));
    EXPECT_TRUE(all_close(to_cpu64(g.grad_bias), g_cpu.grad_bias, 1e-4, 1e-3));
    // All-16-bit parameters: the saved statistics are still float32.
    Tensor rm16 = to_cuda(rm, dt), rv16 = to_cuda(rv, dt);
    auto h = raw::batch_norm(to_cuda(x, dt), to_cuda(w, dt), to_cuda(b, dt), rm16, rv16, true, 0.2, 1e-4);
    EXPECT_EQ(h.save_mean.dtype(), kFloat32);
    EXPECT_EQ(rm16.dtype(), dt);
    EXPECT_TRUE(all_close(to_cpu64(h.output), f_cpu.output, tol, tol));
    // Float64 parameters with a 16-bit input are neither.
    EXPECT_TRUE(throws_with([&] { raw::batch_norm(to_cuda(x, dt), to_cuda(w, kFloat64), Tensor(), Tensor(), Tensor(), true); },
                            "batch_norm: expected weight as"));
  }
}

}  // namespace
}  // namespace colony
