// Fused cross-entropy / nll_loss (ops/loss_ops.cc): values and gradients against the textbook
// formulas in double written here, every reduction, ignore_index and label smoothing, 16-bit
// inputs, errors; on CUDA, every dtype against float64 on the CPU and bad targets reported at the
// next synchronization.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/cuda.h"
#include "tensor/random.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using raw::LossReduction;
using testing::all_close;
using testing::throws_with;
using testing::values;

raw::CrossEntropyOptions options(LossReduction r, double smoothing = 0.0, int64_t ignore = -100, bool log_probs = false) {
  raw::CrossEntropyOptions o;
  o.reduction = r;
  o.label_smoothing = smoothing;
  o.ignore_index = ignore;
  o.log_probs = log_probs;
  return o;
}

struct Reference {
  std::vector<double> row_loss;  // 0 for ignored rows
  double sum = 0, count = 0;
  std::vector<double> grad;      // d(sum of row losses, weighted by g_row) / dx
};

// loss_r = (1 - e) * (lse - x_t) + e * (lse - mean(x)); grad = g_r * (softmax - (1 - e) onehot - e / C).
Reference reference(const Tensor& x, const std::vector<int64_t>& target, const raw::CrossEntropyOptions& o,
                    const std::vector<double>& row_grad) {
  std::vector<double> v = values(x);
  const int64_t n = x.size(0), k = x.size(1);
  Reference r;
  r.row_loss.assign(n, 0.0);
  r.grad.assign(n * k, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    if (target[i] == o.ignore_index) continue;
    double m = -std::numeric_limits<double>::infinity(), s = 0, mean = 0;
    for (int64_t c = 0; c < k; ++c) m = std::max(m, v[i * k + c]);
    for (int64_t c = 0; c < k; ++c) s += std::exp(v[i * k + c] - m);
    for (int64_t c = 0; c < k; ++c) mean += v[i * k + c] / k;
    const double lse = o.log_probs ? 0.0 : m + std::log(s), e = o.label_smoothing;
    r.row_loss[i] = (1 - e) * (lse - v[i * k + target[i]]) + e * (lse - mean);
    r.sum += r.row_loss[i];
    r.count += 1;
    for (int64_t c = 0; c < k; ++c) {
      double p = o.log_probs ? 0.0 : std::exp(v[i * k + c] - lse);
      r.grad[i * k + c] = row_grad[i] * (p - (c == target[i] ? 1 - e : 0.0) - e / k);
    }
  }
  return r;
}

Tensor randn(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(kFloat64), &gen);
}

std::vector<int64_t> targets(int64_t n, int64_t k, uint64_t seed, bool with_ignored) {
  std::vector<int64_t> t(n);
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    t[i] = static_cast<int64_t>((s >> 33) % static_cast<uint64_t>(k));
    if (with_ignored && i % 5 == 3) t[i] = -100;
  }
  return t;
}

// The loss the op returns and the gradient for grad_output = g (a [N] vector for None, one value
// otherwise), both checked against the reference.
void check_against_reference(const Tensor& x, const std::vector<int64_t>& t, const raw::CrossEntropyOptions& o,
                             Device dev, DType dtype, double rtol, double atol) {
  const int64_t n = x.size(0);
  Tensor xt = raw::to(x, dev, dtype), tt = raw::to(raw::from_vector(t), dev, kInt64);
  raw::CrossEntropyResult r = raw::cross_entropy_loss(xt, tt, o);
  ASSERT_EQ(r.loss.dtype(), dtype);
  Tensor g;
  std::vector<double> row_grad(n, 0.0);
  if (o.reduction == LossReduction::None) {
    g = randn({n}, 99);
    row_grad = values(g);
  } else {
    g = raw::full({}, 0.75, TensorOptions(kFloat64));
    Reference pre = reference(x, t, o, row_grad);
    row_grad.assign(n, o.reduction == LossReduction::Mean ? 0.75 / pre.count : 0.75);
  }
  Reference ref = reference(x, t, o, row_grad);
  Tensor expect_loss = o.reduction == LossReduction::None ? raw::from_vector(ref.row_loss)
                       : o.reduction == LossReduction::Sum ? raw::full({}, ref.sum, TensorOptions(kFloat64))
                                                           : raw::full({}, ref.sum / ref.count, TensorOptions(kFloat64));
  EXPECT_TRUE(all_close(r.loss, expect_loss, rtol, atol));
  Tensor gx = raw::cross_entropy_loss_backward(raw::to(g, dev, dtype), xt, tt, r.lse, r.counted, o);
  EXPECT_TRUE(all_close(gx, raw::reshape(raw::from_vector(ref.grad), x.sizes()), rtol, atol));
}

const LossReduction kReductions[] = {LossReduction::Mean, LossReduction::Sum, LossReduction::None};

TEST(CrossEntropyLoss, Float64MatchesTheFormulas) {
  Tensor x = randn({9, 5}, 1);
  for (bool ignored : {false, true}) {
    std::vector<int64_t> t = targets(9, 5, 2, ignored);
    for (LossReduction red : kReductions) {
      for (double e : {0.0, 0.3}) {
        SCOPED_TRACE("reduction " + std::to_string(static_cast<int>(red)) + " smoothing " + std::to_string(e));
        check_against_reference(x, t, options(red, e), kCPU, kFloat64, 1e-12, 1e-12);
      }
      check_against_reference(x, t, options(red, 0.0, -100, /*log_probs=*/true), kCPU, kFloat64, 1e-12, 1e-12);
    }
  }
}

// float32 rows go through the vector row loops (kernels/cpu/activation_simd.h): class counts that
// leave every kind of tail (1, under one vector, 16, 17, 1000, 1001), ignored rows, smoothing, and
// enough rows to split over threads.
TEST(CrossEntropyLoss, Float32VectorRowsMatchTheFormulas) {
  for (int64_t k : {1, 7, 16, 17, 1000, 1001}) {
    const int64_t n = k >= 1000 ? 40 : 300;
    Tensor x = randn({n, k}, 10 + k);
    std::vector<int64_t> t = targets(n, k, 11, true);
    for (LossReduction red : kReductions) {
      for (double e : {0.0, 0.2}) {
        SCOPED_TRACE("classes " + std::to_string(k) + " reduction " + std::to_string(static_cast<int>(red)) +
                     " smoothing " + std::to_string(e));
        check_against_reference(x, t, options(red, e), kCPU, kFloat32, 2e-5, 1e-6);
      }
    }
  }
}

TEST(CrossEntropyLoss, LowerPrecisionOnTheCpu) {
  Tensor x = randn({6, 7}, 3);
  std::vector<int64_t> t = targets(6, 7, 4, true);
  check_against_reference(x, t, options(LossReduction::Mean, 0.1), kCPU, kFloat32, 1e-5, 1e-6);
  check_against_reference(x, t, options(LossReduction::None), kCPU, kFloat16, 1e-2, 2e-3);
  check_against_reference(x, t, options(LossReduction::Sum), kCPU, kBFloat16, 2e-2, 2e-2);
  // 16-bit inputs keep the saved statistics in float32.
  raw::CrossEntropyResult r = raw::cross_entropy_loss(raw::to(x, kCPU, kFloat16), raw::from_vector(t), options(LossReduction::Mean));
  EXPECT_EQ(r.lse.dtype(), kFloat32);
  EXPECT_EQ(r.counted.dtype(), kFloat32);
  EXPECT_EQ(values(r.counted)[0], 5.0);  // one of the 6 targets is ignored
}

TEST(CrossEntropyLoss, LargeLogitsDoNotOverflow) {
  Tensor x = raw::tensor({{1000, 0, -1000}, {-1000, 1000, 999}});
  raw::CrossEntropyResult r =
      raw::cross_entropy_loss(x, raw::from_vector(std::vector<int64_t>{0, 2}), options(LossReduction::None));
  std::vector<double> l = values(r.loss);
  EXPECT_NEAR(l[0], 0.0, 1e-6);
  EXPECT_NEAR(l[1], std::log1p(std::exp(1.0)), 1e-6);
}

// Logits far from 0 (exact in float32: 1e8 + 8 is the next float after 1e8) lose no precision:
// log-probabilities are (x - max) - log(sum), never x - (max + log(sum)), whose rounding gave a
// loss of 0 and gradients [0, 0] for [1e8, 1e8] instead of log 2 and [-0.5, 0.5].
Tensor large_logits() { return raw::to(raw::tensor({{1e8, 1e8}, {1e8, 1e8 + 8}, {1e4, 1e4 + 1}, {-3e7, -3e7}}), kCPU, kFloat64); }

TEST(CrossEntropyLoss, LargeLogitsKeepTheirPrecision) {
  const std::vector<int64_t> t = {0, 0, 1, 1};
  for (LossReduction red : kReductions) {
    for (double e : {0.0, 0.2}) {
      SCOPED_TRACE("reduction " + std::to_string(static_cast<int>(red)) + " smoothing " + std::to_string(e));
      check_against_reference(large_logits(), t, options(red, e), kCPU, kFloat32, 1e-6, 1e-6);
    }
  }
  raw::CrossEntropyResult r = raw::cross_entropy_loss(raw::to(large_logits(), kCPU, kFloat32), raw::from_vector(t),
                                                      options(LossReduction::None));
  EXPECT_NEAR(values(r.loss)[0], std::log(2.0), 1e-7);
}

TEST(CrossEntropyLoss, EmptyBatchAndAllIgnored) {
  Tensor x = raw::zeros({0, 3});
  Tensor none = raw::from_vector(std::vector<int64_t>{});
  EXPECT_TRUE(std::isnan(values(raw::cross_entropy_loss(x, none, options(LossReduction::Mean)).loss)[0]));
  EXPECT_EQ(values(raw::cross_entropy_loss(x, none, options(LossReduction::Sum)).loss)[0], 0.0);
  // Every target ignored: the mean is 0 / 0, as in PyTorch.
  Tensor all_ignored = raw::from_vector(std::vector<int64_t>{-100, -100});
  EXPECT_TRUE(std::isnan(values(raw::cross_entropy_loss(raw::ones({2, 3}), all_ignored, options(LossReduction::Mean)).loss)[0]));
}

TEST(CrossEntropyLoss, Errors) {
  Tensor x = raw::ones({2, 3});
  auto t = [](std::vector<int64_t> v) { return raw::from_vector(v); };
  EXPECT_TRUE(throws_with([&] { raw::cross_entropy_loss(x, t({0, 5}), options(LossReduction::Mean)); },
                          "cross_entropy: target 5 is out of bounds for 3 classes"));
  EXPECT_TRUE(throws_with([&] { raw::cross_entropy_loss(x, t({-1, 0}), options(LossReduction::None, 0, -100, true)); },
                          "nll_loss: target -1 is out of bounds for 3 classes"));
  EXPECT_TRUE(throws_with([&] { raw::cross_entropy_loss(x, t({0}), options(LossReduction::Mean)); },
                          "expected target of shape [2] for input [2, 3], got [1]"));
  EXPECT_TRUE(throws_with([&] { raw::cross_entropy_loss(x, raw::zeros({2}), options(LossReduction::Mean)); },
                          "expected int64 targets, got float32"));
  EXPECT_TRUE(throws_with([&] { raw::cross_entropy_loss(raw::ones({6}), t({0}), options(LossReduction::Mean)); },
                          "expected input [N, C], got [6]"));
  EXPECT_TRUE(throws_with([&] { raw::cross_entropy_loss(x, t({0, 1}), options(LossReduction::Mean, 1.5)); },
                          "label_smoothing must be in [0, 1], got 1.5"));
  EXPECT_TRUE(throws_with([&] { raw::cross_entropy_loss(x, t({0, 1}), options(LossReduction::Mean, 0.1, -100, true)); },
                          "label smoothing applies to cross_entropy only"));
  raw::CrossEntropyResult r = raw::cross_entropy_loss(x, t({0, 1}), options(LossReduction::Mean));
  EXPECT_TRUE(throws_with([&] {
    raw::cross_entropy_loss_backward(raw::ones({2}), x, t({0, 1}), r.lse, r.counted, options(LossReduction::Mean));
  }, "cross_entropy_backward: grad_output is float32 [2] on cpu, expected float32 [] on cpu"));
}

// ---------- CUDA against CPU ----------

TEST(CrossEntropyLoss, EveryDtypeAgainstFloat64_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  // Warp rows (10 classes), block rows (3000 > 1024 classes), and enough rows for many blocks in
  // the forward's reduction (5000 / 8 rows per block = 625 blocks).
  for (const Shape& shape : {Shape{64, 10}, Shape{7, 3000}, Shape{5000, 10}}) {
    Tensor x = randn(shape, 11);
    std::vector<int64_t> t = targets(shape[0], shape[1], 12, true);
    for (LossReduction red : kReductions) {
      for (double e : {0.0, 0.1}) {
        SCOPED_TRACE(shape_str(shape) + " reduction " + std::to_string(static_cast<int>(red)) + " smoothing " +
                     std::to_string(e));
        check_against_reference(x, t, options(red, e), dev, kFloat64, 1e-10, 1e-12);
        check_against_reference(x, t, options(red, e), dev, kFloat32, 1e-4, 1e-5);
        check_against_reference(x, t, options(red, e), dev, kFloat16, 2e-2, 5e-3);
        check_against_reference(x, t, options(red, e), dev, kBFloat16, 5e-2, 3e-2);
      }
      check_against_reference(x, t, options(red, 0.0, -100, true), dev, kFloat32, 1e-4, 1e-5);
    }
  }
}

TEST(CrossEntropyLoss, LargeLogitsKeepTheirPrecision_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const std::vector<int64_t> t = {0, 0, 1, 1};
  for (LossReduction red : kReductions) {
    for (double e : {0.0, 0.2}) {
      SCOPED_TRACE("reduction " + std::to_string(static_cast<int>(red)) + " smoothing " + std::to_string(e));
      check_against_reference(large_logits(), t, options(red, e), Device::cuda(0), kFloat32, 1e-6, 1e-6);
    }
  }
}

TEST(CrossEntropyLoss, SameResultOnEveryRun_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  // The forward's reduction adds block sums in a fixed order: bitwise the same every time.
  Tensor x = raw::to(randn({20000, 10}, 13), Device::cuda(0), kFloat32);
  Tensor t = raw::to(raw::from_vector(targets(20000, 10, 14, false)), Device::cuda(0), kInt64);
  double first = raw::cross_entropy_loss(x, t, options(LossReduction::Mean)).loss.item<double>();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(raw::cross_entropy_loss(x, t, options(LossReduction::Mean)).loss.item<double>(), first);
}

TEST(CrossEntropyLoss, BadTargetIsReportedAtTheNextSynchronization_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  Tensor x = raw::to(raw::ones({4, 3}), dev, kFloat32);
  Tensor t = raw::to(raw::from_vector(std::vector<int64_t>{0, 1, 7, 2}), dev, kInt64);
  raw::CrossEntropyResult r;
  // No host round trip inside the op: it returns, the error waits for the synchronization.
  ASSERT_NO_THROW(r = raw::cross_entropy_loss(x, t, options(LossReduction::Mean)));
  EXPECT_TRUE(throws_with([&] { cuda::synchronize(); }, "cross_entropy: target 7 is out of bounds for 3 classes"));
  // Reported once; the next good op runs clean.
  Tensor good = raw::to(raw::from_vector(std::vector<int64_t>{0, 1, 2, 2}), dev, kInt64);
  EXPECT_NO_THROW(raw::cross_entropy_loss(x, good, options(LossReduction::Mean)).loss.item<double>());
}

}  // namespace
}  // namespace colony
