// nn::init's trunc_normal_, orthogonal_, sparse_, dirac_ and eye_ against torch.nn.init's
// definitions: bounds and moments of the truncated normal, orthogonality and torch's sign
// correction, the zero count of sparse_, identities of dirac_ and eye_, and their refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/linalg.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

double phi(double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); }
double big_phi(double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; }

// 200,000 draws of normal(0.5, 1.5) truncated to [-1, 5]: all inside, with the truncated normal's
// mean and variance (standard errors about 0.003 and 0.005).
TEST(Init, TruncNormalStaysInBoundsWithTheTruncatedMoments) {
  for (DType dtype : {kFloat64, kFloat32}) {
    SCOPED_TRACE(dtype_name(dtype));
    const double mean = 0.5, std = 1.5, a = -1, b = 5;
    Generator gen(7);
    Tensor t = raw::empty({200000}, TensorOptions(dtype));
    init::trunc_normal_(t, mean, std, a, b, &gen);
    const std::vector<double> v = values(t);
    double lo = v[0], hi = v[0], sum = 0, sq = 0;
    for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
    const double m = sum / static_cast<double>(v.size());
    for (double x : v) sq += (x - m) * (x - m);
    const double var = sq / static_cast<double>(v.size() - 1);
    EXPECT_GE(lo, a);
    EXPECT_LE(hi, b);
    EXPECT_LT(lo, a + 0.01);  // the draws reach both ends
    EXPECT_GT(hi, b - 0.5);
    const double alpha = (a - mean) / std, beta = (b - mean) / std, z = big_phi(beta) - big_phi(alpha);
    const double want_mean = mean + std * (phi(alpha) - phi(beta)) / z;
    const double r = (phi(alpha) - phi(beta)) / z;
    const double want_var = std * std * (1 + (alpha * phi(alpha) - beta * phi(beta)) / z - r * r);
    EXPECT_NEAR(m, want_mean, 0.015);
    EXPECT_NEAR(var, want_var, 0.03);
    // The same generator state draws the same numbers.
    Generator again(7);
    Tensor u = raw::empty({200000}, TensorOptions(dtype));
    init::trunc_normal_(u, mean, std, a, b, &again);
    EXPECT_EQ(values(u), v);
  }
}

// torch's defaults: mean 0, std 1, [-2, 2].
TEST(Init, TruncNormalDefaultsAreTorchs) {
  Tensor t = raw::empty({50000});
  init::trunc_normal_(t);
  const std::vector<double> v = values(t);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 2.0);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -2.0);
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 1.9);
}

// Q^T Q = I for a tall matrix (and a 4-D weight flattened to [size(0), rest]), Q Q^T = I for a
// wide one, both times the gain; and torch's sign correction: R = Q^T M (M the normal matrix drawn
// from the same generator state) has a positive diagonal.
TEST(Init, OrthogonalIsOrthogonalWithTorchsSignCorrection) {
  for (DType dtype : {kFloat64, kFloat32}) {
    SCOPED_TRACE(dtype_name(dtype));
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
    for (Shape shape : {Shape{7, 4}, Shape{3, 8}, Shape{6, 2, 2, 2}, Shape{5, 5}}) {
      SCOPED_TRACE(shape_str(shape));
      Generator gen(3);
      Tensor w = raw::empty(shape, TensorOptions(dtype));
      init::orthogonal_(w, 2.0, &gen);
      const int64_t rows = shape[0], cols = w.numel() / rows;
      Tensor q = raw::reshape(w, {rows, cols});
      Tensor gram = rows >= cols ? raw::mm(raw::transpose(q, 0, 1), q) : raw::mm(q, raw::transpose(q, 0, 1));
      const int64_t k = std::min(rows, cols);
      const std::vector<double> g = values(gram);
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) EXPECT_NEAR(g[i * k + j], i == j ? 4.0 : 0.0, 4 * tol) << i << "," << j;
      // The normal matrix orthogonal_ factored: the same draw from the same state.
      Generator same(3);
      Tensor m = raw::empty({rows, cols}, TensorOptions(dtype));
      raw::normal_(m, 0, 1, &same);
      Tensor tall_q = rows >= cols ? q : raw::transpose(q, 0, 1);
      Tensor tall_m = rows >= cols ? m : raw::transpose(m, 0, 1);
      Tensor r = raw::mm(raw::transpose(tall_q, 0, 1), tall_m);  // 2 R
      const std::vector<double> rv = values(r);
      for (int64_t i = 0; i < k; ++i) {
        EXPECT_GT(rv[i * k + i], 0.0) << "R's diagonal " << i;
        for (int64_t j = 0; j < i; ++j) EXPECT_NEAR(rv[i * k + j], 0.0, 10 * tol) << "below R's diagonal";
      }
    }
  }
  Tensor empty = raw::empty({0, 3});
  init::orthogonal_(empty);  // nothing to fill, as torch
  Tensor v = raw::empty({3});
  EXPECT_TRUE(throws_with([&] { init::orthogonal_(v); }, "Only tensors with 2 or more dimensions are supported"));
}

TEST(Init, SparseZeroesTheSameNumberOfRowsInEveryColumn) {
  Generator gen(5);
  Tensor t = raw::empty({10, 6});
  init::sparse_(t, 0.25, 0.5, &gen);  // ceil(2.5) = 3 zeros per column
  const std::vector<double> v = values(t);
  double sq = 0;
  for (int64_t c = 0; c < 6; ++c) {
    int zeros = 0;
    for (int64_t r = 0; r < 10; ++r) zeros += v[r * 6 + c] == 0;
    EXPECT_EQ(zeros, 3) << "column " << c;
  }
  for (double x : v) sq += x * x;
  EXPECT_GT(sq, 0.0);
  Tensor v3 = raw::empty({2, 2, 2});
  EXPECT_TRUE(throws_with([&] { init::sparse_(v3, 0.1); }, "Only tensors with 2 dimensions are supported"));
}

// A dirac_ weight makes a convolution the identity on the first min(out, in) channels of each group.
TEST(Init, DiracMakesAConvolutionTheIdentity) {
  Tensor w = raw::empty({4, 2, 3, 3}, TensorOptions(kFloat64));
  init::dirac_(w, 2);
  const std::vector<double> v = values(w);
  std::vector<double> want(v.size(), 0.0);
  // groups of 2 output channels: channel g * 2 + d takes input channel d at the kernel's centre.
  for (int g = 0; g < 2; ++g)
    for (int d = 0; d < 2; ++d) want[((g * 2 + d) * 2 + d) * 9 + 4] = 1;
  EXPECT_EQ(v, want);
  Tensor x = raw::from_vector(testing::random_values(2 * 5 * 5, 1), {1, 2, 5, 5});
  Tensor w1 = raw::empty({2, 2, 3, 3}, TensorOptions(kFloat64));
  init::dirac_(w1);
  Tensor y = functional::conv2d(x, w1, Tensor(), functional::Conv2dFuncOptions().padding(1));
  EXPECT_EQ(values(y), values(x));
  Tensor w3 = raw::empty({3, 3, 4});  // even kernel: index size / 2, as torch
  init::dirac_(w3);
  EXPECT_EQ(values(w3)[0 * 12 + 0 * 4 + 2], 1.0);
  Tensor w2 = raw::empty({3, 3});
  EXPECT_TRUE(throws_with([&] { init::dirac_(w2); }, "Only tensors with 3, 4, or 5 dimensions are supported"));
  Tensor odd = raw::empty({3, 3, 3});
  EXPECT_TRUE(throws_with([&] { init::dirac_(odd, 2); }, "dim 0 must be divisible by groups"));
}

TEST(Init, EyeFillsTheIdentityOfARectangle) {
  Tensor t = raw::full({2, 3}, 7.0);
  init::eye_(t);
  EXPECT_EQ(values(t), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  Tensor v = raw::empty({3});
  EXPECT_TRUE(throws_with([&] { init::eye_(v); }, "Only tensors with 2 dimensions are supported"));
}

}  // namespace
}  // namespace colony::nn
