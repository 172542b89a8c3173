// The broadcasting math of two operands beyond the arithmetic of binary.cc: atan2, the integer-aware
// division family (fmod, remainder, floor_divide), hypot, copysign, xlogy and logaddexp(2), with
// their derivatives as torch's derivatives.yaml writes them (the formula beside each). A broadcast
// operand's gradient is summed back to its shape; the engine casts it to the operand's dtype.
#include <stdexcept>
#include <string>

#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::reduce_to;
using autograd::detail::scalar_like;
using raw::BinaryOp;

// Records y = op(a, b) with the gradients grad_a(g, a, b, y) and grad_b(g, a, b, y), each reduced
// to its operand's shape. Saves a, b and y only for the formulas that read them.
template <typename GradA, typename GradB>
Tensor binary_recorded(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, bool saves_output,
                       GradA grad_a, GradB grad_b) {
  Tensor out = raw::binary(op, a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa(a), sb(b), sy;
    if (saves_output) sy = SavedTensor(out, /*is_output=*/true);
    Shape as = a.sizes(), bs = b.sizes();
    record(name, {a, b}, out, {sa, sb, sy},
           [sa, sb, sy, as, bs, grad_a, grad_b, saves_output](const Grads& g, const Needs& needs) -> Grads {
             Tensor x = sa.unpack(), z = sb.unpack(), y = saves_output ? sy.unpack() : Tensor();
             return {needs[0] ? reduce_to(grad_a(g[0], x, z, y), as) : Tensor(),
                     needs[1] ? reduce_to(grad_b(g[0], x, z, y), bs) : Tensor()};
           });
  }
  return out;
}

// The same with one operand a scalar: grad(g, t, y) for the tensor operand.
template <typename Grad>
Tensor scalar_recorded(Tensor out, const char* name, const Tensor& t, bool saves_output, Grad grad) {
  if (autograd::needs_grad(t)) {
    SavedTensor st(t), sy;
    if (saves_output) sy = SavedTensor(out, /*is_output=*/true);
    record(name, {t}, out, {st, sy}, [st, sy, grad, saves_output](const Grads& g, const Needs&) -> Grads {
      return {grad(g[0], st.unpack(), saves_output ? sy.unpack() : Tensor())};
    });
  }
  return out;
}

// out = op(t, scalar) whose gradient is the incoming one unchanged (fmod and remainder by a number):
// nothing saved, so an in-place form (fmod_) need not keep self's old value.
Tensor passes_gradient(Tensor out, const char* name, const Tensor& t) {
  if (autograd::needs_grad(t)) {
    autograd::detail::record_differentiable(name, {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  }
  return out;
}

// floor_divide records a node whose backward raises, as PyTorch's ("derivative for
// aten::floor_divide is not implemented"): a graph through it fails loudly instead of leaving a
// parameter without its gradient.
Tensor not_differentiable(Tensor out, const char* name, const std::vector<Tensor>& inputs) {
  if (autograd::needs_grad(inputs)) {
    std::string what = std::string(name) + ": the derivative is not implemented, as in PyTorch (the result is "
                                           "piecewise constant; detach the inputs or use div and floor)";
    record(std::string(name) + "Backward", inputs, out, {}, [what](const Grads&, const Needs&) -> Grads {
      throw std::runtime_error(what);
    });
  }
  return out;
}

}  // namespace

Tensor atan2(const Tensor& a, const Tensor& b) {
  // recip = 1 / (a^2 + b^2): grad * b * recip and grad * -a * recip
  auto recip = [](const Tensor& x, const Tensor& z) { return raw::unary(raw::UnaryOp::Reciprocal, raw::add(raw::mul(x, x), raw::mul(z, z))); };
  return binary_recorded(
      BinaryOp::Atan2, "Atan2Backward", a, b, false,
      [recip](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return raw::mul(raw::mul(g, z), recip(x, z)); },
      [recip](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) {
        return raw::mul(raw::mul(g, raw::neg(x)), recip(x, z));
      });
}

Tensor fmod(const Tensor& a, const Tensor& b) {
  // grad, and -grad * trunc(a / b)
  return binary_recorded(
      BinaryOp::Fmod, "FmodBackward", a, b, false, [](const Tensor& g, const Tensor&, const Tensor&, const Tensor&) { return g; },
      [](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) {
        return raw::mul(raw::neg(g), raw::unary(raw::UnaryOp::Trunc, raw::div(x, z)));
      });
}

Tensor fmod(const Tensor& a, double b) { return passes_gradient(raw::binary(BinaryOp::Fmod, a, b), "FmodBackward", a); }

Tensor remainder(const Tensor& a, const Tensor& b) {
  // grad, and -grad * floor_divide(a, b) (torch's a.div(b, rounding_mode="floor"))
  return binary_recorded(
      BinaryOp::Remainder, "RemainderBackward", a, b, false,
      [](const Tensor& g, const Tensor&, const Tensor&, const Tensor&) { return g; },
      [](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) {
        return raw::mul(raw::neg(g), raw::binary(BinaryOp::FloorDivide, x, z));
      });
}

Tensor remainder(const Tensor& a, double b) {
  return passes_gradient(raw::binary(BinaryOp::Remainder, a, b), "RemainderBackward", a);
}

Tensor remainder(double a, const Tensor& b) {
  // -grad * floor_divide(a, b), the tensor form's formula (torch leaves this form's derivative
  // unimplemented; torch.remainder(torch.tensor(a), b) gives these values)
  return scalar_recorded(raw::binary(BinaryOp::Remainder, a, b), "RemainderBackward", b, false,
                         [a](const Tensor& g, const Tensor& z, const Tensor&) {
                           return raw::mul(raw::neg(g), raw::binary(BinaryOp::FloorDivide, a, z));
                         });
}

Tensor floor_divide(const Tensor& a, const Tensor& b) {
  return not_differentiable(raw::binary(BinaryOp::FloorDivide, a, b), "floor_divide", {a, b});
}
Tensor floor_divide(const Tensor& a, double b) {
  return not_differentiable(raw::binary(BinaryOp::FloorDivide, a, b), "floor_divide", {a});
}
Tensor floor_divide(double a, const Tensor& b) {
  return not_differentiable(raw::binary(BinaryOp::FloorDivide, a, b), "floor_divide", {b});
}

Tensor hypot(const Tensor& a, const Tensor& b) {
  // grad * a / result and grad * b / result
  return binary_recorded(
      BinaryOp::Hypot, "HypotBackward", a, b, true,
      [](const Tensor& g, const Tensor& x, const Tensor&, const Tensor& y) { return raw::div(raw::mul(g, x), y); },
      [](const Tensor& g, const Tensor&, const Tensor& z, const Tensor& y) { return raw::div(raw::mul(g, z), y); });
}

namespace {

// copysign_tensor_self_backward: grad * result / a, 0 where a == 0.
Tensor copysign_grad(const Tensor& g, const Tensor& x, const Tensor& y) {
  Tensor ratio = raw::div(y, x);
  ratio = raw::where(raw::binary(BinaryOp::Eq, x, 0.0), scalar_like(0.0, ratio), ratio);
  return raw::mul(g, ratio);
}

}  // namespace

Tensor copysign(const Tensor& a, const Tensor& b) {
  // other: zeros (the sign of b is piecewise constant)
  return binary_recorded(
      BinaryOp::Copysign, "CopysignBackward", a, b, true,
      [](const Tensor& g, const Tensor& x, const Tensor&, const Tensor& y) { return copysign_grad(g, x, y); },
      [](const Tensor&, const Tensor&, const Tensor& z, const Tensor&) { return raw::zeros_like(z); });
}

Tensor copysign(const Tensor& a, double b) {
  return scalar_recorded(raw::binary(BinaryOp::Copysign, a, b), "CopysignBackward", a, true,
                         [](const Tensor& g, const Tensor& x, const Tensor& y) { return copysign_grad(g, x, y); });
}

Tensor xlogy(const Tensor& a, const Tensor& b) {
  // self: xlogy(grad, b), 0 where a == 0 and b <= 0 (the limit of a log b along a at a = 0);
  // other: grad * a / b
  return binary_recorded(
      BinaryOp::Xlogy, "XlogyBackward", a, b, false,
      [](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) {
        Tensor r = raw::binary(BinaryOp::Xlogy, g, z);
        Tensor at_zero = raw::binary(BinaryOp::LogicalAnd, raw::binary(BinaryOp::Eq, x, 0.0), raw::binary(BinaryOp::Le, z, 0.0));
        return raw::where(at_zero, scalar_like(0.0, r), r);
      },
      [](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return raw::div(raw::mul(g, x), z); });
}

Tensor xlogy(const Tensor& a, double b) {
  // xlogy(grad, b), 0 where a == 0 when b <= 0
  return scalar_recorded(raw::binary(BinaryOp::Xlogy, a, b), "XlogyBackward", a, false,
                         [b](const Tensor& g, const Tensor& x, const Tensor&) {
                           Tensor r = raw::binary(BinaryOp::Xlogy, g, b);
                           if (b > 0) return r;
                           return raw::where(raw::binary(BinaryOp::Eq, x, 0.0), scalar_like(0.0, r), r);
                         });
}

Tensor xlogy(double a, const Tensor& b) {
  // grad * a / b
  return scalar_recorded(raw::binary(BinaryOp::Xlogy, a, b), "XlogyBackward", b, false,
                         [a](const Tensor& g, const Tensor& z, const Tensor&) { return raw::div(raw::mul(g, a), z); });
}

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  // grad / (1 + exp(b - a)) and grad / (1 + exp(a - b))
  auto side = [](const Tensor& g, const Tensor& self, const Tensor& other) {
    return raw::div(g, raw::add(raw::exp(raw::sub(other, self)), 1.0));
  };
  return binary_recorded(
      BinaryOp::LogAddExp, "LogaddexpBackward", a, b, false,
      [side](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return side(g, x, z); },
      [side](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return side(g, z, x); });
}

Tensor logaddexp2(const Tensor& a, const Tensor& b) {
  // grad / (1 + 2^(b - a)) and grad / (1 + 2^(a - b))
  auto side = [](const Tensor& g, const Tensor& self, const Tensor& other) {
    return raw::div(g, raw::add(raw::unary(raw::UnaryOp::Exp2, raw::sub(other, self)), 1.0));
  };
  return binary_recorded(
      BinaryOp::LogAddExp2, "Logaddexp2Backward", a, b, false,
      [side](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return side(g, x, z); },
      [side](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return side(g, z, x); });
}

namespace {

// fmax / fmin's gradients (torch's derivatives.yaml): the whole of g to the operand chosen, where
// `a_wins` (a beats b, or b is NaN; both NaN too), to b where b is chosen, half to each at a tie.
template <typename Beats>
Tensor nan_ignoring_extreme(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, Beats beats) {
  auto share = [beats](const Tensor& g, const Tensor& x, const Tensor& z, bool for_a) {
    const Tensor a_wins = raw::binary(BinaryOp::LogicalOr, beats(x, z), raw::unary(raw::UnaryOp::IsNan, z));
    const Tensor zero = scalar_like(0.0, g);
    const Tensor whole = for_a ? raw::where(a_wins, g, zero) : raw::where(a_wins, zero, g);
    return raw::where(raw::binary(BinaryOp::Eq, x, z), raw::mul(g, 0.5), whole);
  };
  return binary_recorded(
      op, name, a, b, false,
      [share](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return share(g, x, z, true); },
      [share](const Tensor& g, const Tensor& x, const Tensor& z, const Tensor&) { return share(g, x, z, false); });
}

}  // namespace

Tensor fmax(const Tensor& a, const Tensor& b) {
  return nan_ignoring_extreme(BinaryOp::Fmax, "FmaxBackward", a, b,
                              [](const Tensor& x, const Tensor& z) { return raw::binary(BinaryOp::Gt, x, z); });
}

Tensor fmin(const Tensor& a, const Tensor& b) {
  return nan_ignoring_extreme(BinaryOp::Fmin, "FminBackward", a, b,
                              [](const Tensor& x, const Tensor& z) { return raw::binary(BinaryOp::Lt, x, z); });
}

// Integer operands only: nothing to differentiate.
Tensor gcd(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Gcd, a, b); }
Tensor lcm(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Lcm, a, b); }

Tensor nextafter(const Tensor& a, const Tensor& b) {
  // torch's NextafterBackward: grad for self where self != other (where they are equal the result is
  // other, constant in self), zeros for other. The mask is kept, not a and b, so nextafter_ need not
  // keep self's old value.
  Tensor out = raw::binary(BinaryOp::NextAfter, a, b);
  if (autograd::needs_grad(a, b)) {
    const Shape as = a.sizes(), bs = b.sizes();
    const Tensor moves = raw::binary(BinaryOp::Ne, a, b);  // the broadcast shape, bool
    record("NextafterBackward", {a, b}, out, {}, [as, bs, moves](const Grads& g, const Needs& needs) -> Grads {
      return {needs[0] ? reduce_to(raw::where(moves, g[0], scalar_like(0.0, g[0])), as) : Tensor(),
              needs[1] ? raw::zeros(bs, TensorOptions(g[0].dtype()).device(g[0].device())) : Tensor()};
    });
  }
  return out;
}

Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::BitwiseLeftShift, a, b); }
Tensor bitwise_left_shift(const Tensor& a, double b) { return raw::binary(BinaryOp::BitwiseLeftShift, a, b); }
Tensor bitwise_left_shift(double a, const Tensor& b) { return raw::binary(BinaryOp::BitwiseLeftShift, a, b); }
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::BitwiseRightShift, a, b); }
Tensor bitwise_right_shift(const Tensor& a, double b) { return raw::binary(BinaryOp::BitwiseRightShift, a, b); }
Tensor bitwise_right_shift(double a, const Tensor& b) { return raw::binary(BinaryOp::BitwiseRightShift, a, b); }

// torch.ldexp's composition: a * 2^b, differentiable in both through mul and pow. torch's 2.0 ** b
// is floating for an integral b (2^-1 = 0.5), so b is made float32 first.
Tensor ldexp(const Tensor& a, const Tensor& b) {
  const Tensor e = is_floating(b.dtype()) ? b : to(b, b.device(), default_float_dtype());
  return mul(a, pow(2.0, e));
}

}  // namespace colony
