// Gradient checks of the broadcasting binary ops and operators (autograd/binary.cc).
#include <cmath>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using testing::values;
using In = const std::vector<Tensor>&;
using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;

// Shape pairs covering equal shapes, broadcasting either way, a 0-d operand and strided operands.
::testing::AssertionResult check_binary(const BinaryFn& f, double lo = -1.0, double hi = 1.0) {
  std::vector<std::pair<Tensor, Tensor>> cases = {
      {input({2, 3}, lo, hi, 1), input({2, 3}, lo, hi, 2)},
      {input({2, 3}, lo, hi, 1), input({3}, lo, hi, 2)},
      {input({2, 1}, lo, hi, 1), input({1, 3}, lo, hi, 2)},
      {input({}, lo, hi, 1), input({2, 3}, lo, hi, 2)},
      {strided_input({2, 3}, lo, hi, 1), strided_input({2, 3}, lo, hi, 2)},
      {input({3, 2}, lo, hi, 1).detach().transpose(0, 1).requires_grad_(), input({2, 3}, lo, hi, 2)},
  };
  for (auto& [a, b] : cases) {
    ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0], in[1]); }, {a, b});
    if (!r) return r << " (shapes " << shape_str(a.sizes()) << " and " << shape_str(b.sizes()) << ")";
  }
  // Only one operand requires grad.
  Tensor c = input({3}, lo, hi, 3).detach();
  return gradcheck([&](In in) { return f(in[0], c); }, {input({2, 3}, lo, hi, 4)});
}

::testing::AssertionResult check_scalar(const std::function<Tensor(const Tensor&)>& f, double lo = -1.0,
                                        double hi = 1.0) {
  for (Tensor x : {input({2, 3}, lo, hi), strided_input({2, 3}, lo, hi)}) {
    ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0]); }, {x});
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

TEST(Binary, Add) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return a + b; })); }
TEST(Binary, AddAlpha) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return add(a, b, 2.5); })); }
TEST(Binary, Sub) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return a - b; })); }
TEST(Binary, SubAlpha) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return sub(a, b, 0.5); })); }
TEST(Binary, Mul) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return a * b; })); }
TEST(Binary, Div) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return a / b; }, 0.5, 2.0)); }
TEST(Binary, PowTensorTensor) {
  EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return pow(a, b); }, 0.5, 2.0));
}
TEST(Binary, Maximum) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return maximum(a, b); })); }
TEST(Binary, Minimum) { EXPECT_TRUE(check_binary([](const Tensor& a, const Tensor& b) { return minimum(a, b); })); }

TEST(Binary, TensorScalar) {
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return x + 2.0; }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return x - 2.0; }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return x * 3.0; }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return x / 4.0; }));
}

TEST(Binary, ScalarTensor) {
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return 2.0 + x; }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return 2.0 - x; }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return 3.0 * x; }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return 4.0 / x; }, 0.5, 2.0));
}

TEST(Binary, PowScalarExponent) {
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return pow(x, 3.0); }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return pow(x, 0.5); }, 0.5, 2.0));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return pow(x, -1.5); }, 0.5, 2.0));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return pow(x, 0.0); }));
}

TEST(Binary, PowScalarBase) {
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return pow(2.5, x); }));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return pow(0.3, x); }));
}

TEST(Binary, PowZeroBaseHasZeroGradientForNonNegativeExponents) {
  Tensor e = tensor({0.0, 1.0, 2.0}, TensorOptions(kFloat64).requires_grad(true));
  pow(0.0, e).sum().backward();
  EXPECT_TRUE(all_close(e.grad(), raw::zeros({3}, kFloat64)));
  Tensor x = tensor({0.0, 2.0}, TensorOptions(kFloat64).requires_grad(true));
  Tensor ex = tensor({2.0, 3.0}, TensorOptions(kFloat64).requires_grad(true));
  pow(x, ex).sum().backward();
  std::vector<double> ge = values(ex.grad());
  EXPECT_EQ(ge[0], 0.0);                           // 0^e is flat in e
  EXPECT_NEAR(ge[1], 8.0 * std::log(2.0), 1e-12);  // x^e ln x
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({0.0, 12.0}, kFloat64)));
}

TEST(Binary, MaximumSplitsTiesInHalf) {
  Tensor a = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  Tensor b = tensor({1.0, 5.0, 0.0}, TensorOptions().requires_grad(true));
  maximum(a, b).sum().backward();
  EXPECT_TRUE(all_close(a.grad(), raw::tensor({0.5, 0.0, 1.0})));
  EXPECT_TRUE(all_close(b.grad(), raw::tensor({0.5, 1.0, 0.0})));
  Tensor c = tensor({1.0, 2.0}, TensorOptions().requires_grad(true));
  Tensor d = tensor({1.0, 0.0}, TensorOptions().requires_grad(true));
  minimum(c, d).sum().backward();
  EXPECT_TRUE(all_close(c.grad(), raw::tensor({0.5, 0.0})));
  EXPECT_TRUE(all_close(d.grad(), raw::tensor({0.5, 1.0})));
}

TEST(Binary, Where) {
  Tensor cond = raw::tensor({1.0, 0.0, 1.0}) > 0.5;
  EXPECT_EQ(cond.dtype(), kBool);
  EXPECT_TRUE(check_binary([&](const Tensor& a, const Tensor& b) { return where(cond, a, b); }));
  EXPECT_TRUE(check_scalar([&](const Tensor& x) { return where(cond, x, 2.0); }));
  EXPECT_TRUE(check_scalar([&](const Tensor& x) { return where(cond, -1.0, x); }));
  Tensor a = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  where(cond, a, 0.0).sum().backward();
  EXPECT_TRUE(all_close(a.grad(), raw::tensor({1.0, 0.0, 1.0})));
}

// torch.where(cond, tensor, number) promotes as torch.result_type does with a Scalar:
// where([T, F, T], [1, 2, 3], 2.5) is [1.0, 2.5, 3.0] (float32), not the number cast to int64.
TEST(Binary, WhereWithANumberPromotesAsTorch) {
  Tensor cond = raw::tensor({1, 0, 1}, kBool);
  Tensor i = raw::tensor({1, 2, 3}, kInt64);
  Tensor r = where(cond, i, 2.5);
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(values(r), (std::vector<double>{1, 2.5, 3}));
  Tensor l = where(cond, 2.5, i);
  EXPECT_EQ(l.dtype(), kFloat32);
  EXPECT_EQ(values(l), (std::vector<double>{2.5, 2, 2.5}));
  EXPECT_EQ(where(cond, i, 2.0).dtype(), kInt64);                       // a whole number keeps int64
  EXPECT_EQ(where(cond, raw::tensor({1, 2, 3}, kInt32), 7.0).dtype(), kInt32);
  EXPECT_EQ(where(cond, cond, 1.0).dtype(), kInt64);                    // torch: bool with an int is int64
  EXPECT_EQ(values(where(cond, cond, 0.5)), (std::vector<double>{1, 0.5, 1}));
  EXPECT_EQ(where(cond, raw::ones({3}, kFloat64), 2.5).dtype(), kFloat64);
  EXPECT_EQ(where(cond, raw::ones({3}, kBFloat16), 2.5).dtype(), kBFloat16);  // a float tensor keeps its dtype
}

TEST(Binary, MixedDtypeGradientsKeepEachOperandsDtype) {
  Tensor a = tensor({1.0, 2.0}, TensorOptions(kFloat32).requires_grad(true));
  Tensor b = tensor({3.0, 4.0}, TensorOptions(kFloat64).requires_grad(true));
  Tensor y = a * b;
  EXPECT_EQ(y.dtype(), kFloat64);
  y.sum().backward();
  EXPECT_EQ(a.grad().dtype(), kFloat32);
  EXPECT_EQ(b.grad().dtype(), kFloat64);
  EXPECT_TRUE(all_close(a.grad(), raw::tensor({3.0, 4.0})));
  EXPECT_TRUE(all_close(b.grad(), raw::tensor({1.0, 2.0})));
}

TEST(Binary, BroadcastGradientByHand) {
  Tensor a = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, TensorOptions().requires_grad(true));
  Tensor bias = tensor({10.0, 20.0, 30.0}, TensorOptions().requires_grad(true));
  (a * bias).sum().backward();
  EXPECT_TRUE(all_close(bias.grad(), raw::tensor({5.0, 7.0, 9.0})));
  EXPECT_EQ(bias.grad().sizes(), (Shape{3}));
}

TEST(MaskedFill, NoGradientWhereFilled) {
  Tensor mask = raw::tensor({1, 0, 0, 1}, kBool);
  for (Tensor x : {input({3, 4}), strided_input({3, 4})}) {
    EXPECT_TRUE(gradcheck([&](In in) { return masked_fill(in[0], mask, -5.0); }, {x}));
    EXPECT_TRUE(gradcheck([&](In in) { return in[0].masked_fill(mask, 2.0); }, {x}));
  }
  // A mask larger than t broadcasts t; its gradient sums back.
  Tensor big = raw::reshape(raw::tensor({1, 0, 0, 0, 1, 0}, kBool), {2, 3});
  EXPECT_TRUE(gradcheck([&](In in) { return masked_fill(in[0], big, 0.0); }, {input({3})}));
  Tensor x = tensor({1.0, 2.0}, TensorOptions().requires_grad(true));
  masked_fill(x, raw::tensor({0, 1}, kBool), 5.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0, 0.0})));
}

}  // namespace
}  // namespace colony
