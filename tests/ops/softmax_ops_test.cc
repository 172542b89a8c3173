// Softmax family (ops/softmax_ops.cc): values against a naive formula in double written here,
// every axis position (last, first, middle: the row and column kernels), strided input, overflow
// safety, NaN/-inf rows, the backward formulas checked against finite differences, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/raw_ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using testing::values;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor randn(const Shape& shape, uint64_t seed, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(dtype), &gen);
}

// Softmax (or log-softmax) over `dim` of a 3-D tensor, computed in double with the textbook
// formula (shifted by the max, which does not change the value).
Tensor naive_softmax3(const Tensor& t, int64_t dim, bool log) {
  std::vector<double> v = values(t), out(v.size());
  Shape s = t.sizes();
  auto at = [&](int64_t a, int64_t b, int64_t c) { return (a * s[1] + b) * s[2] + c; };
  for (int64_t a = 0; a < s[0]; ++a)
    for (int64_t b = 0; b < s[1]; ++b)
      for (int64_t c = 0; c < s[2]; ++c) {
        // Visit each line along `dim` once, from its first element.
        int64_t pos[3] = {a, b, c};
        if (pos[dim] != 0) continue;
        std::vector<int64_t> idx;
        for (int64_t r = 0; r < s[dim]; ++r) {
          pos[dim] = r;
          idx.push_back(at(pos[0], pos[1], pos[2]));
        }
        double mx = -kInf, sum = 0;
        for (int64_t i : idx) mx = std::max(mx, v[i]);
        for (int64_t i : idx) sum += std::exp(v[i] - mx);
        for (int64_t i : idx) out[i] = log ? v[i] - mx - std::log(sum) : std::exp(v[i] - mx) / sum;
      }
  return raw::from_vector(out, s, TensorOptions(kFloat64));
}

TEST(Softmax, HandValues) {
  Tensor t = raw::tensor({{0, std::log(3.0)}, {1, 1}});
  EXPECT_TRUE(all_close(raw::softmax(t, 1), raw::tensor({{0.25, 0.75}, {0.5, 0.5}}), 1e-6, 1e-7));
  EXPECT_TRUE(all_close(raw::log_softmax(t, -1), raw::tensor({{std::log(0.25), std::log(0.75)},
                                                               {std::log(0.5), std::log(0.5)}}), 1e-6, 1e-6));
}

TEST(Softmax, EveryAxisMatchesNaive) {
  Tensor t = randn({3, 5, 7}, 1);
  Tensor strided = raw::permute(randn({7, 3, 5}, 2), {1, 2, 0});
  for (const Tensor& x : {t, strided}) {
    for (int64_t dim : {0, 1, 2}) {
      SCOPED_TRACE("dim " + std::to_string(dim));
      EXPECT_TRUE(all_close(raw::softmax(x, dim), naive_softmax3(x, dim, false), 1e-5, 1e-7));
      EXPECT_TRUE(all_close(raw::log_softmax(x, dim), naive_softmax3(x, dim, true), 1e-5, 1e-5));
      EXPECT_TRUE(all_close(raw::softmax(x, dim - 3), naive_softmax3(x, dim, false), 1e-5, 1e-7));
    }
  }
  Tensor wide = randn({2, 3, 300}, 3);  // more columns than one block of the column kernel
  EXPECT_TRUE(all_close(raw::softmax(wide, 1), naive_softmax3(wide, 1, false), 1e-5, 1e-7));
  Tensor d = randn({4, 6, 2}, 4, kFloat64);
  EXPECT_TRUE(all_close(raw::log_softmax(d, 1), naive_softmax3(d, 1, true), 1e-12, 1e-12));
}

// float32 along the last axis goes through the vector row loops (kernels/cpu/activation_simd.h):
// row lengths that leave every kind of tail (1, under one vector, 16, 17, 64, 1025), enough rows to
// split over threads, forward and backward against float64 formulas; and a strided input (copied
// to rows first).
TEST(Softmax, LastAxisVectorRowsMatchNaive) {
  for (int64_t n : {1, 5, 16, 17, 64, 1025}) {
    const int64_t rows = n > 64 ? 20 : 600;
    Tensor x = randn({1, rows, n}, 30 + n), g = randn({1, rows, n}, 31 + n);
    for (bool log : {false, true}) {
      SCOPED_TRACE(std::string(log ? "log_softmax" : "softmax") + " n " + std::to_string(n));
      Tensor y = log ? raw::log_softmax(x, 2) : raw::softmax(x, 2);
      EXPECT_TRUE(all_close(y, naive_softmax3(x, 2, log), 1e-5, log ? 1e-5 : 1e-7));
      // The backward from this y, in float64: softmax y (g - sum(g y)); log-softmax g - e^y sum(g).
      std::vector<double> yv = values(y), gv = values(g), want(yv.size());
      for (int64_t r = 0; r < rows; ++r) {
        double acc = 0;
        for (int64_t c = 0; c < n; ++c) acc += log ? gv[r * n + c] : gv[r * n + c] * yv[r * n + c];
        for (int64_t c = 0; c < n; ++c) {
          const int64_t i = r * n + c;
          want[i] = log ? gv[i] - std::exp(yv[i]) * acc : yv[i] * (gv[i] - acc);
        }
      }
      Tensor gx = log ? raw::log_softmax_backward(g, y, 2) : raw::softmax_backward(g, y, 2);
      EXPECT_TRUE(all_close(gx, raw::from_vector(want, x.sizes(), TensorOptions(kFloat64)), 1e-5, 1e-6));
    }
  }
  Tensor strided = raw::transpose(randn({33, 40}, 40), 0, 1);
  EXPECT_TRUE(all_close(raw::softmax(strided, 1), raw::softmax(raw::contiguous(strided), 1), 0, 0));
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  Tensor t = raw::tensor({1000, 1001, 1002});
  Tensor p = raw::softmax(t, 0);
  double z = 1 + std::exp(1.0) + std::exp(2.0);
  EXPECT_TRUE(all_close(p, raw::tensor({1 / z, std::exp(1.0) / z, std::exp(2.0) / z}), 1e-5, 1e-7));
  EXPECT_TRUE(all_close(raw::log_softmax(raw::tensor({-1000, 0}), 0), raw::tensor({-1000, 0}), 1e-6, 1e-6));
}

// log_softmax = (x - max) - log(sum(exp(x - max))): exact to float rounding for logits far from 0,
// where x - (max + log(sum)) loses log(sum)'s low bits (0 instead of -log 2 for [1e8, 1e8]). Rows
// along the last axis and columns along the first (the two kernels), in float32.
std::vector<double> large_logits_log_softmax() {
  const double l8 = std::log1p(std::exp(-8.0)), l1 = std::log1p(std::exp(-1.0));
  return {-std::log(2.0), -std::log(2.0), -8 - l8, -l8, -1 - l1, -l1};
}
Tensor large_logits() { return raw::tensor({{1e8, 1e8}, {1e8, 1e8 + 8}, {1e4, 1e4 + 1}}); }

TEST(Softmax, LogSoftmaxOfLargeLogitsKeepsItsPrecision) {
  const Tensor x = large_logits();
  ASSERT_EQ(x.dtype(), kFloat32);
  const Tensor expected = raw::reshape(raw::from_vector(large_logits_log_softmax()), {3, 2});
  EXPECT_TRUE(all_close(raw::log_softmax(x, 1), expected, 1e-6, 1e-6));
  EXPECT_TRUE(all_close(raw::log_softmax(raw::contiguous(raw::transpose(x, 0, 1)), 0), raw::transpose(expected, 0, 1),
                        1e-6, 1e-6));
}

TEST(Softmax, InfAndNaN) {
  // -inf has probability 0; a NaN makes its whole row NaN and leaves the other rows alone.
  Tensor t = raw::tensor({{-kInf, 0, 0}, {1, kNaN, 2}, {0, 0, 0}});
  std::vector<double> p = values(raw::softmax(t, 1));
  EXPECT_EQ(p[0], 0.0);
  EXPECT_NEAR(p[1], 0.5, 1e-7);
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(p[i]));
  EXPECT_NEAR(p[6], 1.0 / 3, 1e-7);
  std::vector<double> lp = values(raw::log_softmax(t, 1));
  EXPECT_EQ(lp[0], -kInf);
}

TEST(Softmax, ZeroDimAndEmpty) {
  EXPECT_EQ(raw::softmax(raw::scalar_tensor(3.0), 0).item<double>(), 1.0);
  EXPECT_EQ(raw::log_softmax(raw::scalar_tensor(3.0), -1).item<double>(), 0.0);
  EXPECT_EQ(raw::softmax(raw::zeros({0, 4}), 1).sizes(), Shape({0, 4}));
}

TEST(Softmax, HalfPrecisionComputesInFloat) {
  Tensor x = randn({4, 50}, 5);
  Tensor h = raw::to(x, kCPU, kFloat16);
  Tensor p = raw::softmax(h, 1);
  EXPECT_EQ(p.dtype(), kFloat16);
  EXPECT_TRUE(all_close(p, raw::softmax(raw::to(h, kCPU, kFloat32), 1), 2e-3, 1e-4));
}

TEST(Softmax, Errors) {
  EXPECT_TRUE(throws_with([] { raw::softmax(raw::zeros({2, 3}, TensorOptions(kInt64)), 1); },
                          "softmax: expected a floating point tensor, got int64"));
  EXPECT_TRUE(throws_with([] { raw::log_softmax(raw::zeros({2, 3}), 2); }, "log_softmax: dim 2 out of range"));
  EXPECT_TRUE(throws_with([] { raw::softmax_backward(raw::zeros({2, 3}), raw::zeros({3, 2}), 1); },
                          "softmax_backward: grad has shape [2, 3] but output has shape [3, 2]"));
}

// sum(g * f(x)) differentiated by central differences, in float64.
std::vector<double> numeric_grad(const Tensor& x, const Tensor& g, int64_t dim, bool log) {
  std::vector<double> xv = values(x), gv = values(g), out(xv.size());
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    auto loss = [&](double delta) {
      std::vector<double> p = xv;
      p[i] += delta;
      Tensor y = log ? raw::log_softmax(raw::from_vector(p, x.sizes()), dim) : raw::softmax(raw::from_vector(p, x.sizes()), dim);
      std::vector<double> yv = values(y);
      double s = 0;
      for (size_t k = 0; k < yv.size(); ++k) s += gv[k] * yv[k];
      return s;
    };
    out[i] = (loss(h) - loss(-h)) / (2 * h);
  }
  return out;
}

TEST(SoftmaxBackward, MatchesFiniteDifferences) {
  for (int64_t dim : {0, 1, 2}) {
    Tensor x = randn({2, 3, 4}, 6 + dim, kFloat64), g = randn({2, 3, 4}, 9 + dim, kFloat64);
    for (bool log : {false, true}) {
      SCOPED_TRACE(std::string(log ? "log_softmax" : "softmax") + " dim " + std::to_string(dim));
      Tensor y = log ? raw::log_softmax(x, dim) : raw::softmax(x, dim);
      Tensor gx = log ? raw::log_softmax_backward(g, y, dim) : raw::softmax_backward(g, y, dim);
      Tensor want = raw::from_vector(numeric_grad(x, g, dim, log), x.sizes(), TensorOptions(kFloat64));
      EXPECT_TRUE(all_close(gx, want, 1e-6, 1e-8));
    }
  }
}

TEST(SoftmaxBackward, StridedGradient) {
  Tensor x = randn({5, 4}, 12), g = raw::transpose(randn({4, 5}, 13), 0, 1);
  Tensor y = raw::softmax(x, 1);
  Tensor want = raw::softmax_backward(raw::contiguous(g), y, 1);
  EXPECT_TRUE(all_close(raw::softmax_backward(g, y, 1), want, 0, 0));
  // The formula by hand for one row: y * (g - sum(g * y)).
  std::vector<double> yv = values(y), gv = values(g), got = values(want);
  double dot = 0;
  for (int j = 0; j < 4; ++j) dot += gv[j] * yv[j];
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(got[j], yv[j] * (gv[j] - dot), 1e-6);
}

// ---------- CUDA against CPU ----------

TEST(Softmax, ForwardBackward_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  // Row lengths on both sides of the warp-per-row limit (1024), and axes with inner > 1.
  for (const Shape& shape : {Shape{64, 10}, Shape{7, 3000}, Shape{5, 33, 40}}) {
    Tensor x = randn(shape, 20), g = randn(shape, 21);
    for (int64_t dim : {0, -1}) {
      SCOPED_TRACE(shape_str(shape) + " dim " + std::to_string(dim));
      for (bool log : {false, true}) {
        Tensor y = log ? raw::log_softmax(x, dim) : raw::softmax(x, dim);
        Tensor xg = raw::to(x, dev, kFloat32), gg = raw::to(g, dev, kFloat32);
        Tensor yg = log ? raw::log_softmax(xg, dim) : raw::softmax(xg, dim);
        EXPECT_TRUE(all_close(yg, y, 1e-5, 1e-6));
        Tensor gx = log ? raw::log_softmax_backward(g, y, dim) : raw::softmax_backward(g, y, dim);
        Tensor gxg = log ? raw::log_softmax_backward(gg, yg, dim) : raw::softmax_backward(gg, yg, dim);
        EXPECT_TRUE(all_close(gxg, gx, 1e-4, 1e-5));
      }
    }
  }
  const Tensor xl = raw::to(large_logits(), dev, kFloat32);
  const Tensor expected = raw::reshape(raw::from_vector(large_logits_log_softmax()), {3, 2});
  EXPECT_TRUE(all_close(raw::log_softmax(xl, 1), expected, 1e-6, 1e-6));
  EXPECT_TRUE(all_close(raw::log_softmax(raw::contiguous(raw::transpose(xl, 0, 1)), 0), raw::transpose(expected, 0, 1),
                        1e-6, 1e-6));
  Tensor bad = raw::tensor({{1, kNaN, 2}, {-kInf, 0, 0}});
  EXPECT_TRUE(all_close(raw::softmax(raw::to(bad, dev, kFloat32), 1), raw::softmax(bad, 1), 1e-6, 1e-7));
  Tensor h = raw::to(randn({16, 2000}, 22), kCPU, kFloat16);
  EXPECT_TRUE(all_close(raw::softmax(raw::to(h, dev, kFloat16), 1), raw::softmax(h, 1), 2e-3, 1e-5));
}

}  // namespace
}  // namespace colony
