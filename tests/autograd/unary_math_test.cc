// Gradients of the trigonometric, hyperbolic, logarithmic and special functions and of trunc/frac
// (autograd/unary_math.cc): finite-difference checks in float64, PyTorch's gradients at the corner
// points (elementwise_math_golden.h: domain edges, poles, logit's clamp), and the Tensor members.
#include <functional>
#include <string>

#include "tests/autograd/gradcheck.h"
#include "tests/ops/elementwise_math_testing.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;
using UnaryFn = std::function<Tensor(const Tensor&)>;
namespace golden = testing::elementwise_math_golden;

// Checks `f` on [2, 3] inputs with values in [lo, hi), dense and strided, and on a 0-d one.
::testing::AssertionResult check_unary(const UnaryFn& f, double lo, double hi) {
  for (Tensor x : {input({2, 3}, lo, hi), strided_input({2, 3}, lo, hi), input({}, lo, hi)}) {
    ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0]); }, {x});
    if (!r) return r << " (input " << shape_str(x.sizes()) << (x.is_contiguous() ? "" : ", strided") << ")";
  }
  return ::testing::AssertionSuccess();
}

// The differentiable function a golden case names.
UnaryFn unary_fn(const std::string& name) {
  if (name == "tan") return [](const Tensor& x) { return tan(x); };
  if (name == "asin") return [](const Tensor& x) { return asin(x); };
  if (name == "acos") return [](const Tensor& x) { return acos(x); };
  if (name == "atan") return [](const Tensor& x) { return atan(x); };
  if (name == "sinh") return [](const Tensor& x) { return sinh(x); };
  if (name == "cosh") return [](const Tensor& x) { return cosh(x); };
  if (name == "asinh") return [](const Tensor& x) { return asinh(x); };
  if (name == "acosh") return [](const Tensor& x) { return acosh(x); };
  if (name == "atanh") return [](const Tensor& x) { return atanh(x); };
  if (name == "trunc") return [](const Tensor& x) { return trunc(x); };
  if (name == "frac") return [](const Tensor& x) { return frac(x); };
  if (name == "log2") return [](const Tensor& x) { return log2(x); };
  if (name == "log10") return [](const Tensor& x) { return log10(x); };
  if (name == "exp2") return [](const Tensor& x) { return exp2(x); };
  if (name == "erfc") return [](const Tensor& x) { return erfc(x); };
  if (name == "erfinv") return [](const Tensor& x) { return erfinv(x); };
  if (name == "lgamma") return [](const Tensor& x) { return lgamma(x); };
  if (name == "digamma") return [](const Tensor& x) { return digamma(x); };
  if (name == "logit") return [](const Tensor& x) { return logit(x); };
  if (name == "logit_eps") return [](const Tensor& x) { return logit(x, golden::kLogitEps); };
  if (name == "sinc") return [](const Tensor& x) { return sinc(x); };
  ADD_FAILURE() << "no function " << name;
  return [](const Tensor& x) { return x; };
}

TEST(UnaryMath, Gradcheck) {
  struct Case {
    const char* name;
    double lo, hi;
  };
  for (const Case& c : std::vector<Case>{{"tan", -1.2, 1.2},      {"asin", -0.9, 0.9},   {"acos", -0.9, 0.9},
                                         {"atan", -3.0, 3.0},      {"sinh", -2.0, 2.0},   {"cosh", -2.0, 2.0},
                                         {"asinh", -3.0, 3.0},     {"acosh", 1.1, 3.0},   {"atanh", -0.9, 0.9},
                                         {"trunc", -2.9, 2.9},     {"frac", -2.9, 2.9},   {"log2", 0.3, 3.0},
                                         {"log10", 0.3, 3.0},      {"exp2", -2.0, 2.0},   {"erfc", -2.0, 2.0},
                                         {"erfinv", -0.9, 0.9},    {"lgamma", 0.2, 4.0},  {"lgamma", -0.9, -0.1},
                                         {"digamma", 0.2, 4.0},    {"digamma", -1.9, -1.1}, {"logit", 0.05, 0.95},
                                         {"logit_eps", 0.15, 0.85}, {"sinc", -2.0, 2.0}}) {
    EXPECT_TRUE(check_unary(unary_fn(c.name), c.lo, c.hi)) << c.name << " on [" << c.lo << ", " << c.hi << ")";
  }
}

// PyTorch's gradients at the corner points: acosh'(1) = inf, atanh'(1) = inf, logit's 0 outside the
// clamp and NaN outside [0, 1], sinc'(0) = 0, digamma's trigamma, trunc's zeros.
TEST(UnaryMath, GradientsMatchPyTorch) {
  for (const golden::UnaryGradCase& c : golden::kUnaryGradCases) {
    SCOPED_TRACE(c.op);
    Tensor x = testing::golden_tensor(c.x, kFloat64);
    x.requires_grad_(true);
    sum(unary_fn(c.op)(x)).backward();
    ASSERT_TRUE(x.grad().defined());
    EXPECT_TRUE(testing::matches_golden(x.grad(), kFloat64, c.grad, 1e-12));
  }
}

TEST(UnaryMath, MembersAreTheFreeFunctions) {
  Tensor x = raw::tensor({0.2, -0.4, 0.6}, kFloat64);
  Tensor p = raw::tensor({1.2, 2.4, 3.6}, kFloat64);
  // Equal values, NaN where the other has NaN (logit(-0.4)).
  auto same = [](const Tensor& a, const Tensor& b) { return testing::matches_golden(a, b.dtype(), testing::values(b), 0); };
  EXPECT_TRUE(same(x.tan(), tan(x)));
  EXPECT_TRUE(same(x.asin(), asin(x)));
  EXPECT_TRUE(same(x.acos(), acos(x)));
  EXPECT_TRUE(same(x.atan(), atan(x)));
  EXPECT_TRUE(same(x.sinh(), sinh(x)));
  EXPECT_TRUE(same(x.cosh(), cosh(x)));
  EXPECT_TRUE(same(x.asinh(), asinh(x)));
  EXPECT_TRUE(same(p.acosh(), acosh(p)));
  EXPECT_TRUE(same(x.atanh(), atanh(x)));
  EXPECT_TRUE(same(p.trunc(), trunc(p)));
  EXPECT_TRUE(same(p.fix(), trunc(p)));
  EXPECT_TRUE(same(fix(p), trunc(p)));
  EXPECT_TRUE(same(p.frac(), frac(p)));
  EXPECT_TRUE(same(p.log2(), log2(p)));
  EXPECT_TRUE(same(p.log10(), log10(p)));
  EXPECT_TRUE(same(x.exp2(), exp2(x)));
  EXPECT_TRUE(same(x.erfc(), erfc(x)));
  EXPECT_TRUE(same(x.erfinv(), erfinv(x)));
  EXPECT_TRUE(same(p.lgamma(), lgamma(p)));
  EXPECT_TRUE(same(p.digamma(), digamma(p)));
  EXPECT_TRUE(same(x.logit(), logit(x)));
  EXPECT_TRUE(same(x.logit(0.3), logit(x, 0.3)));
  EXPECT_TRUE(same(x.sinc(), sinc(x)));
  // Not the identity, so the comparisons above compare something.
  EXPECT_FALSE(same(x.logit(0.3), x.logit()));  // and NaN does not match a number
  EXPECT_TRUE(testing::matches_values(p.frac(), {0.2, 0.4, 0.6}, 1e-15));
}

// Integer inputs compute in float32, as torch.tan(int_tensor); trunc copies them; frac refuses them.
TEST(UnaryMath, IntegerInputs) {
  Tensor i = raw::tensor({1, 4, 100}, kInt64);
  EXPECT_EQ(log10(i).dtype(), kFloat32);
  EXPECT_TRUE(testing::matches_values(log10(i), {0, std::log10(4.0f), 2}, 1e-7));
  EXPECT_EQ(i.trunc().dtype(), kInt64);
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { i.frac(); }, "frac: expected a floating-point tensor"));
}

}  // namespace
}  // namespace colony
