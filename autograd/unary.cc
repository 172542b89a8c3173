// Elementwise functions of one tensor and their derivatives.
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::Backward;
using autograd::record;
using autograd::detail::record_differentiable;
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

// The activations whose gradient g f'(s) Colony can differentiate again (create_graph): those with
// a second derivative below, and the piecewise linear ones, whose f'' is zero.
bool has_second_derivative(ActivationGrad op, const UnaryAttrs& attrs) {
  switch (op) {
    case ActivationGrad::Relu:
    case ActivationGrad::LeakyRelu:
    case ActivationGrad::Hardtanh:
    case ActivationGrad::Hardsigmoid:
    case ActivationGrad::Tanh:
    case ActivationGrad::Sigmoid:
    case ActivationGrad::Silu:
    case ActivationGrad::Softplus:
      return true;
    case ActivationGrad::Gelu:
      return attrs.gelu_approximate == raw::GeluApproximate::None;
    default:
      return false;
  }
}

// gg d(g f'(s))/ds = gg g f''(x), written through the saved value s (the output y for tanh and
// sigmoid, the input x otherwise), as torch's derivatives.yaml gives tanh_backward's and
// sigmoid_backward's derivatives and FunctionsManual gelu's and silu's. Undefined (zero) for the
// piecewise linear activations.
Tensor second_derivative_term(ActivationGrad op, const Tensor& gg, const Tensor& g, const Tensor& s,
                              const UnaryAttrs& attrs) {
  const Tensor ggg = mul(gg, g);
  switch (op) {
    case ActivationGrad::Tanh:  // d/dy g (1 - y^2) = -2 g y
      return mul(ggg, mul(s, -2.0));
    case ActivationGrad::Sigmoid:  // d/dy g y (1 - y) = g (1 - 2 y)
      return mul(ggg, rsub(mul(s, 2.0), 1.0));
    case ActivationGrad::Gelu: {  // f' = Phi(x) + x phi(x), f'' = phi(x) (2 - x^2)
      const Tensor x2 = mul(s, s);
      const Tensor phi = mul(exp(mul(x2, -0.5)), 0.3989422804014327);  // 1 / sqrt(2 pi)
      return mul(ggg, mul(phi, rsub(x2, 2.0)));
    }
    case ActivationGrad::Silu: {  // f' = sig (1 + x (1 - sig)), f'' = sig (1 - sig) (2 + x (1 - 2 sig))
      const Tensor sg = sigmoid(s);
      return mul(ggg, mul(mul(sg, rsub(sg, 1.0)), add(mul(s, rsub(mul(sg, 2.0), 1.0)), 2.0)));
    }
    case ActivationGrad::Softplus: {  // f' = sig(beta x), f'' = beta sig (1 - sig); linear above threshold
      const Tensor z = mul(s, attrs.beta);
      const Tensor sg = sigmoid(z);
      const Tensor f2 = mul(mul(sg, rsub(sg, 1.0)), attrs.beta);
      return mul(ggg, where(raw::binary(raw::BinaryOp::Gt, z, attrs.threshold), 0.0, f2));
    }
    default:
      return Tensor();
  }
}

// activation_grad as a differentiable op of (g, s) when either has history (a backward with
// create_graph): its gradient for g is the activation's gradient again (it is linear in g), for s
// second_derivative_term.
Tensor activation_grad_recorded(ActivationGrad op, const char* name, const Tensor& g, const Tensor& saved,
                                const UnaryAttrs& attrs) {
  if (!autograd::needs_grad(g, saved)) return activation_grad(op, g, saved, attrs);
  Tensor out = raw::activation_backward(op, g, saved, attrs);
  SavedTensor sg(g), ss(saved);
  record_differentiable(std::string(name) + "Backward", {g, saved}, out, {sg, ss},
                        [sg, ss, op, name, attrs](const Grads& gg, const Needs& needs) -> Grads {
                          // d_saved first: d_g may be written over gg (activation_grad's sole owner).
                          Tensor d_g, d_saved;
                          if (needs[1]) d_saved = second_derivative_term(op, gg[0], sg.unpack(), ss.unpack(), attrs);
                          if (needs[0]) d_g = activation_grad_recorded(op, name, gg[0], ss.unpack(), attrs);
                          return {d_g, d_saved};
                        });
  return out;
}

// clamp's gradient, torch 2.15's: g where min < x < max, 0 at the bounds and at NaN, in one pass.
// Two compares and two wheres (nearly all of it the wheres' per-element strided loop, by perf) made
// [4096, 1024]'s forward + backward 32 ms against torch's 23 (op_sweep, 2026-12-07). Under
// create_graph it is an op of g, linear with a mask constant in x: its own gradient is itself.
Tensor clamp_grad(const Tensor& g, const Tensor& x, std::optional<double> min, std::optional<double> max) {
  Tensor out = raw::clamp_backward(g, x, min, max);
  if (autograd::needs_grad(g)) {
    SavedTensor sx(x);
    record_differentiable("ClampBackwardBackward", {g}, out, {sx}, [sx, min, max](const Grads& gg, const Needs&) -> Grads {
      return {clamp_grad(gg[0], sx.unpack(), min, max)};
    });
  }
  return out;
}

// Which forward value an activation's gradient reads (COLONY_FOR_EACH_ACTIVATION's third column).
enum class Saved { Input, Output };

Tensor activation(UnaryOp op, ActivationGrad grad_op, const char* name, Saved saved, const Tensor& x,
                  const UnaryAttrs& attrs) {
  Tensor out = raw::unary(op, x, attrs);
  if (autograd::needs_grad(x)) {
    SavedTensor s = saved == Saved::Output ? SavedTensor(out, /*is_output=*/true) : SavedTensor(x);
    if (has_second_derivative(grad_op, attrs)) {
      record_differentiable(name, {x}, out, {s}, [s, grad_op, name, attrs](const Grads& g, const Needs&) -> Grads {
        return {activation_grad_recorded(grad_op, name, g[0], s.unpack(), attrs)};
      });
    } else {
      record(name, {x}, out, {s}, [s, grad_op, attrs](const Grads& g, const Needs&) -> Grads {
        return {activation_grad(grad_op, g[0], s.unpack(), attrs)};
      });
    }
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
    record_differentiable("NegBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {neg(g[0])}; });
  }
  return out;
}

Tensor abs(const Tensor& t) {
  return unary_with_input(
      UnaryOp::Abs, "AbsBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, sign(x)); }, {},
      Backward::Differentiable);
}

Tensor exp(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::exp, t_arg);
  return unary_with_output(
      UnaryOp::Exp, "ExpBackward", t, [](const Tensor& g, const Tensor& y) { return mul(g, y); },
      Backward::Differentiable);
}

Tensor log(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::log, t_arg);
  return unary_with_input(
      UnaryOp::Log, "LogBackward", t, [](const Tensor& g, const Tensor& x) { return div(g, x); }, {},
      Backward::Differentiable);
}

Tensor sqrt(const Tensor& t) {
  return unary_with_output(
      UnaryOp::Sqrt, "SqrtBackward", t, [](const Tensor& g, const Tensor& y) { return div(g, mul(y, 2.0)); },
      Backward::Differentiable);
}

Tensor rsqrt(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::rsqrt, t_arg);
  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
  return unary_with_output(
      UnaryOp::Rsqrt, "RsqrtBackward", t,
      [](const Tensor& g, const Tensor& y) { return mul(mul(g, pow(y, 3.0)), -0.5); }, Backward::Differentiable);
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
  return unary_with_input(
      UnaryOp::Sin, "SinBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, cos(x)); }, {},
      Backward::Differentiable);
}

Tensor cos(const Tensor& t) {
  return unary_with_input(
      UnaryOp::Cos, "CosBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, neg(sin(x))); }, {},
      Backward::Differentiable);
}

Tensor log1p(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::log1p, t_arg);
  return unary_with_input(
      UnaryOp::Log1p, "Log1pBackward", t, [](const Tensor& g, const Tensor& x) { return div(g, add(x, 1.0)); }, {},
      Backward::Differentiable);
}

Tensor expm1(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::expm1, t_arg);
  return unary_with_output(
      UnaryOp::Expm1, "Expm1Backward", t, [](const Tensor& g, const Tensor& y) { return mul(g, add(y, 1.0)); },
      Backward::Differentiable);
}

Tensor square(const Tensor& t) {
  return unary_with_input(
      UnaryOp::Square, "SquareBackward", t, [](const Tensor& g, const Tensor& x) { return mul(g, mul(x, 2.0)); },
      {}, Backward::Differentiable);
}

Tensor reciprocal(const Tensor& t_arg) {
  const Tensor t = autocast::cast(autocast::Op::reciprocal, t_arg);
  // d/dx 1/x = -1/x^2 = -y^2
  return unary_with_output(
      UnaryOp::Reciprocal, "ReciprocalBackward", t,
      [](const Tensor& g, const Tensor& y) { return neg(mul(g, mul(y, y))); }, Backward::Differentiable);
}

Tensor erf(const Tensor& t) {
  // d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
  return unary_with_input(
      UnaryOp::Erf, "ErfBackward", t,
      [](const Tensor& g, const Tensor& x) { return mul(g, mul(exp(neg(mul(x, x))), 1.1283791670955126)); }, {},
      Backward::Differentiable);
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
    record_differentiable("RoundBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {raw::zeros_like(g[0])}; });
  }
  return out;
}

Tensor clamp(const Tensor& t, std::optional<double> min, std::optional<double> max) {
  Tensor out = raw::clamp(t, min, max);
  if (autograd::needs_grad(t)) {
    SavedTensor sx(t);
    record_differentiable("ClampBackward", {t}, out, {sx}, [sx, min, max](const Grads& g, const Needs&) -> Grads {
      return {clamp_grad(g[0], sx.unpack(), min, max)};
    });
  }
  return out;
}

}  // namespace colony
