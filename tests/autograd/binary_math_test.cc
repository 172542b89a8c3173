// Gradients of atan2, fmod, remainder, hypot, copysign, xlogy and logaddexp(2) (autograd/binary_math.cc):
// finite-difference checks in float64 with broadcasting, strides and the scalar forms, PyTorch's
// gradients at the corner points (elementwise_math_golden.h), floor_divide's refused backward, the
// operator % and the Tensor members.
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
using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;
namespace golden = testing::elementwise_math_golden;

struct Range {
  double lo, hi;
};

// Equal shapes, broadcasting either way, a 0-d operand, strided operands, one operand constant.
::testing::AssertionResult check_binary(const BinaryFn& f, Range ra, Range rb) {
  std::vector<std::pair<Tensor, Tensor>> cases = {
      {input({2, 3}, ra.lo, ra.hi, 1), input({2, 3}, rb.lo, rb.hi, 2)},
      {input({2, 3}, ra.lo, ra.hi, 1), input({3}, rb.lo, rb.hi, 2)},
      {input({2, 1}, ra.lo, ra.hi, 1), input({1, 3}, rb.lo, rb.hi, 2)},
      {input({}, ra.lo, ra.hi, 1), input({2, 3}, rb.lo, rb.hi, 2)},
      {strided_input({2, 3}, ra.lo, ra.hi, 1), strided_input({2, 3}, rb.lo, rb.hi, 2)},
  };
  for (auto& [a, b] : cases) {
    ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0], in[1]); }, {a, b});
    if (!r) return r << " (shapes " << shape_str(a.sizes()) << " and " << shape_str(b.sizes()) << ")";
  }
  Tensor c = input({3}, rb.lo, rb.hi, 3).detach();
  return gradcheck([&](In in) { return f(in[0], c); }, {input({2, 3}, ra.lo, ra.hi, 4)});
}

::testing::AssertionResult check_scalar(const std::function<Tensor(const Tensor&)>& f, Range r) {
  for (Tensor x : {input({2, 3}, r.lo, r.hi), strided_input({2, 3}, r.lo, r.hi)}) {
    ::testing::AssertionResult res = gradcheck([&](In in) { return f(in[0]); }, {x});
    if (!res) return res;
  }
  return ::testing::AssertionSuccess();
}

BinaryFn binary_fn(const std::string& name) {
  if (name == "atan2") return [](const Tensor& a, const Tensor& b) { return atan2(a, b); };
  if (name == "fmod") return [](const Tensor& a, const Tensor& b) { return fmod(a, b); };
  if (name == "remainder") return [](const Tensor& a, const Tensor& b) { return remainder(a, b); };
  if (name == "hypot") return [](const Tensor& a, const Tensor& b) { return hypot(a, b); };
  if (name == "copysign") return [](const Tensor& a, const Tensor& b) { return copysign(a, b); };
  if (name == "xlogy") return [](const Tensor& a, const Tensor& b) { return xlogy(a, b); };
  if (name == "logaddexp") return [](const Tensor& a, const Tensor& b) { return logaddexp(a, b); };
  if (name == "logaddexp2") return [](const Tensor& a, const Tensor& b) { return logaddexp2(a, b); };
  ADD_FAILURE() << "no function " << name;
  return [](const Tensor& a, const Tensor&) { return a; };
}

TEST(BinaryMath, Gradcheck) {
  // fmod's and remainder's gradients for b step where a / b crosses an integer: a / b in (1.5, 2.8)
  // here, with the jumps at 2 far from the sampled points (random, seeded).
  struct Case {
    const char* name;
    Range a, b;
  };
  for (const Case& c : std::vector<Case>{{"atan2", {-1, 1}, {-1, 1}},
                                         {"fmod", {2.1, 2.9}, {1.05, 1.4}},
                                         {"fmod", {-2.9, -2.1}, {1.05, 1.4}},
                                         {"remainder", {2.1, 2.9}, {1.05, 1.4}},
                                         {"remainder", {-2.9, -2.1}, {1.05, 1.4}},
                                         {"hypot", {-1, 1}, {-1, 1}},
                                         {"copysign", {-1, 1}, {-1, 1}},
                                         {"xlogy", {-1, 1}, {0.3, 2}},
                                         {"logaddexp", {-2, 2}, {-2, 2}},
                                         {"logaddexp2", {-2, 2}, {-2, 2}}}) {
    EXPECT_TRUE(check_binary(binary_fn(c.name), c.a, c.b)) << c.name;
  }
}

TEST(BinaryMath, ScalarFormsGradcheck) {
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return fmod(x, 1.3); }, {-2.5, 2.5}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return remainder(x, -1.3); }, {-2.5, 2.5}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return remainder(2.5, x); }, {1.05, 1.2}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return copysign(x, -1.0); }, {-1, 1}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return xlogy(x, 2.0); }, {-1, 1}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return xlogy(x, 0.5); }, {-1, 1}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return xlogy(1.5, x); }, {0.3, 2}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return x % 0.7; }, {-2.5, 2.5}));
  EXPECT_TRUE(check_scalar([](const Tensor& x) { return 2.5 % x; }, {1.05, 1.2}));
}

// PyTorch's gradients, corner points included: xlogy's a == 0 (0 where b <= 0), copysign at a == 0,
// atan2 at the origin, fmod's trunc and remainder's floor for negative quotients, hypot at (0, 0).
TEST(BinaryMath, GradientsMatchPyTorch) {
  for (const golden::BinaryGradCase& c : golden::kBinaryGradCases) {
    SCOPED_TRACE(c.op);
    Tensor a = testing::golden_tensor(c.a, kFloat64), b = testing::golden_tensor(c.b, kFloat64);
    a.requires_grad_(true);
    b.requires_grad_(true);
    sum(binary_fn(c.op)(a, b)).backward();
    ASSERT_TRUE(a.grad().defined());
    ASSERT_TRUE(b.grad().defined());
    EXPECT_TRUE(testing::matches_golden(a.grad(), kFloat64, c.grad_a, 1e-12)) << "grad of a";
    EXPECT_TRUE(testing::matches_golden(b.grad(), kFloat64, c.grad_b, 1e-12)) << "grad of b";
  }
}

// As PyTorch: the result records a node, and a backward through it throws.
TEST(BinaryMath, FloorDivideHasNoDerivative) {
  Tensor a = input({3}, 1, 5), b = input({3}, 1, 2, 9);
  for (Tensor y : {floor_divide(a, b), floor_divide(a, 2.0), floor_divide(7.0, b), a.floor_divide(b)}) {
    EXPECT_TRUE(y.requires_grad());
    EXPECT_TRUE(testing::throws_with<std::runtime_error>([&] { sum(y).backward(); },
                                                         "floor_divide: the derivative is not implemented"));
  }
  NoGradGuard no_grad;
  EXPECT_FALSE(floor_divide(a, b).requires_grad());
}

TEST(BinaryMath, RemainderOperator) {
  Tensor a = raw::tensor({7.0, -7.0, 7.5}, kFloat64), b = raw::tensor({3.0, 3.0, -2.0}, kFloat64);
  EXPECT_TRUE(testing::matches_values(a % b, {1, 2, -0.5}, 0));
  EXPECT_TRUE(testing::matches_values(a % 3.0, {1, 2, 1.5}, 0));
  EXPECT_TRUE(testing::matches_values(10.0 % b, {1, 1, -0.0}, 0));
  Tensor i = raw::tensor({-7, 7}, kInt64);
  Tensor r = i % raw::tensor({3, -3}, kInt64);
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_TRUE(testing::matches_values(r, {2, -2}, 0));
}

TEST(BinaryMath, MembersAreTheFreeFunctions) {
  Tensor a = raw::tensor({0.7, -2.5, 3.0}, kFloat64), b = raw::tensor({2.0, 0.6, -1.5}, kFloat64);
  // Equal values, NaN where the other has NaN (xlogy(b, b) of a negative b).
  auto same = [](const Tensor& x, const Tensor& y) { return testing::matches_golden(x, y.dtype(), testing::values(y), 0); };
  EXPECT_TRUE(same(a.atan2(b), atan2(a, b)));
  EXPECT_TRUE(same(a.fmod(b), fmod(a, b)));
  EXPECT_TRUE(same(a.fmod(0.4), fmod(a, 0.4)));
  EXPECT_TRUE(same(a.remainder(b), remainder(a, b)));
  EXPECT_TRUE(same(a.remainder(0.4), remainder(a, 0.4)));
  EXPECT_TRUE(same(a.floor_divide(b), floor_divide(a, b)));
  EXPECT_TRUE(same(a.floor_divide(0.4), floor_divide(a, 0.4)));
  EXPECT_TRUE(same(a.hypot(b), hypot(a, b)));
  EXPECT_TRUE(same(a.copysign(b), copysign(a, b)));
  EXPECT_TRUE(same(a.copysign(-1.0), copysign(a, -1.0)));
  EXPECT_TRUE(same(b.xlogy(b), xlogy(b, b)));
  EXPECT_TRUE(same(a.xlogy(2.0), xlogy(a, 2.0)));
  EXPECT_TRUE(same(a.logaddexp(b), logaddexp(a, b)));
  EXPECT_TRUE(same(a.logaddexp2(b), logaddexp2(a, b)));
  EXPECT_FALSE(same(a.fmod(b), a.remainder(b)));  // they differ on these signs
}

}  // namespace
}  // namespace colony
