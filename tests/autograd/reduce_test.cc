// Gradient checks of the reductions (autograd/reduce.cc) over all dims, some dims, keepdim.
#include <cmath>
#include <limits>

#include "tests/autograd/gradcheck.h"
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;
using Dims = std::vector<int64_t>;

// f(x, dims, keepdim) checked on a [2, 3, 4] input (dense and strided) for several dim sets.
template <typename F>
::testing::AssertionResult check_reduction(F f) {
  for (Tensor x : {input({2, 3, 4}), strided_input({2, 3, 4})}) {
    for (const Dims& dims : {Dims{}, Dims{0}, Dims{-1}, Dims{0, 2}, Dims{1, 0}}) {
      for (bool keepdim : {false, true}) {
        ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0], dims, keepdim); }, {x});
        if (!r) return r << " (dims " << shape_str(dims) << ", keepdim " << keepdim << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Reduce, Sum) {
  EXPECT_TRUE(check_reduction([](const Tensor& x, const Dims& d, bool k) { return sum(x, d, k); }));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].sum(); }, {input({})}));
}

TEST(Reduce, Mean) {
  EXPECT_TRUE(check_reduction([](const Tensor& x, const Dims& d, bool k) { return mean(x, d, k); }));
}

TEST(Reduce, Var) {
  EXPECT_TRUE(check_reduction([](const Tensor& x, const Dims& d, bool k) { return var(x, d, true, k); }));
  EXPECT_TRUE(check_reduction([](const Tensor& x, const Dims& d, bool k) { return var(x, d, false, k); }));
}

TEST(Reduce, Amax) {
  EXPECT_TRUE(check_reduction([](const Tensor& x, const Dims& d, bool k) { return amax(x, d, k); }));
}

TEST(Reduce, Amin) {
  EXPECT_TRUE(check_reduction([](const Tensor& x, const Dims& d, bool k) { return amin(x, d, k); }));
}

TEST(Reduce, FullMaxMin) {
  EXPECT_TRUE(gradcheck([](In in) { return max(in[0]); }, {input({3, 4})}));
  EXPECT_TRUE(gradcheck([](In in) { return min(in[0]); }, {strided_input({3, 4})}));
}

TEST(Reduce, MaxMinAlongDim) {
  for (Tensor x : {input({3, 4}), strided_input({3, 4})}) {
    for (int64_t dim : {0, 1, -1}) {
      for (bool keepdim : {false, true}) {
        EXPECT_TRUE(gradcheck([&](In in) { return max(in[0], dim, keepdim).first; }, {x}));
        EXPECT_TRUE(gradcheck([&](In in) { return min(in[0], dim, keepdim).first; }, {x}));
      }
    }
  }
}

TEST(Reduce, MaxAlongDimGivesTheGradientToTheFirstMaximum) {
  Tensor x = tensor({{1.0, 3.0, 3.0}, {2.0, 0.0, -1.0}}, TensorOptions().requires_grad(true));
  auto [v, i] = x.max(1);
  EXPECT_FALSE(i.requires_grad());
  EXPECT_EQ(i.dtype(), kInt64);
  (v * raw::tensor({10.0, 20.0})).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({{0.0, 10.0, 0.0}, {20.0, 0.0, 0.0}})));
}

TEST(Reduce, AmaxSharesTiesEvenly) {
  Tensor x = tensor({{1.0, 3.0, 3.0}, {2.0, 0.0, 2.0}}, TensorOptions().requires_grad(true));
  amax(x, {1}).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({{0.0, 0.5, 0.5}, {0.5, 0.0, 0.5}})));
  Tensor y = tensor({4.0, 1.0, 4.0, 4.0}, TensorOptions().requires_grad(true));
  y.max().backward();
  EXPECT_TRUE(all_close(y.grad(), raw::tensor({1.0 / 3, 0.0, 1.0 / 3, 1.0 / 3})));
}

TEST(Reduce, MeanAndVarByHand) {
  Tensor x = tensor({1.0, 2.0, 3.0, 6.0}, TensorOptions().requires_grad(true));
  x.mean().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::full({4}, 0.25)));
  Tensor y = tensor({1.0, 2.0, 3.0, 6.0}, TensorOptions().requires_grad(true));
  y.var({0}).backward();
  // mean 3; d var / dy = 2 (y - 3) / 3
  EXPECT_TRUE(all_close(y.grad(), raw::tensor({-4.0 / 3, -2.0 / 3, 0.0, 2.0})));
}

TEST(Reduce, Logsumexp) {
  EXPECT_TRUE(check_reduction([](const Tensor& x, const Dims& d, bool k) { return logsumexp(x, d, k); }));
}

TEST(Reduce, LogsumexpAsTorchIncludingInfinitiesAndLargeValues) {
  const double inf = std::numeric_limits<double>::infinity();
  // Row 0: log(e^1 + e^2 + e^3); row 1: far beyond exp's range, shifted first; row 2: all -inf
  // gives -inf (not NaN); row 3: +inf gives +inf.
  Tensor x = raw::tensor({{1.0, 2.0, 3.0}, {1000.0, 1000.0, 999.0}, {-inf, -inf, -inf}, {0.0, inf, 1.0}}, kFloat64);
  const double r0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double r1 = 1000.0 + std::log(2.0 + std::exp(-1.0));
  EXPECT_TRUE(testing::matches_values(logsumexp(x, {1}), {r0, r1, -inf, inf}, 1e-12));
  EXPECT_EQ(logsumexp(x, {1}, true).sizes(), (Shape{4, 1}));
  EXPECT_EQ(x.logsumexp({0, 1}).sizes(), (Shape{}));
  // float32 keeps its dtype; the gradient is the softmax over the reduced dims.
  Tensor f = raw::tensor({{1.0, 2.0, 3.0}}, kFloat32);
  EXPECT_EQ(logsumexp(f, {-1}).dtype(), kFloat32);
  Tensor y = input({3, 5});
  logsumexp(y, {1}).sum().backward();
  EXPECT_TRUE(all_close(y.grad(), raw::softmax(y.detach(), 1), 1e-12, 1e-12));
}

TEST(Reduce, NormAsTorchWithZeroGradientWhereTheNormIsZero) {
  // torch.linalg.vector_norm(x, p, dim=1) and the gradient of its sum, x = [[3, -4, 0], [0, 0, 0]]:
  // the zero row's gradient is 0 for every p (PyTorch masks it), not NaN.
  const double inf = std::numeric_limits<double>::infinity();
  struct Want {
    double p;
    std::vector<double> norm, grad;
  };
  const std::vector<Want> wants = {
      {2, {5, 0}, {0.6, -0.8, 0, 0, 0, 0}},
      {1, {7, 0}, {1, -1, 0, 0, 0, 0}},
      {3, {4.497941445275415, 0}, {0.4448513517305356, -0.7908468475209521, 0, 0, 0, 0}},
      {0.5, {13.928203230275509, 0}, {2.154700538379252, -1.8660254037844386, 0, 0, 0, 0}},
      {inf, {4, 0}, {0, -1, 0, 0, 0, 0}},
      {-inf, {0, 0}, {0, 0, 0, 0, 0, 0}},
  };
  for (const Want& w : wants) {
    Tensor x = raw::tensor({{3.0, -4.0, 0.0}, {0.0, 0.0, 0.0}}, kFloat64);
    x.requires_grad_();
    Tensor n = norm(x, w.p, {1});
    EXPECT_TRUE(testing::matches_values(n, w.norm, 1e-12)) << "p " << w.p;
    n.sum().backward();
    EXPECT_TRUE(testing::matches_values(x.grad(), w.grad, 1e-12)) << "p " << w.p;
  }
  // p = 0 counts the nonzeros, with no gradient.
  Tensor x = raw::tensor({{3.0, -4.0, 0.0}, {0.0, 0.0, 0.0}}, kFloat64);
  EXPECT_TRUE(testing::matches_values(x.norm(0.0, {1}), {2, 0}));
  // All dims by default; gradchecks away from zero.
  EXPECT_NEAR(x.norm().item<double>(), 5.0, 1e-15);
  for (double p : {2.0, 1.0, 3.0, 0.5, inf}) {
    EXPECT_TRUE(check_reduction([p](const Tensor& t, const Dims& d, bool k) { return norm(t, p, d, k); })) << p;
  }
  EXPECT_TRUE(testing::throws_with([] { norm(raw::tensor({1.0, 2.0}, kInt64)); }, "expected a floating point tensor"));
  EXPECT_TRUE(testing::throws_with([&] { norm(x, -1.0); }, "p must be 0, positive, inf or -inf"));
}

// norm(x, 2, dims), read once by raw::vector_norm2, against torch.linalg.vector_norm's values and
// gradients (reduce_golden.h): rows of 13 (a tail after the 8-wide leaves), a zero row (gradient
// 0), a NaN row, an infinity (norm inf, gradient NaN there and 0 beside it), float32 squares that
// overflow and underflow (no rescaling, as torch), columns (dim 0, the in-place column sums), two
// dims, all dims, empty rows (norm 0) and a 0-d input; on `device`.
void check_norm2_goldens(Device device) {
  struct Named {
    const char* name;
    Dims dims;
    bool keepdim;
  };
  for (const Named& n : std::vector<Named>{{"norm2/rows", {1}, false},
                                           {"norm2/rows/f32", {-1}, true},
                                           {"norm2/dim0/f32", {0}, false},
                                           {"norm2/dim1/keepdim", {1}, true},
                                           {"norm2/dims02", {0, 2}, false},
                                           {"norm2/all", {}, false},
                                           {"norm2/overflow/f32", {1}, false},
                                           {"norm2/empty_rows", {1}, false},
                                           {"norm2/scalar", {}, false}}) {
    const testing::reduce_golden::Case& c = testing::reduce_golden::golden(n.name);
    Tensor x = testing::reduce_golden::golden_input(c, device);
    EXPECT_TRUE(testing::reduce_golden::matches_golden(c, x, norm(x, 2.0, n.dims, n.keepdim)));
  }
}

TEST(Reduce, Norm2MatchesTorch) { check_norm2_goldens(kCPU); }

TEST(Reduce, Norm2MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_norm2_goldens(Device::cuda(0));
}

// The gradient of a strided (permuted) input and of float32 against float64's.
TEST(Reduce, Norm2GradientOfStridedAndFloat32Inputs) {
  Tensor x = strided_input({3, 4, 5});
  norm(x, 2.0, {0, 2}).sum().backward();
  Tensor want = raw::mul(x.detach(), raw::binary(raw::BinaryOp::Div, 1.0, raw::vector_norm2(x.detach(), {0, 2}, true)));
  EXPECT_TRUE(all_close(x.grad(), want, 1e-12, 1e-12));
  Tensor f = raw::to(x.detach(), kCPU, kFloat32);
  f.requires_grad_();
  Tensor nf = norm(f, 2.0, {1});
  EXPECT_EQ(nf.dtype(), kFloat32);
  nf.sum().backward();
  Tensor x64 = x.detach();
  x64.requires_grad_();
  norm(x64, 2.0, {1}).sum().backward();
  EXPECT_TRUE(all_close(f.grad(), x64.grad(), 1e-5, 1e-6));
}

TEST(Reduce, StdAnyAllAsTorch) {
  Tensor x = raw::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 7.0}}, kFloat64);
  // torch: x.std() = 2.1602468994692865, x.std(1, unbiased=False) = [0.816496580927726, 1.247219128924647].
  EXPECT_NEAR(std(x).item<double>(), 2.1602468994692865, 1e-14);
  EXPECT_TRUE(testing::matches_values(x.std({1}, false), {0.816496580927726, 1.247219128924647}, 1e-14));
  EXPECT_TRUE(check_reduction([](const Tensor& t, const Dims& d, bool k) { return std(t, d, true, k); }));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // torch: [[0, 1], [0, 0]].any(1) = [True, False]; [[0, 1], [2, 3]].all(1) = [False, True]; NaN is nonzero.
  Tensor a = raw::tensor({{0.0, 1.0}, {0.0, 0.0}}, kInt64);
  Tensor b = raw::tensor({{0.0, 1.0}, {2.0, 3.0}}, kInt64);
  EXPECT_TRUE(testing::matches_values(any(a, {1}), {1, 0}));
  EXPECT_TRUE(testing::matches_values(all(b, {1}), {0, 1}));
  EXPECT_EQ(any(a, {1}).dtype(), kBool);
  EXPECT_EQ(all(b, {1}, true).sizes(), (Shape{2, 1}));
  EXPECT_TRUE(all(raw::tensor({nan}, kFloat64)).item<bool>());
  EXPECT_TRUE(any(raw::tensor({0.0, nan}, kFloat64)).item<bool>());
  // Empty: any is false, all is true.
  Tensor empty = raw::zeros({0}, kFloat32);
  EXPECT_FALSE(any(empty).item<bool>());
  EXPECT_TRUE(all(empty).item<bool>());
}

TEST(Reduce, SumTo) {
  EXPECT_TRUE(gradcheck([](In in) { return sum_to(in[0], {3, 1}); }, {input({2, 3, 4})}));
  EXPECT_TRUE(gradcheck([](In in) { return sum_to(in[0], {4}); }, {strided_input({3, 4})}));
}

}  // namespace
}  // namespace colony
