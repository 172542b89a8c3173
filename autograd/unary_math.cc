// The trigonometric, hyperbolic, logarithmic and special functions of one tensor, and the rounding
// ops trunc and frac, with their derivatives as torch's derivatives.yaml writes them (the formula
// in the comment beside each). Integral and bool inputs compute in float32 (raw::unary), except
// trunc (integers are copied) and frac (refused), as in PyTorch.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::Backward;
using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::piecewise_constant;
using autograd::detail::scalar_like;
using autograd::detail::unary_with_input;
using autograd::detail::unary_with_output;
using raw::BinaryOp;
using raw::UnaryAttrs;
using raw::UnaryOp;

constexpr double kLn2 = 0.69314718055994530942;   // M_LN2
constexpr double kLn10 = 2.30258509299404568402;  // M_LN10
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // M_2_SQRTPI
constexpr double kPi = 3.14159265358979323846;

Tensor unary(UnaryOp op, const Tensor& x) { return raw::unary(op, x); }
// 1 - x^2, the argument of asin's, acos's and atanh's derivatives.
Tensor one_minus_square(const Tensor& x) { return rsub(mul(x, x), 1.0); }

}  // namespace

Tensor tan(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::tan, t_arg);
  // grad * (1 + result^2)
  return unary_with_output(
      UnaryOp::Tan, "TanBackward", t, [](const Tensor& g, const Tensor& y) { return mul(g, add(mul(y, y), 1.0)); },
      Backward::Differentiable);
}

Tensor asin(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::asin, t_arg);
  // grad * (1 - x^2)^(-1/2)
  return unary_with_input(
      UnaryOp::Asin, "AsinBackward", t,
      [](const Tensor& g, const Tensor& x) { return mul(g, rsqrt(one_minus_square(x))); }, {},
      Backward::Differentiable);
}

Tensor acos(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::acos, t_arg);
  // grad * -(1 - x^2)^(-1/2)
  return unary_with_input(
      UnaryOp::Acos, "AcosBackward", t,
      [](const Tensor& g, const Tensor& x) { return mul(g, neg(rsqrt(one_minus_square(x)))); }, {},
      Backward::Differentiable);
}

Tensor atan(const Tensor& t) {
  // grad / (x^2 + 1)
  return unary_with_input(
      UnaryOp::Atan, "AtanBackward", t, [](const Tensor& g, const Tensor& x) { return div(g, add(mul(x, x), 1.0)); },
      {}, Backward::Differentiable);
}

Tensor sinh(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::sinh, t_arg);
  return unary_with_input(
      UnaryOp::Sinh, "SinhBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, cosh(x)); }, {},
      Backward::Differentiable);
}

Tensor cosh(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::cosh, t_arg);
  return unary_with_input(
      UnaryOp::Cosh, "CoshBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, sinh(x)); }, {},
      Backward::Differentiable);
}

Tensor asinh(const Tensor& t) {
  // grad * (x^2 + 1)^(-1/2)
  return unary_with_input(
      UnaryOp::Asinh, "AsinhBackward", t,
      [](const Tensor& g, const Tensor& x) { return mul(g, rsqrt(add(mul(x, x), 1.0))); }, {},
      Backward::Differentiable);
}

Tensor acosh(const Tensor& t) {
  // grad * (x^2 - 1)^(-1/2): inf at x = 1
  return unary_with_input(
      UnaryOp::Acosh, "AcoshBackward", t,
      [](const Tensor& g, const Tensor& x) { return mul(g, rsqrt(add(mul(x, x), -1.0))); }, {},
      Backward::Differentiable);
}

Tensor atanh(const Tensor& t) {
  // grad / (1 - x^2)
  return unary_with_input(
      UnaryOp::Atanh, "AtanhBackward", t, [](const Tensor& g, const Tensor& x) { return div(g, one_minus_square(x)); },
      {}, Backward::Differentiable);
}

Tensor trunc(const Tensor& t) { return piecewise_constant(UnaryOp::Trunc, "TruncBackward", t); }
Tensor fix(const Tensor& t) { return trunc(t); }

Tensor frac(const Tensor& t) {
  // x - trunc(x): the gradient passes unchanged (trunc's is zero).
  Tensor out = raw::unary(UnaryOp::Frac, t);
  if (autograd::needs_grad(t)) {
    autograd::detail::record_differentiable("FracBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  }
  return out;
}

Tensor log2(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::log2, t_arg);
  // grad / (x ln 2)
  return unary_with_input(
      UnaryOp::Log2, "Log2Backward", t, [](const Tensor& g, const Tensor& x) { return div(g, mul(x, kLn2)); }, {},
      Backward::Differentiable);
}

Tensor log10(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::log10, t_arg);
  // grad / (x ln 10)
  return unary_with_input(
      UnaryOp::Log10, "Log10Backward", t, [](const Tensor& g, const Tensor& x) { return div(g, mul(x, kLn10)); }, {},
      Backward::Differentiable);
}

Tensor exp2(const Tensor& t) {
  // grad * result * ln 2
  return unary_with_output(
      UnaryOp::Exp2, "Exp2Backward", t, [](const Tensor& g, const Tensor& y) { return mul(mul(g, y), kLn2); },
      Backward::Differentiable);
}

Tensor erfc(const Tensor& t) {
  // -2/sqrt(pi) exp(-x^2) grad
  return unary_with_input(
      UnaryOp::Erfc, "ErfcBackward", t,
      [](const Tensor& g, const Tensor& x) { return mul(mul(exp(neg(mul(x, x))), -kTwoOverSqrtPi), g); }, {},
      Backward::Differentiable);
}

Tensor erfinv(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::erfinv, t_arg);
  // sqrt(pi)/2 exp(erfinv(x)^2) grad, through the saved result (torch recomputes erfinv(x): the
  // same numbers)
  return unary_with_output(
      UnaryOp::Erfinv, "ErfinvBackward", t,
      [](const Tensor& g, const Tensor& y) { return mul(mul(exp(mul(y, y)), 1.0 / kTwoOverSqrtPi), g); },
      Backward::Differentiable);
}

Tensor lgamma(const Tensor& t) {
  // grad * digamma(x)
  return unary_with_input(
      UnaryOp::Lgamma, "LgammaBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, digamma(x)); }, {},
      Backward::Differentiable);
}

Tensor digamma(const Tensor& t) {
  // grad * polygamma(1, x), the trigamma function
  return unary_with_input(
      UnaryOp::Digamma, "DigammaBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, polygamma(1, x)); },
      {}, Backward::Differentiable);
}

Tensor polygamma(int64_t n, const Tensor& t) {
  if (n < 0) throw std::invalid_argument("polygamma: polygamma(n, x) does not support negative n.");
  UnaryAttrs attrs;
  attrs.polygamma_n = static_cast<int>(n);
  // grad * polygamma(n + 1, x)
  return unary_with_input(
      UnaryOp::Polygamma, "PolygammaBackward", t,
      [n](const Tensor& g, const Tensor& x) { return mul(g, polygamma(n + 1, x)); }, attrs, Backward::Differentiable);
}

Tensor logit(const Tensor& t, std::optional<double> eps) {
  UnaryAttrs attrs;
  attrs.logit_eps = eps.value_or(-1.0);
  // logit_backward: grad / (x (1 - x)) inside [eps, 1 - eps] (bounds included), 0 outside; without
  // eps (or with a negative one), inside [0, 1] and NaN outside.
  const bool clamps = attrs.logit_eps >= 0;
  const double lo = clamps ? attrs.logit_eps : 0.0, hi = 1.0 - lo;
  const double outside = clamps ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  return unary_with_input(
      UnaryOp::Logit, "LogitBackward", t,
      [lo, hi, outside](const Tensor& g, const Tensor& x) {
        Tensor r = raw::div(g, raw::mul(x, raw::binary(BinaryOp::Sub, 1.0, x)));
        const Tensor fill = scalar_like(outside, r);
        r = raw::where(raw::binary(BinaryOp::Lt, x, lo), fill, r);
        return raw::where(raw::binary(BinaryOp::Gt, x, hi), fill, r);
      },
      attrs);
}

Tensor sinc(const Tensor& t) {
  // sinc_backward: grad (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 where pi x^2 == 0
  return unary_with_input(UnaryOp::Sinc, "SincBackward", t, [](const Tensor& g, const Tensor& x) {
    const Tensor x_pi = raw::mul(x, kPi);
    const Tensor x_squared_pi = raw::mul(raw::mul(x, x), kPi);
    const Tensor num = raw::binary(BinaryOp::Sub, raw::mul(x_pi, unary(UnaryOp::Cos, x_pi)), unary(UnaryOp::Sin, x_pi));
    const Tensor out = raw::div(raw::mul(g, num), x_squared_pi);
    return raw::where(raw::binary(BinaryOp::Eq, x_squared_pi, 0.0), scalar_like(0.0, out), out);
  });
}

Tensor i0(const Tensor& t) {
  // grad * i1(x)
  return unary_with_input(UnaryOp::I0, "I0Backward", t,
                          [](const Tensor& g, const Tensor& x) { return raw::mul(g, unary(UnaryOp::I1, x)); });
}

Tensor special_i1(const Tensor& t) {
  // i1_backward: grad (i0(x) - i1(x) / x), 0.5 grad where |x| <= eps (the limit; the formula is 0/0
  // there), x replaced by eps in the formula first so that no NaN is formed. i1(x) is recomputed
  // from the saved input, as torch reads its saved result: the same numbers.
  return unary_with_input(UnaryOp::I1, "SpecialI1Backward", t, [](const Tensor& g, const Tensor& x) {
    const double eps = x.dtype() == kFloat64 ? std::numeric_limits<double>::epsilon()
                                             : static_cast<double>(std::numeric_limits<float>::epsilon());
    const Tensor not_tiny = raw::binary(BinaryOp::Gt, raw::abs(x), eps);
    const Tensor safe_x = raw::where(not_tiny, x, scalar_like(eps, x));
    const Tensor dx = raw::binary(BinaryOp::Sub, unary(UnaryOp::I0, safe_x), raw::div(unary(UnaryOp::I1, safe_x), safe_x));
    return raw::mul(g, raw::where(not_tiny, dx, scalar_like(0.5, dx)));
  });
}

std::pair<Tensor, Tensor> frexp(const Tensor& t) {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("frexp: torch.frexp() only supports floating-point dtypes, got ") +
                                dtype_name(t.dtype()));
  }
  Tensor mantissa = raw::unary(UnaryOp::FrexpMantissa, t);
  Tensor exponent = raw::unary(UnaryOp::FrexpExponent, t);  // whole numbers in t's dtype
  if (autograd::needs_grad(t)) {
    // mantissa: grad / 2^exponent, as torch's (exact: a power of two)
    Tensor scale = raw::unary(UnaryOp::Exp2, raw::neg(exponent));
    record("FrexpBackward", {t}, mantissa, {}, [scale](const Grads& g, const Needs&) -> Grads {
      return {raw::mul(g[0], scale)};
    });
  }
  return {mantissa, raw::to(exponent, exponent.device(), kInt32)};
}

// ATen's: the input (in the default float dtype when integral or bool) times the constant.
Tensor deg2rad(const Tensor& t) {
  const Tensor x = is_floating(t.dtype()) ? t : to(t, t.device(), default_float_dtype());
  return mul(x, kPi / 180.0);
}
Tensor rad2deg(const Tensor& t) {
  const Tensor x = is_floating(t.dtype()) ? t : to(t, t.device(), default_float_dtype());
  return mul(x, 180.0 / kPi);
}

}  // namespace colony
