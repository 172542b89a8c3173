// The in-place elementwise members of tensor/tensor.h's tables (sin_, atan2_, eq_, ...) and the
// other in-place members beside them, row by row: self.op_() equals op(self) bit for bit (float32,
// and int64 where torch allows it, else torch's casting refusal), the gradient through a tensor
// inside the graph and through a view of one equals the out-of-place op's (float64), the version
// counter moves so that a tensor saved before the write refuses its backward, and a leaf that
// requires grad refuses the write. The random fills: moments of a seeded large sample, support,
// refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

// What the write does to the gradient of self's old value, as torch's derivatives say.
enum class Grad {
  Same,       // the out-of-place op's gradient
  Zero,       // a zero gradient (torch's EqBackward: the comparisons)
  Throws,     // a backward through the write throws (heaviside_)
  Unchanged,  // the old history is kept, as torch keeps it for the logical ops (bool results)
};

struct Row {
  std::string name;
  std::function<void(Tensor&, const Tensor&)> member;             // self.op_(other)
  std::function<Tensor(const Tensor&, const Tensor&)> outplace;   // op(self, other)
  double lo = 0.1, hi = 0.9;                                       // self's values
  Grad grad = Grad::Same;
  bool has_other = false;
};

#define UNARY(m, f) \
  Row { #m, [](Tensor& s, const Tensor&) { s.m(); }, [](const Tensor& s, const Tensor&) { return f(s); } }
#define BINARY(m, f)                                                                             \
  Row {                                                                                          \
    #m, [](Tensor& s, const Tensor& o) { s.m(o); }, [](const Tensor& s, const Tensor& o) { return f(s, o); }, \
        0.1, 0.9, Grad::Same, true                                                               \
  }
#define SCALAR(m, f, v) \
  Row { #m "(" #v ")", [](Tensor& s, const Tensor&) { s.m(v); }, [](const Tensor& s, const Tensor&) { return f(s, v); } }

Row with(Row r, double lo, double hi) { r.lo = lo; r.hi = hi; return r; }
Row with(Row r, Grad g) { r.grad = g; return r; }

std::vector<Row> rows() {
  return {
      UNARY(abs_, abs), UNARY(absolute_, abs), UNARY(negative_, neg), UNARY(neg_, neg), UNARY(exp_, exp),
      UNARY(exp2_, exp2), UNARY(expm1_, expm1), UNARY(log_, log), UNARY(log2_, log2), UNARY(log10_, log10),
      UNARY(log1p_, log1p), UNARY(sqrt_, sqrt), UNARY(rsqrt_, rsqrt), UNARY(square_, square),
      UNARY(reciprocal_, reciprocal), UNARY(relu_, relu), UNARY(sigmoid_, sigmoid), UNARY(tanh_, tanh),
      UNARY(sin_, sin), UNARY(cos_, cos), UNARY(tan_, tan), UNARY(asin_, asin), UNARY(arcsin_, asin),
      UNARY(acos_, acos), UNARY(arccos_, acos), UNARY(atan_, atan), UNARY(arctan_, atan), UNARY(sinh_, sinh),
      UNARY(cosh_, cosh), UNARY(asinh_, asinh), UNARY(arcsinh_, asinh), with(UNARY(acosh_, acosh), 1.2, 2.0),
      with(UNARY(arccosh_, acosh), 1.2, 2.0), UNARY(atanh_, atanh), UNARY(arctanh_, atanh),
      with(UNARY(floor_, floor), -2.0, 2.0), with(UNARY(ceil_, ceil), -2.0, 2.0),
      with(UNARY(round_, round), -2.0, 2.0), with(UNARY(trunc_, trunc), -2.0, 2.0),
      with(UNARY(fix_, fix), -2.0, 2.0), with(UNARY(frac_, frac), -2.0, 2.0), with(UNARY(sign_, sign), -1.0, 1.0),
      with(UNARY(sgn_, sgn), -1.0, 1.0), UNARY(erf_, erf), UNARY(erfc_, erfc), UNARY(erfinv_, erfinv),
      UNARY(lgamma_, lgamma), UNARY(digamma_, digamma), UNARY(i0_, i0), UNARY(sinc_, sinc),
      UNARY(deg2rad_, deg2rad), UNARY(rad2deg_, rad2deg), with(UNARY(logical_not_, logical_not), Grad::Unchanged),
      UNARY(bitwise_not_, bitwise_not), UNARY(logit_, logit),
      Row{"logit_(0.2)", [](Tensor& s, const Tensor&) { s.logit_(0.2); },
          [](const Tensor& s, const Tensor&) { return logit(s, 0.2); }},
      UNARY(nan_to_num_, nan_to_num),
      Row{"clamp_(0.3, 0.6)", [](Tensor& s, const Tensor&) { s.clamp_(0.3, 0.6); },
          [](const Tensor& s, const Tensor&) { return clamp(s, 0.3, 0.6); }},
      Row{"clip_(0.3, 0.6)", [](Tensor& s, const Tensor&) { s.clip_(0.3, 0.6); },
          [](const Tensor& s, const Tensor&) { return clamp(s, 0.3, 0.6); }},
      BINARY(atan2_, atan2), BINARY(arctan2_, atan2), BINARY(fmod_, fmod), BINARY(remainder_, remainder),
      with(BINARY(floor_divide_, floor_divide), Grad::Throws), BINARY(hypot_, hypot), BINARY(copysign_, copysign),
      BINARY(xlogy_, xlogy), BINARY(ldexp_, ldexp), BINARY(gcd_, gcd), BINARY(lcm_, lcm),
      with(BINARY(heaviside_, heaviside), Grad::Throws), with(BINARY(logical_and_, logical_and), Grad::Unchanged),
      with(BINARY(logical_or_, logical_or), Grad::Unchanged), with(BINARY(logical_xor_, logical_xor), Grad::Unchanged),
      BINARY(bitwise_left_shift_, bitwise_left_shift), BINARY(bitwise_right_shift_, bitwise_right_shift),
      SCALAR(bitwise_left_shift_, bitwise_left_shift, 2.0), SCALAR(bitwise_right_shift_, bitwise_right_shift, 1.0),
      BINARY(nextafter_, nextafter), BINARY(bitwise_and_, bitwise_and), BINARY(bitwise_or_, bitwise_or), BINARY(bitwise_xor_, bitwise_xor),
      with(BINARY(eq_, eq), Grad::Zero), with(BINARY(ne_, ne), Grad::Zero), with(BINARY(lt_, lt), Grad::Zero),
      with(BINARY(le_, le), Grad::Zero), with(BINARY(gt_, gt), Grad::Zero), with(BINARY(ge_, ge), Grad::Zero),
      with(BINARY(greater_, gt), Grad::Zero), with(BINARY(greater_equal_, ge), Grad::Zero),
      with(BINARY(less_, lt), Grad::Zero), with(BINARY(less_equal_, le), Grad::Zero),
      with(BINARY(not_equal_, ne), Grad::Zero), BINARY(pow_, pow), BINARY(multiply_, mul), BINARY(mul_, mul),
      BINARY(divide_, div), BINARY(true_divide_, div), BINARY(div_, div), BINARY(subtract_, sub),
      BINARY(float_power_, float_power),
      Row{"lerp_(end, 0.3)", [](Tensor& s, const Tensor& o) { s.lerp_(o, 0.3); },
          [](const Tensor& s, const Tensor& o) { return lerp(s, o, 0.3); }, 0.1, 0.9, Grad::Same, true},
      Row{"lerp_(end, weight)", [](Tensor& s, const Tensor& o) { s.lerp_(o, mul(o, 0.5)); },
          [](const Tensor& s, const Tensor& o) { return lerp(s, o, mul(o, 0.5)); }, 0.1, 0.9, Grad::Same, true},
      Row{"addcmul_", [](Tensor& s, const Tensor& o) { s.addcmul_(o, add(o, 1.0), 0.5); },
          [](const Tensor& s, const Tensor& o) { return addcmul(s, o, add(o, 1.0), 0.5); }, 0.1, 0.9, Grad::Same, true},
      Row{"addcdiv_", [](Tensor& s, const Tensor& o) { s.addcdiv_(o, add(o, 1.0), 0.5); },
          [](const Tensor& s, const Tensor& o) { return addcdiv(s, o, add(o, 1.0), 0.5); }, 0.1, 0.9, Grad::Same, true},
      SCALAR(fmod_, fmod, 0.3), SCALAR(remainder_, remainder, 0.3), with(SCALAR(floor_divide_, floor_divide, 0.3), Grad::Throws),
      SCALAR(copysign_, copysign, -1.0), SCALAR(xlogy_, xlogy, 2.0), with(SCALAR(eq_, eq, 0.5), Grad::Zero),
      with(SCALAR(ne_, ne, 0.5), Grad::Zero), with(SCALAR(lt_, lt, 0.5), Grad::Zero),
      with(SCALAR(le_, le, 0.5), Grad::Zero), with(SCALAR(gt_, gt, 0.5), Grad::Zero),
      with(SCALAR(ge_, ge, 0.5), Grad::Zero), SCALAR(float_power_, float_power, 2.5), SCALAR(pow_, pow, 2.5),
      with(Row{"round_(1)", [](Tensor& s, const Tensor&) { s.round_(1); },
               [](const Tensor& s, const Tensor&) { return round(s, 1); }}, -20.0, 20.0),
      with(Row{"round_(-1)", [](Tensor& s, const Tensor&) { s.round_(-1); },
               [](const Tensor& s, const Tensor&) { return round(s, -1); }}, -20.0, 20.0),
      Row{"div_(other, trunc)", [](Tensor& s, const Tensor& o) { s.div_(neg(o), "trunc"); },
          [](const Tensor& s, const Tensor& o) { return div(s, neg(o), "trunc"); }, 1.0, 9.0, Grad::Same, true},
      Row{"divide_(other, floor)", [](Tensor& s, const Tensor& o) { s.divide_(neg(o), "floor"); },
          [](const Tensor& s, const Tensor& o) { return div(s, neg(o), "floor"); }, 1.0, 9.0, Grad::Same, true},
      Row{"div_(0.3, floor)", [](Tensor& s, const Tensor&) { s.div_(0.3, "floor"); },
          [](const Tensor& s, const Tensor&) { return div(s, 0.3, "floor"); }, 1.0, 9.0},
      Row{"div_(2, trunc)", [](Tensor& s, const Tensor&) { s.div_(-2.0, "trunc"); },
          [](const Tensor& s, const Tensor&) { return div(s, -2.0, "trunc"); }, 1.0, 9.0},
      Row{"cumsum_(1)", [](Tensor& s, const Tensor&) { s.cumsum_(1); },
          [](const Tensor& s, const Tensor&) { return cumsum(s, 1); }},
      Row{"cumprod_(1)", [](Tensor& s, const Tensor&) { s.cumprod_(1); },
          [](const Tensor& s, const Tensor&) { return cumprod(s, 1); }},
      Row{"tril_(0)", [](Tensor& s, const Tensor&) { s.tril_(); },
          [](const Tensor& s, const Tensor&) { return tril(s); }},
      Row{"triu_(1)", [](Tensor& s, const Tensor&) { s.triu_(1); },
          [](const Tensor& s, const Tensor&) { return triu(s, 1); }},
  };
}

// Self's values: [3, 4] in [lo, hi], a few exactly equal to other's (ties for the comparisons).
Tensor self_values(const Row& r, DType dtype) {
  std::vector<double> v = testing::random_values(12, 7, r.lo, r.hi);
  return from_vector(v, {3, 4}, TensorOptions(dtype));
}
Tensor other_values(DType dtype) {
  std::vector<double> v = testing::random_values(12, 11, 0.2, 0.9);
  return from_vector(v, {3, 4}, TensorOptions(dtype));
}
// Small integers for the int64 case: self in [1, 6], other in [1, 4] (no zero divisor).
Tensor int_values(int64_t lo, int64_t hi, uint32_t seed) {
  std::vector<double> v = testing::random_values(12, seed, static_cast<double>(lo), static_cast<double>(hi) + 0.99);
  for (double& x : v) x = std::floor(x);
  return from_vector(v, {3, 4}, TensorOptions(kInt64));
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr_raw(), cb.data_ptr_raw(), static_cast<size_t>(ca.nbytes())) == 0;
}

// The value check in one dtype: self.op_(other) is op(self, other) cast to self's dtype, or, where
// that result cannot be cast, torch's refusal; where op refuses the dtype, the member refuses it too.
void check_values(const Row& r, const Tensor& self, const Tensor& other) {
  SCOPED_TRACE(r.name + " " + dtype_name(self.dtype()));
  Tensor expected;
  try {
    expected = r.outplace(self, other);
  } catch (const std::exception&) {
    Tensor s = self.clone();
    EXPECT_ANY_THROW(r.member(s, other));
    return;
  }
  Tensor s = self.clone();
  const uint32_t version = s.version();
  if (r.name.rfind("float_power_", 0) == 0 && self.dtype() != kFloat64) {
    EXPECT_TRUE(throws_with([&] { r.member(s, other); }, "the operation's result requires dtype Double"));
    return;
  }
  if (is_floating(expected.dtype()) && !is_floating(self.dtype())) {
    EXPECT_TRUE(throws_with([&] { r.member(s, other); }, "can't be cast to the desired output type Long"));
    return;
  }
  r.member(s, other);
  EXPECT_GT(s.version(), version) << "the write must bump the version counter";
  EXPECT_TRUE(bitwise_equal(s, expected.to(self.dtype()))) << s << "\nvs\n" << expected;
}

TEST(InplaceMembers, Float32EqualsTheOutOfPlaceOpBitForBit) {
  for (const Row& r : rows()) check_values(r, self_values(r, kFloat32), other_values(kFloat32));
}

TEST(InplaceMembers, Int64EqualsTheOutOfPlaceOpOrRefusesAsTorch) {
  for (const Row& r : rows()) check_values(r, int_values(1, 6, 7), int_values(1, 4, 11));
}

TEST(InplaceMembers, IntegerSelfRefusesAFloatingResult) {
  Tensor i = raw::arange(3.0);  // int64
  EXPECT_TRUE(throws_with([&] { i.sin_(); }, "sin_: result type Float can't be cast to the desired output type Long"));
  EXPECT_TRUE(throws_with([&] { i.exp_(); }, "result type Float can't be cast to the desired output type Long"));
  Tensor b = raw::ones({3}, kBool);
  EXPECT_TRUE(throws_with([&] { b.square_(); }, "result type Long can't be cast to the desired output type Bool"));
  Tensor f = raw::ones({3}, kFloat32);
  EXPECT_TRUE(throws_with([&] { f.float_power_(2.0); },
                          "the base given to float_power_ has dtype Float but the operation's result requires dtype Double"));
  // A broadcast larger than self is refused too.
  EXPECT_TRUE(throws_with([&] { f.atan2_(raw::ones({2, 3})); }, "doesn't match the broadcast shape"));
  // Allowed where torch allows: int64 comparisons, floor, sign.
  Tensor j = raw::arange(3.0);
  j.eq_(1.0);
  EXPECT_EQ(values(j), (std::vector<double>{0, 1, 0}));
}

// Gradients (float64): loss = sum(w * y) after y = x * 1 (inside the graph) is written in place,
// against the same with the out-of-place op; `view` writes through rows 1..2 of y instead.
struct Grads {
  Tensor x, other;
  bool threw = false;
};

Grads run_grad(const Row& r, bool in_place, bool view) {
  Tensor x = self_values(r, kFloat64).requires_grad_(true);
  Tensor o = other_values(kFloat64).requires_grad_(r.has_other);
  Tensor w = from_vector(testing::random_values(12, 5, -1.0, 1.0), {3, 4}, TensorOptions(kFloat64));
  Tensor y = mul(x, 1.0);
  if (in_place) {
    if (view) {
      Tensor rows = y.narrow(0, 1, 2);
      r.member(rows, o.narrow(0, 1, 2));
    } else {
      r.member(y, o);
    }
  } else if (view) {
    y = cat({y.narrow(0, 0, 1), r.outplace(y.narrow(0, 1, 2), o.narrow(0, 1, 2)).to(kFloat64)}, 0);
  } else {
    y = r.outplace(y, o).to(kFloat64);
  }
  Grads g;
  try {
    sum(mul(y, w)).backward();
  } catch (const std::exception&) {
    g.threw = true;
  }
  g.x = x.grad();
  g.other = o.grad();
  return g;
}

bool same(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  return bitwise_equal(a, b);
}

void check_gradients(const Row& r, bool view) {
  SCOPED_TRACE(r.name + (view ? " through a view" : ""));
  try {
    r.outplace(self_values(r, kFloat64), other_values(kFloat64));
  } catch (const std::exception&) {
    return;  // an integer-only op (gcd, bitwise_and): nothing to differentiate
  }
  Grads in_place = run_grad(r, true, view);
  switch (r.grad) {
    case Grad::Same: {
      Grads out_of_place = run_grad(r, false, view);
      ASSERT_FALSE(in_place.threw);
      EXPECT_TRUE(same(in_place.x, out_of_place.x)) << in_place.x << "\nvs\n" << out_of_place.x;
      EXPECT_TRUE(same(in_place.other, out_of_place.other)) << in_place.other << "\nvs\n" << out_of_place.other;
      break;
    }
    case Grad::Zero: {
      ASSERT_FALSE(in_place.threw);
      // zero where written; through a view, row 0 keeps w's gradient
      std::vector<double> gx = values(in_place.x);
      std::vector<double> w = testing::random_values(12, 5, -1.0, 1.0);
      for (size_t k = 0; k < gx.size(); ++k) EXPECT_EQ(gx[k], view && k < 4 ? w[k] : 0.0) << k;
      break;
    }
    case Grad::Throws:
      EXPECT_TRUE(in_place.threw);
      break;
    case Grad::Unchanged: {
      ASSERT_FALSE(in_place.threw);
      EXPECT_EQ(values(in_place.x), testing::random_values(12, 5, -1.0, 1.0));
      break;
    }
  }
}

TEST(InplaceMembers, GradientThroughANonLeafEqualsTheOutOfPlaceOps) {
  for (const Row& r : rows()) check_gradients(r, false);
}

TEST(InplaceMembers, GradientThroughAViewOfANonLeafEqualsTheOutOfPlaceOps) {
  for (const Row& r : rows()) {
    if (r.name.rfind("cum", 0) == 0 || r.name.rfind("tri", 0) == 0) continue;  // not elementwise: rows differ
    check_gradients(r, true);
  }
}

TEST(InplaceMembers, ATensorSavedBeforeTheWriteRefusesItsBackward) {
  for (const Row& r : rows()) {
    SCOPED_TRACE(r.name);
    Tensor x = self_values(r, kFloat64).requires_grad_(true);
    Tensor y = mul(x, 1.0);
    Tensor z = sin(y);  // saves y
    try {
      r.member(y, other_values(kFloat64));
    } catch (const std::exception&) {
      continue;  // refused for float64 (gcd, bitwise_and)
    }
    EXPECT_TRUE(throws_with([&] { sum(z).backward(); },
                            "one of the variables needed for gradient computation has been modified by an inplace "
                            "operation"));
  }
}

TEST(InplaceMembers, TheWriteItselfKeepsWhatItsBackwardNeeds) {
  // y = x.sin(); y.exp_() is fine (exp's gradient reads its result); z = y.sin(); y.cos_() is not.
  Tensor x = from_vector(std::vector<double>{0.1, 0.5, 0.9}, {3}, TensorOptions(kFloat64)).requires_grad_(true);
  Tensor y = sin(x);
  y.exp_();
  EXPECT_NO_THROW(sum(y).backward());
  Tensor y2 = sin(x);
  Tensor z = sin(y2);
  y2.cos_();
  EXPECT_TRUE(throws_with([&] { sum(z).backward(); }, "modified by an inplace operation"));
}

TEST(InplaceMembers, ALeafThatRequiresGradRefusesTheWrite) {
  for (const Row& r : rows()) {
    SCOPED_TRACE(r.name);
    Tensor x = self_values(r, kFloat64).requires_grad_(true);
    EXPECT_TRUE(throws_with([&] { r.member(x, other_values(kFloat64)); },
                            "a leaf Variable that requires grad is being used in an in-place operation"));
  }
}

TEST(InplaceMembers, FillDiagonalAsTorch) {
  // torch.zeros(5, 3).fill_diagonal_(1[, wrap=True]), torch.zeros(2, 4).fill_diagonal_(1),
  // torch.zeros(2, 2, 2).fill_diagonal_(1)
  Tensor tall = raw::zeros({5, 3});
  tall.fill_diagonal_(1.0);
  EXPECT_EQ(values(tall), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  Tensor wrapped = raw::zeros({7, 3});
  wrapped.fill_diagonal_(1.0, true);
  EXPECT_EQ(values(wrapped),
            (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Tensor wide = raw::zeros({2, 4});
  wide.fill_diagonal_(2.0);
  EXPECT_EQ(values(wide), (std::vector<double>{2, 0, 0, 0, 0, 2, 0, 0}));
  Tensor cube = raw::zeros({2, 2, 2});
  cube.fill_diagonal_(1.0);
  EXPECT_EQ(values(cube), (std::vector<double>{1, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_TRUE(throws_with([] { Tensor v = raw::zeros({3}); v.fill_diagonal_(1.0); }, "dimensions must larger than 1"));
  EXPECT_TRUE(throws_with([] { Tensor v = raw::zeros({2, 3, 2}); v.fill_diagonal_(1.0); },
                          "all dimensions of input must be of equal length"));
  // The gradient: zero at the filled places, as torch's.
  Tensor x = raw::ones({3, 3}, kFloat64).requires_grad_(true);
  Tensor y = mul(x, 2.0);
  y.fill_diagonal_(0.0);
  sum(y).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 2, 2, 2, 0, 2, 2, 2, 0}));
}

// ---- random fills ----

double mean_of(const Tensor& t) { return mean(t.to(kFloat64)).item(); }
double var_of(const Tensor& t) { return var(t.to(kFloat64)).item(); }

TEST(InplaceRandom, ExponentialMoments) {
  manual_seed(1);
  Tensor t = raw::empty({200000});
  t.exponential_(2.0);  // mean 1/2, variance 1/4
  EXPECT_NEAR(mean_of(t), 0.5, 0.005);
  EXPECT_NEAR(var_of(t), 0.25, 0.006);
  EXPECT_GE(min(t).item(), 0.0);
  EXPECT_TRUE(throws_with([&] { t.exponential_(0.0); }, "exponential_ expects lambda > 0.0, but found lambda=0"));
  Tensor i = raw::zeros({3}, kInt64);
  EXPECT_TRUE(throws_with([&] { i.exponential_(); },
                          "Exponential distribution is a continuous probability distribution. dtype must be a "
                          "floating point"));
}

TEST(InplaceRandom, CauchyQuartiles) {
  manual_seed(2);
  Tensor t = raw::empty({200000}, kFloat64);
  t.cauchy_(1.0, 2.0);  // median 1, quartiles 1 -+ 2
  Tensor sorted = t.sort().first;
  EXPECT_NEAR(sorted.select(0, 100000).item(), 1.0, 0.05);
  EXPECT_NEAR(sorted.select(0, 50000).item(), -1.0, 0.07);
  EXPECT_NEAR(sorted.select(0, 150000).item(), 3.0, 0.07);
  EXPECT_TRUE(throws_with([&] { t.cauchy_(0.0, 0.0); }, "cauchy_ expects sigma > 0.0, but found sigma=0"));
  Tensor i = raw::zeros({3}, kInt64);
  EXPECT_TRUE(throws_with([&] { i.cauchy_(); }, "Cauchy distribution is a continuous probability distribution"));
}

TEST(InplaceRandom, LogNormalMoments) {
  manual_seed(3);
  Tensor t = raw::empty({200000});
  t.log_normal_(0.5, 0.25);
  EXPECT_GT(min(t).item(), 0.0);
  Tensor l = log(t.to(kFloat64));
  EXPECT_NEAR(mean_of(l), 0.5, 0.003);
  EXPECT_NEAR(std::sqrt(var_of(l)), 0.25, 0.003);
  EXPECT_TRUE(throws_with([&] { t.log_normal_(1.0, 0.0); }, "log_normal_ expects std > 0.0, but found std=0"));
  Tensor i = raw::zeros({3}, kInt64);
  EXPECT_ANY_THROW(i.log_normal_());
}

TEST(InplaceRandom, GeometricMomentsAndSupport) {
  manual_seed(4);
  for (DType d : {kFloat32, kInt64}) {
    Tensor t = raw::empty({200000}, d);
    t.geometric_(0.3);  // mean 1/p, variance (1 - p) / p^2, support 1, 2, ...
    EXPECT_NEAR(mean_of(t), 1 / 0.3, 0.03);
    EXPECT_NEAR(var_of(t), 0.7 / 0.09, 0.2);
    EXPECT_EQ(min(t).item(), 1.0);
    EXPECT_EQ(values(sub(t, floor(t))), std::vector<double>(200000, 0.0));
  }
  Tensor t = raw::empty({3});
  EXPECT_TRUE(throws_with([&] { t.geometric_(0.0); }, "geometric_ expects p to be in (0, 1), but got p=0"));
  EXPECT_TRUE(throws_with([&] { t.geometric_(1.0); }, "geometric_ expects p to be in (0, 1), but got p=1"));
  EXPECT_TRUE(throws_with([&] { t.geometric_(1.5); }, "got p=1.5"));
  Tensor b = raw::zeros({3}, kBool);
  EXPECT_ANY_THROW(b.geometric_(0.5));
}

TEST(InplaceRandom, RandomIntegersInTheirRange) {
  manual_seed(5);
  for (DType d : {kFloat32, kInt64, kInt32, kUInt8}) {
    Tensor t = raw::empty({100000}, d);
    t.random_(3, 10);  // uniform on 3..9: mean 6, variance (7^2 - 1) / 12 = 4
    EXPECT_EQ(min(t).item(), 3.0);
    EXPECT_EQ(max(t).item(), 9.0);
    EXPECT_NEAR(mean_of(t), 6.0, 0.03);
    EXPECT_NEAR(var_of(t), 4.0, 0.06);
    t.random_(4);
    EXPECT_EQ(min(t).item(), 0.0);
    EXPECT_EQ(max(t).item(), 3.0);
  }
  Tensor b = raw::empty({1000}, kBool);
  b.random_(0, 2);
  EXPECT_NEAR(mean_of(b), 0.5, 0.08);
  Tensor u8 = raw::empty({1000}, kUInt8);
  u8.random_();
  EXPECT_GT(max(u8).item(), 200.0);
  Tensor f = raw::empty({1000});
  f.random_();
  EXPECT_LE(max(f).item(), 16777216.0);
  EXPECT_GT(max(f).item(), 1e6);
  EXPECT_TRUE(throws_with([&] { f.random_(5, 5); },
                          "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"));
  EXPECT_TRUE(throws_with([&] { u8.random_(0, 300); }, "to - 1 is out of bounds"));
  EXPECT_TRUE(throws_with([&] { u8.random_(-1, 3); }, "from is out of bounds"));
  EXPECT_TRUE(throws_with([&] { b.random_(0, 3); }, "to - 1 is out of bounds"));
}

TEST(InplaceRandom, TheSameSeedGivesTheSameFill) {
  Tensor a = raw::empty({64}), b = raw::empty({64});
  manual_seed(9);
  a.exponential_();
  manual_seed(9);
  b.exponential_();
  EXPECT_TRUE(bitwise_equal(a, b));
}

TEST(InplaceRandom, RefusedOnATensorThatRequiresGrad) {
  Tensor x = raw::ones({3}).requires_grad_(true);
  EXPECT_ANY_THROW(x.exponential_());
  EXPECT_ANY_THROW(x.random_(0, 2));
}

}  // namespace
}  // namespace colony
