// torch's other names of Colony's ops (declared beside each op in autograd/ops.h): each alias gives
// the op's values, and the differentiable ones its gradient.
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::values;

Tensor x() { return raw::tensor({-0.75, -0.25, 0.0, 0.5, 0.9}, kFloat64); }
Tensor y() { return raw::tensor({0.5, -0.25, 1.0, 0.5, -2.0}, kFloat64); }

// The alias's values equal the op's, to the bit, and so do the gradients of the input.
void expect_same(const std::function<Tensor(const Tensor&)>& alias, const std::function<Tensor(const Tensor&)>& op,
                 const Tensor& in, const char* name) {
  Tensor a = in.detach().clone(), b = in.detach().clone();
  a.requires_grad_(true);
  b.requires_grad_(true);
  Tensor ya = alias(a), yb = op(b);
  EXPECT_EQ(ya.sizes(), yb.sizes()) << name;
  EXPECT_EQ(ya.dtype(), yb.dtype()) << name;
  EXPECT_EQ(values(ya), values(yb)) << name;
  if (yb.requires_grad()) {
    sum(yb).backward();
    sum(ya).backward();
    EXPECT_EQ(values(a.grad()), values(b.grad())) << name;
  }
}

TEST(Aliases, EachIsTheOpTorchNamesIt) {
  const Tensor p = x(), q = y();
  expect_same([](const Tensor& t) { return absolute(t); }, [](const Tensor& t) { return abs(t); }, p, "absolute");
  expect_same([](const Tensor& t) { return negative(t); }, [](const Tensor& t) { return neg(t); }, p, "negative");
  expect_same([](const Tensor& t) { return arcsin(t); }, [](const Tensor& t) { return asin(t); }, p, "arcsin");
  expect_same([](const Tensor& t) { return arccos(t); }, [](const Tensor& t) { return acos(t); }, p, "arccos");
  expect_same([](const Tensor& t) { return arctan(t); }, [](const Tensor& t) { return atan(t); }, p, "arctan");
  expect_same([](const Tensor& t) { return arcsinh(t); }, [](const Tensor& t) { return asinh(t); }, p, "arcsinh");
  expect_same([](const Tensor& t) { return arctanh(t); }, [](const Tensor& t) { return atanh(t); }, p, "arctanh");
  expect_same([](const Tensor& t) { return arccosh(add(t, 2.0)); }, [](const Tensor& t) { return acosh(add(t, 2.0)); },
              p, "arccosh");
  expect_same([q](const Tensor& t) { return arctan2(t, q); }, [q](const Tensor& t) { return atan2(t, q); }, p, "arctan2");
  expect_same([](const Tensor& t) { return clip(t, -0.5, 0.6); }, [](const Tensor& t) { return clamp(t, -0.5, 0.6); }, p,
              "clip");
  expect_same([q](const Tensor& t) { return subtract(t, q, 2.0); }, [q](const Tensor& t) { return sub(t, q, 2.0); }, p,
              "subtract");
  expect_same([](const Tensor& t) { return subtract(t, 1.5); }, [](const Tensor& t) { return sub(t, 1.5); }, p, "subtract");
  expect_same([q](const Tensor& t) { return true_divide(t, q); }, [q](const Tensor& t) { return div(t, q); }, p,
              "true_divide");
  expect_same([](const Tensor& t) { return true_divide(t, 3.0); }, [](const Tensor& t) { return div(t, 3.0); }, p,
              "true_divide");
  expect_same([q](const Tensor& t) { return ger(t, q); }, [q](const Tensor& t) { return outer(t, q); }, p, "ger");
  expect_same([q](const Tensor& t) { return concat({t, q}); }, [q](const Tensor& t) { return cat({t, q}); }, p, "concat");
  expect_same([q](const Tensor& t) { return concatenate({q, t}, -1); }, [q](const Tensor& t) { return cat({q, t}, -1); },
              p, "concatenate");
  const Tensor m = raw::reshape(raw::arange(24.0, kFloat64), {2, 3, 4});
  expect_same([](const Tensor& t) { return moveaxis(t, 0, 2); }, [](const Tensor& t) { return movedim(t, 0, 2); }, m,
              "moveaxis");
  expect_same([](const Tensor& t) { return moveaxis(t, {0, 1}, {2, 0}); },
              [](const Tensor& t) { return movedim(t, {0, 1}, {2, 0}); }, m, "moveaxis");
  expect_same([](const Tensor& t) { return ravel(transpose(t, 0, 2)); },
              [](const Tensor& t) { return reshape(transpose(t, 0, 2), {-1}); }, m, "ravel");
  EXPECT_EQ(ravel(raw::scalar_tensor(3.0)).sizes(), Shape({1}));
  // The comparisons' long names: bool results.
  EXPECT_EQ(values(greater(p, q)), values(gt(p, q)));
  EXPECT_EQ(values(greater_equal(p, q)), values(ge(p, q)));
  EXPECT_EQ(values(less(p, q)), values(lt(p, q)));
  EXPECT_EQ(values(less_equal(p, q)), values(le(p, q)));
  EXPECT_EQ(values(not_equal(p, q)), values(ne(p, q)));
  EXPECT_EQ(values(greater(p, 0.0)), values(gt(p, 0.0)));
  EXPECT_EQ(values(greater_equal(p, 0.0)), values(ge(p, 0.0)));
  EXPECT_EQ(values(less(p, 0.0)), values(lt(p, 0.0)));
  EXPECT_EQ(values(less_equal(p, 0.0)), values(le(p, 0.0)));
  EXPECT_EQ(values(not_equal(p, 0.0)), values(ne(p, 0.0)));
  EXPECT_EQ(less_equal(p, q).dtype(), kBool);
  EXPECT_EQ(values(fix(p)), values(trunc(p)));
}

}  // namespace
}  // namespace colony
