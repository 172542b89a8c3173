// Elementwise functions of one tensor and their derivatives.
#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::piecewise_constant;
using autograd::detail::unary_with_input;
using autograd::detail::unary_with_output;
using raw::ActivationGrad;
using raw::BinaryOp;
using raw::UnaryAttrs;
using raw::UnaryOp;

// An activation's gradient, written over the incoming one when no one else can see it: on
// LeNet's first layer that spares a 600 KB buffer per step at batch 32.
Tensor activation_grad(ActivationGrad op, const Tensor& g, const Tensor& saved, const UnaryAttrs& attrs) {
  if (!autograd::detail::sole_owner(g)) return raw::activation_backward(op, g, saved, attrs);
  raw::activation_backward_(op, g, saved, attrs);
  return g;
}

// Which forward value an activation's gradient reads (COLONY_FOR_EACH_ACTIVATION's third column).
enum class Saved { Input, Output };

Tensor activation(UnaryOp op, ActivationGrad grad_op, const char* name, Saved saved, const Tensor& x,
                  const UnaryAttrs& attrs) {
  Tensor out = raw::unary(op, x, attrs);
  if (autograd::needs_grad(x)) {
    SavedTensor s = saved == Saved::Output ? SavedTensor(out, /*is_output=*/true) : SavedTensor(x);
    record(name, {x}, out, {s}, [s, grad_op, attrs](const Grads& g, const Needs&) -> Grads {
      return {activation_grad(grad_op, g[0], s.unpack(), attrs)};
    });
  }
  return out;
}

// The input as autocast's table says: softplus has a row (float32); the other activations keep
// their input's dtype.
Tensor autocast_input(UnaryOp op, const Tensor& t) {
  return op == UnaryOp::Softplus ? autocast::cast(autocast::Op::softplus, t) : t;
}

}  // namespace

Tensor neg(const Tensor& t) {
  Tensor out = raw::neg(t);
  if (autograd::needs_grad(t)) {
    record("NegBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {raw::neg(g[0])}; });
  }
  return out;
}

Tensor abs(const Tensor& t) {
  return unary_with_input(UnaryOp::Abs, "AbsBackward", t, [](const Tensor& g, const Tensor& x) {
    return raw::mul(g, raw::unary(UnaryOp::Sign, x));
  });
}

Tensor exp(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::exp, t_arg);
  return unary_with_output(UnaryOp::Exp, "ExpBackward", t,
                           [](const Tensor& g, const Tensor& y) { return raw::mul(g, y); });
}

Tensor log(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::log, t_arg);
  return unary_with_input(UnaryOp::Log, "LogBackward", t,
                          [](const Tensor& g, const Tensor& x) { return raw::div(g, x); });
}

Tensor sqrt(const Tensor& t) {
  return unary_with_output(UnaryOp::Sqrt, "SqrtBackward", t,
                           [](const Tensor& g, const Tensor& y) { return raw::div(g, raw::mul(y, 2.0)); });
}

Tensor rsqrt(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::rsqrt, t_arg);
  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
  return unary_with_output(UnaryOp::Rsqrt, "RsqrtBackward", t, [](const Tensor& g, const Tensor& y) {
    return raw::mul(raw::mul(g, raw::pow(y, 3.0)), -0.5);
  });
}

// relu, sigmoid, tanh, gelu, silu, leaky_relu, elu, softplus, mish, hardswish, hardsigmoid, hardtanh,
// log_sigmoid, hardshrink, softshrink, threshold: the forward and gradient math of kernels/common, recorded with the saved value
// COLONY_FOR_EACH_ACTIVATION names.
#define COLONY_DEFINE_ACTIVATION(Op, name, saved)                                                          \
  Tensor name(const Tensor& t, const UnaryAttrs& attrs) {                                                  \
    return activation(UnaryOp::Op, ActivationGrad::Op, #Op "Backward", Saved::saved,                      \
                      autocast_input(UnaryOp::Op, t), attrs);                                              \
  }
COLONY_FOR_EACH_ACTIVATION(COLONY_DEFINE_ACTIVATION)
#undef COLONY_DEFINE_ACTIVATION

Tensor sin(const Tensor& t) {
  return unary_with_input(UnaryOp::Sin, "SinBackward", t,
                          [](const Tensor& g, const Tensor& x) { return raw::mul(g, raw::unary(UnaryOp::Cos, x)); });
}

Tensor cos(const Tensor& t) {
  return unary_with_input(UnaryOp::Cos, "CosBackward", t, [](const Tensor& g, const Tensor& x) {
    return raw::mul(g, raw::neg(raw::unary(UnaryOp::Sin, x)));
  });
}

Tensor log1p(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::log1p, t_arg);
  return unary_with_input(UnaryOp::Log1p, "Log1pBackward", t,
                          [](const Tensor& g, const Tensor& x) { return raw::div(g, raw::add(x, 1.0)); });
}

Tensor expm1(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::expm1, t_arg);
  return unary_with_output(UnaryOp::Expm1, "Expm1Backward", t,
                           [](const Tensor& g, const Tensor& y) { return raw::mul(g, raw::add(y, 1.0)); });
}

Tensor square(const Tensor& t) {
  return unary_with_input(UnaryOp::Square, "SquareBackward", t,
                          [](const Tensor& g, const Tensor& x) { return raw::mul(g, raw::mul(x, 2.0)); });
}

Tensor reciprocal(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::reciprocal, t_arg);
  // d/dx 1/x = -1/x^2 = -y^2
  return unary_with_output(UnaryOp::Reciprocal, "ReciprocalBackward", t, [](const Tensor& g, const Tensor& y) {
    return raw::neg(raw::mul(g, raw::mul(y, y)));
  });
}

Tensor erf(const Tensor& t) {
  // d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
  return unary_with_input(UnaryOp::Erf, "ErfBackward", t, [](const Tensor& g, const Tensor& x) {
    return raw::mul(g, raw::mul(raw::exp(raw::neg(raw::mul(x, x))), 1.1283791670955126));
  });
}

Tensor sign(const Tensor& t) { return piecewise_constant(UnaryOp::Sign, "SignBackward", t); }
Tensor floor(const Tensor& t) { return piecewise_constant(UnaryOp::Floor, "FloorBackward", t); }
Tensor ceil(const Tensor& t) { return piecewise_constant(UnaryOp::Ceil, "CeilBackward", t); }
Tensor round(const Tensor& t) { return piecewise_constant(UnaryOp::Round, "RoundBackward", t); }

Tensor round(const Tensor& t, int64_t decimals) {
  if (decimals == 0) return round(t);
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("round: not implemented for ") + dtype_name(t.dtype()) +
                                " tensors (decimals needs a floating-point tensor), as in PyTorch");
  }
  // ATen's: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for negative d, in float32
  // for 16-bit types (its opmath), rounded once into the dtype.
  const bool narrow = t.dtype() == kFloat16 || t.dtype() == kBFloat16;
  const Tensor x = narrow ? raw::to(t, t.device(), kFloat32) : t;
  const double ten_pow = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  Tensor r = decimals > 0 ? raw::binary(BinaryOp::Div, raw::unary(UnaryOp::Round, raw::mul(x, ten_pow)), ten_pow)
                          : raw::mul(raw::unary(UnaryOp::Round, raw::binary(BinaryOp::Div, x, ten_pow)), ten_pow);
  Tensor out = narrow ? raw::to(r, r.device(), t.dtype()) : r;
  if (autograd::needs_grad(t)) {
    record("RoundBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {raw::zeros_like(g[0])}; });
  }
  return out;
}

Tensor clamp(const Tensor& t, std::optional<double> min, std::optional<double> max) {
  Tensor out = raw::clamp(t, min, max);
  if (autograd::needs_grad(t)) {
    SavedTensor sx(t);
    record("ClampBackward", {t}, out, {sx}, [sx, min, max](const Grads& g, const Needs&) -> Grads {
      // torch 2.15's: the gradient passes where min < x < max, 0 at the bounds and at NaN, in one
      // pass. Two compares and two wheres (nearly all of it the wheres' per-element strided loop, by
      // perf) made [4096, 1024]'s forward + backward 32 ms against torch's 23 (op_sweep, 2026-12-07).
      return {raw::clamp_backward(g[0], sx.unpack(), min, max)};
    });
  }
  return out;
}

}  // namespace colony
