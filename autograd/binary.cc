// Broadcasting arithmetic of two operands. A broadcast operand's gradient is summed back to its
// own shape (raw::sum_to); the engine casts it to the operand's dtype.
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::record;
using autograd::requires_grad_safe;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;
using autograd::detail::save_if;
using autograd::detail::scalar_like;
using raw::BinaryOp;

// A broadcast operand's gradient summed back to its shape, differentiably (the closures below are
// written with the differentiable ops, so a backward with create_graph can differentiate them).
Tensor summed_to(const Tensor& g, const Shape& shape) { return g.sizes() == shape ? g : sum_to(g, shape); }

// Gradient for one input of maximum/minimum: g where the input won, g/2 on ties, 0 where it lost
// (a mask constant in the inputs, so linear in g).
Tensor extremum_grad(const Tensor& g, const Tensor& self, const Tensor& other, BinaryOp loses) {
  Tensor half = where(raw::binary(BinaryOp::Eq, self, other), mul(g, 0.5), g);
  return summed_to(where(raw::binary(loses, self, other), 0.0, half), self.sizes());
}

Tensor extremum(BinaryOp op, const char* name, const Tensor& a, const Tensor& b) {
  Tensor out = raw::binary(op, a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa(a), sb(b);
    // An operand loses where it is below the other (maximum) or above it (minimum).
    BinaryOp loses = op == BinaryOp::Maximum ? BinaryOp::Lt : BinaryOp::Gt;
    record_differentiable(name, {a, b}, out, {sa, sb}, [sa, sb, loses](const Grads& g, const Needs& needs) -> Grads {
      Tensor x = sa.unpack(), y = sb.unpack();
      return {needs[0] ? extremum_grad(g[0], x, y, loses) : Tensor(),
              needs[1] ? extremum_grad(g[0], y, x, loses) : Tensor()};
    });
  }
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  Tensor out = alpha == 1.0 ? raw::add(a, b) : raw::add(a, b, alpha);
  if (autograd::needs_grad(a, b)) {
    Shape as = a.sizes(), bs = b.sizes();
    record_differentiable("AddBackward", {a, b}, out, {}, [as, bs, alpha](const Grads& g, const Needs& needs) -> Grads {
      Tensor gb;
      if (needs[1]) gb = summed_to(alpha == 1.0 ? g[0] : mul(g[0], alpha), bs);
      return {needs[0] ? summed_to(g[0], as) : Tensor(), gb};
    });
  }
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, double alpha) {
  Tensor out = alpha == 1.0 ? raw::sub(a, b) : raw::add(a, b, -alpha);
  if (autograd::needs_grad(a, b)) {
    Shape as = a.sizes(), bs = b.sizes();
    record_differentiable("SubBackward", {a, b}, out, {}, [as, bs, alpha](const Grads& g, const Needs& needs) -> Grads {
      Tensor gb;
      if (needs[1]) gb = summed_to(mul(g[0], -alpha), bs);
      return {needs[0] ? summed_to(g[0], as) : Tensor(), gb};
    });
  }
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = raw::mul(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa = save_if(requires_grad_safe(b), a), sb = save_if(requires_grad_safe(a), b);
    Shape as = a.sizes(), bs = b.sizes();
    record_differentiable("MulBackward", {a, b}, out, {sa, sb}, [sa, sb, as, bs](const Grads& g, const Needs& needs) -> Grads {
      Tensor ga, gb;
      if (needs[0]) ga = summed_to(mul(g[0], sb.unpack()), as);
      if (needs[1]) gb = summed_to(mul(g[0], sa.unpack()), bs);
      return {ga, gb};
    });
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = raw::div(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa = save_if(requires_grad_safe(b), a), sb(b);
    Shape as = a.sizes();
    record_differentiable("DivBackward", {a, b}, out, {sa, sb}, [sa, sb, as](const Grads& g, const Needs& needs) -> Grads {
      Tensor y = sb.unpack();
      Tensor ga, gb;
      if (needs[0]) ga = summed_to(div(g[0], y), as);
      if (needs[1]) {
        // d(a/b)/db = -a / b^2
        Tensor x = sa.unpack();
        gb = summed_to(neg(div(mul(g[0], x), mul(y, y))), y.sizes());
      }
      return {ga, gb};
    });
  }
  return out;
}

Tensor add(const Tensor& a, double b) {
  Tensor out = raw::add(a, b);
  if (autograd::needs_grad(a)) {
    record_differentiable("AddBackward", {a}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  }
  return out;
}

Tensor sub(const Tensor& a, double b) {
  Tensor out = raw::binary(BinaryOp::Sub, a, b);
  if (autograd::needs_grad(a)) {
    record_differentiable("SubBackward", {a}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  }
  return out;
}

Tensor rsub(const Tensor& a, double b) {
  Tensor out = raw::binary(BinaryOp::Sub, b, a);
  if (autograd::needs_grad(a)) {
    record_differentiable("RsubBackward", {a}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {neg(g[0])}; });
  }
  return out;
}

Tensor mul(const Tensor& a, double b) {
  Tensor out = raw::mul(a, b);
  if (autograd::needs_grad(a)) {
    record_differentiable("MulBackward", {a}, out, {}, [b](const Grads& g, const Needs&) -> Grads { return {mul(g[0], b)}; });
  }
  return out;
}

Tensor div(const Tensor& a, double b) {
  Tensor out = raw::binary(BinaryOp::Div, a, b);
  if (autograd::needs_grad(a)) {
    record_differentiable("DivBackward", {a}, out, {},
                          [b](const Grads& g, const Needs&) -> Grads { return {div(g[0], b)}; });
  }
  return out;
}

namespace {

// The quotient rounded toward zero: trunc(a / b) on floating types; on integers the C quotient,
// floor_divide's one more where the division is inexact and the signs differ (an integer zero
// divisor is floor_divide's ZeroDivisionError on the CPU).
Tensor trunc_divide(const Tensor& a, const Tensor& b) {
  if (is_floating(raw::result_type(a, b))) return raw::unary(raw::UnaryOp::Trunc, raw::div(a, b));
  Tensor floored = raw::binary(BinaryOp::FloorDivide, a, b);
  Tensor inexact = raw::binary(BinaryOp::Ne, raw::binary(BinaryOp::Fmod, a, b), 0.0);
  Tensor negative = raw::binary(BinaryOp::Ne, raw::binary(BinaryOp::Lt, a, 0.0), raw::binary(BinaryOp::Lt, b, 0.0));
  Tensor up = raw::binary(BinaryOp::LogicalAnd, inexact, negative);
  return raw::add(floored, raw::to(up, up.device(), floored.dtype()));
}

}  // namespace

Tensor div(const Tensor& a, const Tensor& b, const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) return div(a, b);
  Tensor out;
  if (*rounding_mode == "trunc") {
    out = trunc_divide(a, b);
  } else if (*rounding_mode == "floor") {
    out = raw::binary(BinaryOp::FloorDivide, a, b);
  } else {
    throw std::invalid_argument("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
                                *rounding_mode + "'");
  }
  // Piecewise constant: zero gradients for both, as torch's DivBackward with a rounding mode.
  if (autograd::needs_grad(a, b)) {
    record_differentiable("DivBackward", {a, b}, out, {}, [](const Grads& g, const Needs& needs) -> Grads {
      return {needs[0] ? raw::zeros_like(g[0]) : Tensor(), needs[1] ? raw::zeros_like(g[0]) : Tensor()};
    });
  }
  return out;
}

Tensor div(const Tensor& a, double b, const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) return div(a, b);
  // The number as a 0-d tensor, which promotes as a Python scalar does (int64 when whole).
  const DType dt = std::isfinite(b) && std::floor(b) == b ? kInt64 : kFloat64;
  return div(a, raw::scalar_tensor(b, TensorOptions(dt).device(a.device())), rounding_mode);
}

Tensor rdiv(const Tensor& a, double b) {
  Tensor out = raw::binary(BinaryOp::Div, b, a);
  if (autograd::needs_grad(a)) {
    SavedTensor sa(a);
    record_differentiable("RdivBackward", {a}, out, {sa}, [sa, b](const Grads& g, const Needs&) -> Grads {
      // d(b/a)/da = -b / a^2
      Tensor x = sa.unpack();
      return {mul(div(g[0], mul(x, x)), -b)};
    });
  }
  return out;
}

Tensor pow(const Tensor& a_arg, double exponent) {
  const Tensor a = autocast::cast(autocast::Op::pow, a_arg);
  Tensor out = raw::pow(a, exponent);
  if (autograd::needs_grad(a)) {
    SavedTensor sa(a);
    record_differentiable("PowBackward", {a}, out, {sa}, [sa, exponent](const Grads& g, const Needs&) -> Grads {
      Tensor x = sa.unpack();
      if (exponent == 0.0) return {raw::zeros_like(x)};
      return {mul(mul(g[0], pow(x, exponent - 1.0)), exponent)};
    });
  }
  return out;
}

Tensor pow(const Tensor& a_arg, const Tensor& exponent_arg) {
  const Tensor a = autocast::cast(autocast::Op::pow, a_arg), exponent = autocast::cast(autocast::Op::pow, exponent_arg);
  Tensor out = raw::pow(a, exponent);
  if (autograd::needs_grad(a, exponent)) {
    SavedTensor sa(a), sb(exponent), sy(out, /*is_output=*/true);
    record_differentiable("PowBackward", {a, exponent}, out, {sa, sb, sy}, [sa, sb, sy](const Grads& g, const Needs& needs) -> Grads {
      Tensor x = sa.unpack(), e = sb.unpack();
      Tensor ga, ge;
      if (needs[0]) {
        // e * x^(e-1)
        ga = summed_to(mul(g[0], mul(e, pow(x, add(e, -1.0)))), x.sizes());
      }
      if (needs[1]) {
        // x^e * ln(x); where x == 0 and e >= 0 the limit is 0 (PyTorch masks the NaN/inf there).
        Tensor val = mul(g[0], mul(sy.unpack(), log(x)));
        Tensor masked = where(raw::binary(BinaryOp::Ge, e, 0.0), 0.0, val);
        val = where(raw::binary(BinaryOp::Eq, x, 0.0), masked, val);
        ge = summed_to(val, e.sizes());
      }
      return {ga, ge};
    });
  }
  return out;
}

Tensor pow(double base, const Tensor& exponent_arg) {
  const Tensor exponent = autocast::cast(autocast::Op::pow, exponent_arg);
  Tensor out = raw::binary(BinaryOp::Pow, base, exponent);
  if (autograd::needs_grad(exponent)) {
    SavedTensor se(exponent), sy(out, /*is_output=*/true);
    record_differentiable("PowBackward", {exponent}, out, {se, sy}, [se, sy, base](const Grads& g, const Needs&) -> Grads {
      Tensor val = mul(mul(g[0], sy.unpack()), std::log(base));
      if (base == 0.0) {
        // 0^e is constant 0 for e > 0 (and 1 at e == 0): PyTorch's gradient there is 0.
        Tensor e = se.unpack();
        val = where(raw::binary(BinaryOp::Ge, e, 0.0), 0.0, val);
      }
      return {val};
    });
  }
  return out;
}

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(BinaryOp::Maximum, "MaximumBackward", a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(BinaryOp::Minimum, "MinimumBackward", a, b); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out = raw::where(cond, a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sc(cond);
    Shape as = a.sizes(), bs = b.sizes();
    record_differentiable("WhereBackward", {a, b}, out, {sc}, [sc, as, bs](const Grads& g, const Needs& needs) -> Grads {
      Tensor c = sc.unpack();
      Tensor zero = scalar_like(0.0, g[0]);
      Tensor ga, gb;
      if (needs[0]) ga = summed_to(where(c, g[0], zero), as);
      if (needs[1]) gb = summed_to(where(c, zero, g[0]), bs);
      return {ga, gb};
    });
  }
  return out;
}

namespace {

// masked_fill's 0-D value, on t's device and in its dtype.
Tensor fill_value(const Tensor& t, const Tensor& value, const char* op) {
  if (!t.defined() || !value.defined()) throw std::invalid_argument(std::string(op) + ": expected defined tensors");
  if (value.dim() != 0) {
    throw std::invalid_argument(std::string(op) + " only supports a 0-dimensional value tensor, but got tensor with " +
                                std::to_string(value.dim()) + " dimension(s).");
  }
  return to(value, t.device(), t.dtype());
}

}  // namespace

Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value) {
  const Tensor v = fill_value(t, value, "masked_fill_");
  if (!mask.defined() || mask.dtype() != kBool) {
    throw std::invalid_argument("masked_fill_ only supports boolean masks, but got mask with dtype " +
                                (mask.defined() ? dtype_name(mask.dtype()) : std::string("undefined")));
  }
  return where(mask, v, t);
}

Tensor masked_fill(const Tensor& t, const Tensor& mask, double value) {
  Tensor out = raw::masked_fill(t, mask, value);
  if (autograd::needs_grad(t)) {
    SavedTensor sm(mask);
    Shape ts = t.sizes();
    record_differentiable("MaskedFillBackward", {t}, out, {sm}, [sm, ts](const Grads& g, const Needs&) -> Grads {
      // The filled elements do not depend on t.
      return {summed_to(where(sm.unpack(), 0.0, g[0]), ts)};
    });
  }
  return out;
}

// The tensor and the number promote as torch.where's do (torch.result_type with a Scalar): an
// integer or bool tensor with a fractional number gives float32, a bool tensor with a whole
// number int64; otherwise the tensor's dtype. (Cast to the tensor's dtype, where(b, int64, 2.5)
// put 2 where torch puts 2.5.)
namespace {
Tensor promoted_for_scalar(const Tensor& t, double s) {
  const DType d = raw::scalar_result_type(t.dtype(), s);
  return d == t.dtype() ? t : colony::to(t, t.device(), d);
}
}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, double b) {
  const Tensor ap = promoted_for_scalar(a, b);
  return where(cond, ap, scalar_like(b, ap));
}
Tensor where(const Tensor& cond, double a, const Tensor& b) {
  const Tensor bp = promoted_for_scalar(b, a);
  return where(cond, scalar_like(a, bp), bp);
}

}  // namespace colony
