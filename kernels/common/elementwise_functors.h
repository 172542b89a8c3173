// The elementwise math, written once over the compute type C (compute_t<T>: float for float16 and
// bfloat16, the type itself otherwise) and shared by the CPU loops and the CUDA kernels, so the CPU
// tests check the arithmetic the GPU runs. PyTorch is the reference for every formula and corner
// case (NaN propagation, ties in round, integer pow).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/dtype.h"
#include "kernels/common/macros.h"
#include "kernels/common/scalar_math.h"

namespace colony::kernels {

// Each op family is declared once, by the lists below: the enums, the names in errors, and the
// CPU and CUDA dispatch switches are all expanded from them (colony::raw uses these enums too), so
// an op added to a list and given its math below runs on both devices.
//
// Unary and binary ops, with the dtypes each accepts (a COLONY_DISPATCH_* macro of dispatch.h) and
// its name: X(Op, DISPATCH, "name").
#define COLONY_FOR_EACH_UNARY_OP(X)                     \
  X(Neg, COLONY_DISPATCH_NUMERIC, "neg")                \
  X(Abs, COLONY_DISPATCH_NUMERIC, "abs")                \
  X(Exp, COLONY_DISPATCH_FLOATING, "exp")               \
  X(Log, COLONY_DISPATCH_FLOATING, "log")               \
  X(Sqrt, COLONY_DISPATCH_FLOATING, "sqrt")             \
  X(Rsqrt, COLONY_DISPATCH_FLOATING, "rsqrt")           \
  X(Relu, COLONY_DISPATCH_NUMERIC, "relu")              \
  X(Sigmoid, COLONY_DISPATCH_FLOATING, "sigmoid")       \
  X(Tanh, COLONY_DISPATCH_FLOATING, "tanh")             \
  X(Sign, COLONY_DISPATCH_ALL, "sign")                  \
  X(Square, COLONY_DISPATCH_NUMERIC, "square")          \
  X(Reciprocal, COLONY_DISPATCH_FLOATING, "reciprocal") \
  X(LogicalNot, COLONY_DISPATCH_ALL, "logical_not")     \
  X(BitwiseNot, COLONY_DISPATCH_INTEGRAL, "bitwise_not") \
  X(Sin, COLONY_DISPATCH_FLOATING, "sin")               \
  X(Cos, COLONY_DISPATCH_FLOATING, "cos")               \
  X(Log1p, COLONY_DISPATCH_FLOATING, "log1p")           \
  X(Expm1, COLONY_DISPATCH_FLOATING, "expm1")           \
  X(Floor, COLONY_DISPATCH_FLOATING, "floor")           \
  X(Ceil, COLONY_DISPATCH_FLOATING, "ceil")             \
  X(Round, COLONY_DISPATCH_FLOATING, "round")           \
  X(Gelu, COLONY_DISPATCH_FLOATING, "gelu")             \
  X(Silu, COLONY_DISPATCH_FLOATING, "silu")             \
  X(Erf, COLONY_DISPATCH_FLOATING, "erf")               \
  X(IsNan, COLONY_DISPATCH_ALL, "isnan")                \
  X(IsInf, COLONY_DISPATCH_ALL, "isinf")                \
  X(IsFinite, COLONY_DISPATCH_ALL, "isfinite")        \
  X(LeakyRelu, COLONY_DISPATCH_FLOATING, "leaky_relu") \
  X(Elu, COLONY_DISPATCH_FLOATING, "elu")               \
  X(Softplus, COLONY_DISPATCH_FLOATING, "softplus")     \
  X(Mish, COLONY_DISPATCH_FLOATING, "mish")             \
  X(Hardswish, COLONY_DISPATCH_FLOATING, "hardswish")   \
  X(Hardsigmoid, COLONY_DISPATCH_FLOATING, "hardsigmoid") \
  X(Hardtanh, COLONY_DISPATCH_NUMERIC, "hardtanh")      \
  X(LogSigmoid, COLONY_DISPATCH_FLOATING, "log_sigmoid") \
  X(Tan, COLONY_DISPATCH_FLOATING, "tan")               \
  X(Asin, COLONY_DISPATCH_FLOATING, "asin")             \
  X(Acos, COLONY_DISPATCH_FLOATING, "acos")             \
  X(Atan, COLONY_DISPATCH_FLOATING, "atan")             \
  X(Sinh, COLONY_DISPATCH_FLOATING, "sinh")             \
  X(Cosh, COLONY_DISPATCH_FLOATING, "cosh")             \
  X(Asinh, COLONY_DISPATCH_FLOATING, "asinh")           \
  X(Acosh, COLONY_DISPATCH_FLOATING, "acosh")           \
  X(Atanh, COLONY_DISPATCH_FLOATING, "atanh")           \
  X(Trunc, COLONY_DISPATCH_FLOATING, "trunc")           \
  X(Frac, COLONY_DISPATCH_FLOATING, "frac")             \
  X(Log2, COLONY_DISPATCH_FLOATING, "log2")             \
  X(Log10, COLONY_DISPATCH_FLOATING, "log10")           \
  X(Exp2, COLONY_DISPATCH_FLOATING, "exp2")             \
  X(Erfc, COLONY_DISPATCH_FLOATING, "erfc")             \
  X(Erfinv, COLONY_DISPATCH_FLOATING, "erfinv")         \
  X(Lgamma, COLONY_DISPATCH_FLOATING, "lgamma")         \
  X(Digamma, COLONY_DISPATCH_FLOATING, "digamma")       \
  X(Trigamma, COLONY_DISPATCH_FLOATING, "trigamma")     \
  X(Polygamma, COLONY_DISPATCH_FLOATING, "polygamma")   \
  X(Logit, COLONY_DISPATCH_FLOATING, "logit")           \
  X(Sinc, COLONY_DISPATCH_FLOATING, "sinc")             \
  X(Hardshrink, COLONY_DISPATCH_FLOATING, "hardshrink") \
  X(Softshrink, COLONY_DISPATCH_FLOATING, "softshrink") \
  X(Threshold, COLONY_DISPATCH_NUMERIC, "threshold")    \
  X(I0, COLONY_DISPATCH_FLOATING, "i0")                 \
  X(I1, COLONY_DISPATCH_FLOATING, "special_i1")       \
  X(FrexpMantissa, COLONY_DISPATCH_FLOATING, "frexp") \
  X(FrexpExponent, COLONY_DISPATCH_FLOATING, "frexp")

#define COLONY_FOR_EACH_BINARY_OP(X)         \
  X(Add, COLONY_DISPATCH_ALL, "add")         \
  X(Sub, COLONY_DISPATCH_NUMERIC, "sub")     \
  X(Mul, COLONY_DISPATCH_ALL, "mul")         \
  X(Div, COLONY_DISPATCH_FLOATING, "div")    \
  X(Pow, COLONY_DISPATCH_ALL, "pow")         \
  X(Maximum, COLONY_DISPATCH_ALL, "maximum") \
  X(Minimum, COLONY_DISPATCH_ALL, "minimum") \
  X(BitwiseAnd, COLONY_DISPATCH_INTEGRAL, "bitwise_and") \
  X(BitwiseOr, COLONY_DISPATCH_INTEGRAL, "bitwise_or")   \
  X(BitwiseXor, COLONY_DISPATCH_INTEGRAL, "bitwise_xor") \
  X(Atan2, COLONY_DISPATCH_FLOATING, "atan2") \
  X(Fmod, COLONY_DISPATCH_NUMERIC, "fmod")   \
  X(Remainder, COLONY_DISPATCH_NUMERIC, "remainder") \
  X(FloorDivide, COLONY_DISPATCH_NUMERIC, "floor_divide") \
  X(Hypot, COLONY_DISPATCH_FLOATING, "hypot") \
  X(Copysign, COLONY_DISPATCH_FLOATING, "copysign") \
  X(Xlogy, COLONY_DISPATCH_FLOATING, "xlogy") \
  X(LogAddExp, COLONY_DISPATCH_FLOATING, "logaddexp") \
  X(LogAddExp2, COLONY_DISPATCH_FLOATING, "logaddexp2") \
  X(Fmax, COLONY_DISPATCH_ALL, "fmax")       \
  X(Fmin, COLONY_DISPATCH_ALL, "fmin")       \
  X(Gcd, COLONY_DISPATCH_INTEGRAL, "gcd")    \
  X(Lcm, COLONY_DISPATCH_INTEGRAL, "lcm")    \
  X(NextAfter, COLONY_DISPATCH_FLOATING, "nextafter") \
  X(BitwiseLeftShift, COLONY_DISPATCH_INTEGRAL, "bitwise_left_shift") \
  X(BitwiseRightShift, COLONY_DISPATCH_INTEGRAL, "bitwise_right_shift") \
  X(Eq, COLONY_DISPATCH_ALL, "eq")           \
  X(Ne, COLONY_DISPATCH_ALL, "ne")           \
  X(Lt, COLONY_DISPATCH_ALL, "lt")           \
  X(Le, COLONY_DISPATCH_ALL, "le")           \
  X(Gt, COLONY_DISPATCH_ALL, "gt")           \
  X(Ge, COLONY_DISPATCH_ALL, "ge")           \
  X(LogicalAnd, COLONY_DISPATCH_ALL, "logical_and") \
  X(LogicalOr, COLONY_DISPATCH_ALL, "logical_or")   \
  X(LogicalXor, COLONY_DISPATCH_ALL, "logical_xor")

// The activations: unary ops whose gradient is activation_grad_fn of the incoming gradient and one
// saved tensor, the input x (Input) or the output y (Output): X(Op, name, Input|Output). Each is also
// in the unary list (its forward); autograd/ops.h declares colony::name(x, attrs) for each, and
// autograd/unary.cc defines it, so an activation needs no code outside this file but its nn front.
// The saved value is the one torch's derivatives.yaml names for the op (elu's `self`, not its
// result: elu_ alone reads the result). SELU and CELU are Elu with other attributes and ReLU6 is
// Hardtanh(0, 6), as torch composes them. Hardshrink and Softshrink share ATen's shrink_backward.
#define COLONY_FOR_EACH_ACTIVATION(X)   \
  X(Relu, relu, Output)                 \
  X(Sigmoid, sigmoid, Output)           \
  X(Tanh, tanh, Output)                 \
  X(Gelu, gelu, Input)                  \
  X(Silu, silu, Input)                  \
  X(LeakyRelu, leaky_relu, Input)       \
  X(Elu, elu, Input)                    \
  X(Softplus, softplus, Input)          \
  X(Mish, mish, Input)                  \
  X(Hardswish, hardswish, Input)        \
  X(Hardsigmoid, hardsigmoid, Input)    \
  X(Hardtanh, hardtanh, Input)          \
  X(LogSigmoid, log_sigmoid, Input)     \
  X(Hardshrink, hardshrink, Input)      \
  X(Softshrink, softshrink, Input)      \
  X(Threshold, threshold, Input)

#define COLONY_ENUMERATOR(Op, ...) Op,
enum class UnaryOp : uint8_t { COLONY_FOR_EACH_UNARY_OP(COLONY_ENUMERATOR) };
enum class BinaryOp : uint8_t { COLONY_FOR_EACH_BINARY_OP(COLONY_ENUMERATOR) };
enum class ActivationGrad : uint8_t { COLONY_FOR_EACH_ACTIVATION(COLONY_ENUMERATOR) };
#undef COLONY_ENUMERATOR

#define COLONY_NAME_CASE(Op, DISPATCH, NAME) \
  case E::Op:                                \
    return NAME;
constexpr const char* op_name(UnaryOp op) {
  using E = UnaryOp;
  switch (op) { COLONY_FOR_EACH_UNARY_OP(COLONY_NAME_CASE) }
  return "unary";
}
constexpr const char* op_name(BinaryOp op) {
  using E = BinaryOp;
  switch (op) { COLONY_FOR_EACH_BINARY_OP(COLONY_NAME_CASE) }
  return "binary";
}
#undef COLONY_NAME_CASE
// "relu_backward", ...
constexpr const char* op_name(ActivationGrad op) {
#define COLONY_NAME_CASE(Op, name, saved) \
  case ActivationGrad::Op:                \
    return #name "_backward";
  switch (op) { COLONY_FOR_EACH_ACTIVATION(COLONY_NAME_CASE) }
#undef COLONY_NAME_CASE
  return "activation_backward";
}

// torch.nn.functional.gelu's `approximate`: "none" (the exact erf form) or "tanh".
enum class GeluApproximate : uint8_t { None, Tanh };

// SELU's constants (torch.nn.functional.selu; Klambauer et al. 2017), as ATen spells them.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// The attributes of the unary ops that take some, with PyTorch's defaults. They travel by value into
// both devices' kernels; an op reads only its own fields, converted to its compute type as ATen's
// kernels convert their Scalars (so float32 multiplies by float(0.01), not by the double).
struct UnaryAttrs {
  GeluApproximate gelu_approximate = GeluApproximate::None;  // Gelu
  double negative_slope = 0.01;                              // LeakyRelu
  // Elu: x > 0 ? scale x : alpha scale (exp(input_scale x) - 1), torch.elu's three Scalars; SELU is
  // (kSeluAlpha, kSeluScale, 1), CELU (alpha, 1, 1 / alpha).
  double alpha = 1.0, scale = 1.0, input_scale = 1.0;
  double beta = 1.0, threshold = 20.0;    // Softplus; Threshold's threshold too (F::threshold sets it)
  double value = 0.0;                     // Threshold: x <= threshold ? value : x
  double lambd = 0.5;                     // Hardshrink, Softshrink
  double min_val = -1.0, max_val = 1.0;   // Hardtanh (ReLU6: 0, 6)
  // Logit: torch.logit's eps; the input is clamped to [eps, 1 - eps] first. Negative means None (no
  // clamping), which is what torch does with a negative eps too.
  double logit_eps = -1.0;
  int polygamma_n = 0;  // Polygamma: the derivative's order, n >= 0
};

constexpr bool outputs_bool(UnaryOp op) {
  return op == UnaryOp::LogicalNot || op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite;
}

// Floating-point unary ops compute integral and bool inputs in float32, as torch.exp(int_tensor)
// does (colony::raw::unary), except these, which PyTorch refuses such inputs for (it has no
// integral kernels for them): an op added to the unary list joins here when PyTorch refuses too.
// (Hardtanh is torch.clamp on integers, as in PyTorch.)
constexpr bool refuses_integral_input(UnaryOp op) {
  return op == UnaryOp::Gelu || op == UnaryOp::Silu || op == UnaryOp::LeakyRelu || op == UnaryOp::Elu ||
         op == UnaryOp::Softplus || op == UnaryOp::Mish || op == UnaryOp::Hardswish || op == UnaryOp::Hardsigmoid ||
         op == UnaryOp::LogSigmoid || op == UnaryOp::Frac || op == UnaryOp::Hardshrink || op == UnaryOp::Softshrink ||
         op == UnaryOp::FrexpMantissa || op == UnaryOp::FrexpExponent;
}
// The comparisons and the logical ops, listed last: their results are bool whatever the inputs.
constexpr bool outputs_bool(BinaryOp op) { return op >= BinaryOp::Eq; }
constexpr bool is_bitwise(BinaryOp op) {
  return op == BinaryOp::BitwiseAnd || op == BinaryOp::BitwiseOr || op == BinaryOp::BitwiseXor;
}
// Floating-point binary ops that compute integral and bool operands in float32, as torch.div and
// torch.atan2 do (colony::raw::binary); the other floating ones refuse integers, as PyTorch has no
// integral kernel for them (torch.hypot(int, int) raises "hypot_cpu" not implemented for 'Long').
constexpr bool promotes_integral_to_float(BinaryOp op) {
  return op == BinaryOp::Div || op == BinaryOp::Atan2 || op == BinaryOp::Copysign || op == BinaryOp::Xlogy;
}
constexpr bool refuses_integral_input(BinaryOp op) {
  return op == BinaryOp::Hypot || op == BinaryOp::LogAddExp || op == BinaryOp::LogAddExp2 || op == BinaryOp::NextAfter;
}
// The shifts: integer dtypes only (bool and floating refused by the front end, as PyTorch has no
// kernel for them).
constexpr bool shifts_bits(BinaryOp op) { return op == BinaryOp::BitwiseLeftShift || op == BinaryOp::BitwiseRightShift; }
// gcd and lcm: integer dtypes only (bool and floating refused by the front end, as PyTorch has no
// kernel for them).
constexpr bool integers_only(BinaryOp op) { return op == BinaryOp::Gcd || op == BinaryOp::Lcm; }
// The division family, integer-aware: on integers they divide integers (no bool kernel, as in
// PyTorch), and a zero divisor is an error the CPU front end raises before the kernel runs.
constexpr bool divides_integers(BinaryOp op) {
  return op == BinaryOp::Fmod || op == BinaryOp::Remainder || op == BinaryOp::FloorDivide;
}

// The stored type of an op's result for input type T.
template <UnaryOp Op, typename T>
using unary_out_t = std::conditional_t<outputs_bool(Op), bool, T>;
template <BinaryOp Op, typename T>
using binary_out_t = std::conditional_t<outputs_bool(Op), bool, T>;

template <typename C>
COLONY_INLINE bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return x != x;
  } else {
    return false;
  }
}

// x - x is 0 for every finite x and NaN for +-inf and NaN (integers are always finite).
template <typename C>
COLONY_INLINE bool is_finite(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return x - x == C(0);
  } else {
    return true;
  }
}

template <typename C>
COLONY_INLINE bool is_inf(C x) {
  return !is_nan(x) && !is_finite(x);
}

// Never evaluates exp of a positive number, so neither branch overflows for large |x|.
template <typename C>
COLONY_INLINE C sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + math::exp(-x));
  C e = math::exp(x);
  return e / (C(1) + e);
}

// Integer power by squaring in uint64 (wraps like the narrower type's multiplication would).
// Negative exponents give 1 / base^e truncated toward zero: 1 for base 1, +-1 for base -1, else 0.
template <typename C>
COLONY_INLINE C int_pow(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) {
      if (base == 1) return C(1);
      if (base == -1) return (exponent % 2 == 0) ? C(1) : C(-1);
      return C(0);
    }
  }
  uint64_t b = static_cast<uint64_t>(static_cast<int64_t>(base));
  uint64_t e = static_cast<uint64_t>(static_cast<int64_t>(exponent));
  uint64_t r = 1;
  while (e != 0) {
    if (e & 1u) r *= b;
    b *= b;
    e >>= 1;
  }
  if constexpr (std::is_same_v<C, bool>) {
    return r != 0;
  } else {
    return static_cast<C>(r);
  }
}

// GELU's constants, as PyTorch's kernels spell them: 1/sqrt(2), sqrt(2/pi), 1/sqrt(2 pi), and the
// cubic coefficient of the tanh form (Hendrycks and Gimpel 2016).
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrtTwoOverPi = 0.79788456080286535588;
constexpr double kInvSqrtTwoPi = 0.39894228040143267794;
constexpr double kGeluCubic = 0.044715;

template <typename C>
COLONY_INLINE C gelu(C x, GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    C inner = C(kSqrtTwoOverPi) * (x + C(kGeluCubic) * x * x * x);
    return C(0.5) * x * (C(1) + math::tanh(inner));
  }
  return C(0.5) * x * (C(1) + math::erf(x * C(kSqrtHalf)));
}

// d gelu / dx, PyTorch's GeluBackward: cdf + x * pdf (exact), or the product rule over the tanh form.
template <typename C>
COLONY_INLINE C gelu_derivative(C x, GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    C x_sq = x * x;
    C tanh_inner = math::tanh(C(kSqrtTwoOverPi) * (x + C(kGeluCubic) * x_sq * x));
    C left = C(0.5) * x, right = C(1) + tanh_inner;
    C right_derivative = left * (C(1) - tanh_inner * tanh_inner) * C(kSqrtTwoOverPi) * (C(1) + C(3 * kGeluCubic) * x_sq);
    return C(0.5) * right + right_derivative;
  }
  C cdf = C(0.5) * (C(1) + math::erf(x * C(kSqrtHalf)));
  C pdf = C(kInvSqrtTwoPi) * math::exp(C(-0.5) * x * x);
  return cdf + x * pdf;
}

// torch.clamp: min(max(x, lo), hi) with NaN propagated from x or from a bound; lo > hi gives hi.
template <typename C>
COLONY_INLINE C clamp_fn(C x, bool has_lo, C lo, bool has_hi, C hi) {
  if (has_lo && (x < lo || is_nan(lo))) x = lo;
  if (has_hi && (x > hi || is_nan(hi))) x = hi;
  return x;
}

// clamp's gradient, torch 2.15's clamp_backward for scalar bounds: grad where lo < x < hi (for each
// bound given), 0 at the bounds themselves (the minimum-norm subgradient, hardtanh's too), beyond
// them and at NaN, for which no comparison holds (a NaN bound too). Bitwise & and |, not && and ||:
// no branch on the data, so the CPU loop vectorizes.
template <typename C>
COLONY_INLINE C clamp_grad_fn(C grad, C x, bool has_lo, C lo, bool has_hi, C hi) {
  const bool inside = (!has_lo | (x > lo)) & (!has_hi | (x < hi));
  return inside ? grad : C(0);
}

// min(max(x + 3, 0), 6), NaN kept (neither comparison holds for it), as std::min/std::max in
// ATen's hardswish and hardsigmoid kernels keep it.
template <typename C>
COLONY_INLINE C relu6_of_x_plus_3(C x) {
  C r = x + C(3);
  r = r < C(0) ? C(0) : r;
  return r > C(6) ? C(6) : r;
}

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): exp never sees a positive argument, so no overflow
// for large |x| (ATen's log_sigmoid kernel). min(x, 0) is std::min's (0 < x ? 0 : x), NaN kept.
template <typename C>
COLONY_INLINE C log_sigmoid(C x) {
  C lower = C(0) < x ? C(0) : x;
  return lower - math::log1p(math::exp(-math::abs(x)));
}

// torch.logit: log(x / (1 - x)) of x clamped to [eps, 1 - eps] when eps >= 0 (ATen's logit kernel,
// its comparisons too: NaN is not clamped); logit(1) = inf, logit(0) = -inf, NaN outside [0, 1].
template <typename C>
COLONY_INLINE C logit(C x, double eps) {
  if (eps >= 0) {
    const C lo = C(eps), hi = C(1) - C(eps);
    x = x < lo ? lo : (x > hi ? hi : x);
  }
  return x == C(1) ? C(INFINITY) : math::log(x / (C(1) - x));
}

// sin(pi x) / (pi x), 1 at 0 (torch.sinc); the product in the compute type, as ATen's opmath.
template <typename C>
COLONY_INLINE C sinc(C x) {
  if (x == C(0)) return C(1);
  const C product = C(math::kPi) * x;
  return math::sin(product) / product;
}

template <UnaryOp Op, typename C>
COLONY_INLINE auto unary_fn(C x, const UnaryAttrs& attrs = {}) {
  constexpr bool kFloat = std::is_floating_point_v<C>;
  if constexpr (Op == UnaryOp::Neg) {
    return static_cast<C>(-x);
  } else if constexpr (Op == UnaryOp::Abs) {
    if constexpr (kFloat) {
      return math::abs(x);
    } else if constexpr (std::is_signed_v<C>) {
      return static_cast<C>(x < 0 ? -x : x);
    } else {
      return x;
    }
  } else if constexpr (Op == UnaryOp::Exp) {
    return math::exp(x);
  } else if constexpr (Op == UnaryOp::Log) {
    return math::log(x);
  } else if constexpr (Op == UnaryOp::Sqrt) {
    return math::sqrt(x);
  } else if constexpr (Op == UnaryOp::Rsqrt) {
    return C(1) / math::sqrt(x);
  } else if constexpr (Op == UnaryOp::Relu) {
    // NaN passes through, as torch.relu (clamp_min) propagates it: NaN <= 0 is false. One
    // comparison and a select, which the compiler turns into vector code (a branch per element
    // mispredicts half the time on activations whose signs look random).
    return x <= C(0) ? C(0) : x;
  } else if constexpr (Op == UnaryOp::Sigmoid) {
    return sigmoid(x);
  } else if constexpr (Op == UnaryOp::Tanh) {
    return math::tanh(x);
  } else if constexpr (Op == UnaryOp::Sign) {
    // (0 < x) - (x < 0), so sign(NaN) = 0 as in PyTorch.
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else if constexpr (std::is_unsigned_v<C>) {
      return static_cast<C>(x != 0);
    } else {
      return static_cast<C>(static_cast<int>(C(0) < x) - static_cast<int>(x < C(0)));
    }
  } else if constexpr (Op == UnaryOp::Square) {
    return static_cast<C>(x * x);
  } else if constexpr (Op == UnaryOp::Reciprocal) {
    return C(1) / x;
  } else if constexpr (Op == UnaryOp::LogicalNot) {
    return x == C(0);
  } else if constexpr (Op == UnaryOp::BitwiseNot) {
    if constexpr (std::is_same_v<C, bool>) {
      return !x;  // ~True is False, as torch's ~ on a bool mask
    } else if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(~x);
    } else {
      return x;  // never dispatched: COLONY_DISPATCH_INTEGRAL has no floating type
    }
  } else if constexpr (Op == UnaryOp::IsNan) {
    return is_nan(x);
  } else if constexpr (Op == UnaryOp::IsInf) {
    return is_inf(x);
  } else if constexpr (Op == UnaryOp::IsFinite) {
    return is_finite(x);
  } else if constexpr (Op == UnaryOp::Sin) {
    return math::sin(x);
  } else if constexpr (Op == UnaryOp::Cos) {
    return math::cos(x);
  } else if constexpr (Op == UnaryOp::Log1p) {
    return math::log1p(x);
  } else if constexpr (Op == UnaryOp::Expm1) {
    return math::expm1(x);
  } else if constexpr (Op == UnaryOp::Floor) {
    return math::floor(x);
  } else if constexpr (Op == UnaryOp::Ceil) {
    return math::ceil(x);
  } else if constexpr (Op == UnaryOp::Round) {
    return math::rint(x);  // ties to even: round(2.5) = 2, round(-0.5) = -0
  } else if constexpr (Op == UnaryOp::Gelu) {
    return gelu(x, attrs.gelu_approximate);
  } else if constexpr (Op == UnaryOp::Erf) {
    return math::erf(x);
  } else if constexpr (Op == UnaryOp::LeakyRelu) {
    return x > C(0) ? x : x * C(attrs.negative_slope);  // NaN takes the second branch and stays NaN
  } else if constexpr (Op == UnaryOp::Elu) {
    // x <= 0, not x < 0, selects the exponential side (ATen's elu_kernel), with expm1 as ATen's (exact
    // near 0: elu(-1e-10) = -9.9999999995e-11, where exp(x) - 1 gives -1.00000008e-10).
    return x <= C(0) ? math::expm1(x * C(attrs.input_scale)) * (C(attrs.alpha) * C(attrs.scale)) : x * C(attrs.scale);
  } else if constexpr (Op == UnaryOp::Softplus) {
    // Above the threshold (on beta x, strictly) softplus is x itself to within rounding, and exp(beta x)
    // would overflow: ATen returns x there. softplus(20) with the defaults is still the log form.
    C bx = x * C(attrs.beta);
    return bx > C(attrs.threshold) ? x : math::log1p(math::exp(bx)) / C(attrs.beta);
  } else if constexpr (Op == UnaryOp::Mish) {
    // x tanh(softplus(x)) without a threshold, as ATen: mish(-inf) = -inf * 0 = NaN there too.
    return x * math::tanh(math::log1p(math::exp(x)));
  } else if constexpr (Op == UnaryOp::Hardswish) {
    return x * relu6_of_x_plus_3(x) / C(6);  // hardswish(-3) = -0, hardswish(-inf) = NaN, as ATen
  } else if constexpr (Op == UnaryOp::Hardsigmoid) {
    return relu6_of_x_plus_3(x) / C(6);
  } else if constexpr (Op == UnaryOp::Hardtanh) {
    // torch.hardtanh is torch.clamp (NaN kept). On integers the comparisons are made in double and
    // a clamped value truncated (hardtanh([-5, 5], -1.5, 2.5) = [-1, 2], as torch).
    if constexpr (kFloat) {
      return clamp_fn<C>(x, true, C(attrs.min_val), true, C(attrs.max_val));
    } else {
      if (static_cast<double>(x) < attrs.min_val) return static_cast<C>(attrs.min_val);
      return static_cast<double>(x) > attrs.max_val ? static_cast<C>(attrs.max_val) : x;
    }
  } else if constexpr (Op == UnaryOp::LogSigmoid) {
    return log_sigmoid(x);
  } else if constexpr (Op == UnaryOp::Tan) {
    return math::tan(x);
  } else if constexpr (Op == UnaryOp::Asin) {
    return math::asin(x);  // NaN outside [-1, 1]
  } else if constexpr (Op == UnaryOp::Acos) {
    return math::acos(x);
  } else if constexpr (Op == UnaryOp::Atan) {
    return math::atan(x);  // +-pi/2 at +-inf
  } else if constexpr (Op == UnaryOp::Sinh) {
    return math::sinh(x);
  } else if constexpr (Op == UnaryOp::Cosh) {
    return math::cosh(x);
  } else if constexpr (Op == UnaryOp::Asinh) {
    return math::asinh(x);
  } else if constexpr (Op == UnaryOp::Acosh) {
    return math::acosh(x);  // 0 at 1, NaN below 1
  } else if constexpr (Op == UnaryOp::Atanh) {
    return math::atanh(x);  // +-inf at +-1, NaN beyond
  } else if constexpr (Op == UnaryOp::Trunc) {
    return math::trunc(x);  // toward zero: trunc(-0.5) = -0 (the front end copies integers)
  } else if constexpr (Op == UnaryOp::Frac) {
    return x - math::trunc(x);  // ATen's form: the sign of x, frac(-1.5) = -0.5; frac(+-inf) = NaN
  } else if constexpr (Op == UnaryOp::Log2) {
    return math::log2(x);
  } else if constexpr (Op == UnaryOp::Log10) {
    return math::log10(x);
  } else if constexpr (Op == UnaryOp::Exp2) {
    return math::exp2(x);
  } else if constexpr (Op == UnaryOp::Erfc) {
    return math::erfc(x);  // not 1 - erf(x): keeps its precision in the tail, erfc(10) = 2.1e-45
  } else if constexpr (Op == UnaryOp::Erfinv) {
    return math::erfinv(x);
  } else if constexpr (Op == UnaryOp::Lgamma) {
    return math::lgamma(x);  // log|Gamma|: inf at 0 and at the negative integers
  } else if constexpr (Op == UnaryOp::Digamma) {
    return math::digamma(x);
  } else if constexpr (Op == UnaryOp::Trigamma) {
    return math::trigamma(x);
  } else if constexpr (Op == UnaryOp::Polygamma) {
    return math::polygamma(attrs.polygamma_n, x);
  } else if constexpr (Op == UnaryOp::Logit) {
    return logit(x, attrs.logit_eps);
  } else if constexpr (Op == UnaryOp::Sinc) {
    return sinc(x);
  } else if constexpr (Op == UnaryOp::Hardshrink) {
    // 0 on [-lambd, lambd] (bounds included), x outside and at NaN: ATen's hardshrink kernel.
    return (x >= C(-attrs.lambd) && x <= C(attrs.lambd)) ? C(0) : x;
  } else if constexpr (Op == UnaryOp::Softshrink) {
    // x moved toward 0 by lambd, +0 inside and NaN kept: ATen's vectorized softshrink, which is what
    // torch gives but in a tensor's last few elements (its scalar tail gives x * 0 there, -0 for a
    // negative x).
    const C lambd = C(attrs.lambd);
    if (is_nan(x)) return x;
    return x > lambd ? x - lambd : (x < -lambd ? x + lambd : C(0));
  } else if constexpr (Op == UnaryOp::Threshold) {
    // torch.threshold: the value at and below the threshold, x above (and at NaN). On integers both
    // Scalars are converted to the type first (truncated), as ATen's threshold kernel converts them.
    return x <= static_cast<C>(attrs.threshold) ? static_cast<C>(attrs.value) : x;
  } else if constexpr (Op == UnaryOp::I0) {
    return math::bessel_i0(x);  // even, 1 at 0, inf beyond about 713 (double) or 89 (float)
  } else if constexpr (Op == UnaryOp::I1) {
    return math::bessel_i1(x);  // odd, 0 at 0; i0's derivative
  } else if constexpr (Op == UnaryOp::FrexpMantissa || Op == UnaryOp::FrexpExponent) {
    // torch.frexp: x = mantissa 2^exponent, |mantissa| in [0.5, 1); 0, +-inf and NaN are their own
    // mantissa with exponent 0. The exponent is computed in x's type (exact: at most 1074 in
    // magnitude) and made int32 by the front end.
    int e = 0;
    const C m = (x == x && x - x == C(0)) ? math::frexp(x, &e) : x;
    if constexpr (Op == UnaryOp::FrexpMantissa) {
      return m;
    } else {
      return static_cast<C>(x == x && x - x == C(0) ? e : 0);
    }
  } else {
    static_assert(Op == UnaryOp::Silu, "unhandled UnaryOp");
    return x / (C(1) + math::exp(-x));  // PyTorch's form: -0 (not a denormal) below about -88 in float
  }
}

// v < 0, spelt so that unsigned types compile without a pointless comparison (nvcc warns).
template <typename C>
COLONY_INLINE bool is_negative(C v) {
  if constexpr (std::is_unsigned_v<C>) {
    return false;
  } else {
    return v < C(0);
  }
}

// -a in two's complement, without the signed overflow of -INT_MIN (which wraps to INT_MIN).
template <typename C>
COLONY_INLINE C wrapping_neg(C a) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(U(0) - static_cast<U>(a));
}

// Python's a // b (c10::div_floor_floating and div_floor_integer). On floats it is (a - fmod(a, b))
// / b corrected to the floor, not floor(a / b), so that a == (a // b) * b + a % b holds despite the
// rounding of a / b: 1 // 0.1 = 9, as in Python and torch. A zero divisor gives a / b (+-inf, NaN).
// On integers: the truncated quotient less one where the signs differ and the division is inexact.
// INT_MIN // -1 overflows (a hardware trap on x86): it wraps to INT_MIN, as torch gives. An integer
// zero divisor never reaches the CPU kernel (the front end raises); the GPU gets 0, as ATen's.
template <typename C>
COLONY_INLINE C floor_divide(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (b == C(0)) return a / b;
    const C mod = math::fmod(a, b);
    C div = (a - mod) / b;
    if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);
    if (div == C(0)) return math::copysign(C(0), a / b);
    C floordiv = math::floor(div);
    if (div - floordiv > C(0.5)) floordiv += C(1);
    return floordiv;
  } else {
    if (b == C(0)) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) return wrapping_neg(a);
    }
    const C quot = static_cast<C>(a / b), rem = static_cast<C>(a % b);
    return (rem != C(0) && is_negative(rem) != is_negative(b)) ? static_cast<C>(quot - 1) : quot;
  }
}

// a - trunc(a / b) * b, the sign of the dividend (C's fmod; torch.fmod). Integers: a % b, with the
// zero divisor and INT_MIN % -1 (a trap on x86) guarded as in floor_divide.
template <typename C>
COLONY_INLINE C fmod_fn(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    return math::fmod(a, b);  // NaN for a zero divisor or an infinite dividend; a for an infinite divisor
  } else {
    if (b == C(0)) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) return C(0);
    }
    return static_cast<C>(a % b);
  }
}

// Python's a % b, the sign of the divisor (torch.remainder): fmod moved by b where the signs differ.
// A zero keeps fmod's sign, the dividend's (remainder(4, -2) = 0, remainder(-0, 2) = -0), as torch's
// CPU kernel gives (c10::div_mod would give b's); remainder(5, inf) = 5, remainder(-5, inf) = inf.
template <typename C>
COLONY_INLINE C remainder_fn(C a, C b) {
  const C mod = fmod_fn(a, b);
  return (mod != C(0) && is_negative(b) != is_negative(mod)) ? static_cast<C>(mod + b) : mod;
}

// x log y, 0 where x == 0 (y = 0 included), but NaN where y is NaN whatever x (ATen's xlogy).
template <typename C>
COLONY_INLINE C xlogy(C x, C y) {
  if (is_nan(y)) return y;
  if (x == C(0)) return C(0);
  return x * math::log(y);
}

// log(e^a + e^b) = max + log1p(exp(-|a - b|)) (log2 and exp2 for logaddexp2), never exponentiating a
// positive number; equal infinities return themselves (-inf - -inf would be NaN). ATen's kernels.
template <typename C>
COLONY_INLINE C logaddexp(C a, C b) {
  if (is_inf(a) && a == b) return a;
  const C m = a < b ? b : a;  // std::max's NaN handling; a NaN on either side gives NaN below
  return m + math::log1p(math::exp(-math::abs(a - b)));
}
template <typename C>
COLONY_INLINE C logaddexp2(C a, C b) {
  if (is_inf(a) && a == b) return a;
  const C m = a < b ? b : a;
  return m + math::log1p(math::exp2(-math::abs(a - b))) * C(1.4426950408889634);  // 1 / ln 2
}

// |x| of an integer, wrapping at the most negative value as ATen's ::abs does (gcd(INT64_MIN, 0) is
// INT64_MIN in torch), without the signed overflow: the negation is done unsigned.
template <typename C>
COLONY_INLINE C int_magnitude(C x) {
  if constexpr (std::is_signed_v<C>) {
    using U = std::make_unsigned_t<C>;
    return x < C(0) ? static_cast<C>(U(0) - static_cast<U>(x)) : x;
  } else {
    return x;
  }
}
// ATen's calc_gcd (Euclid on the magnitudes; gcd(0, 0) = 0) and lcm = |a / gcd * b| (0 when gcd is 0).
template <typename C>
COLONY_INLINE C gcd_fn(C a_in, C b_in) {
  C a = int_magnitude(a_in), b = int_magnitude(b_in);
  while (a != C(0)) {
    const C c = a;
    a = static_cast<C>(b % a);
    b = c;
  }
  return b;
}
template <typename C>
COLONY_INLINE C lcm_fn(C a, C b) {
  const C g = gcd_fn(a, b);
  return g == C(0) ? C(0) : int_magnitude(static_cast<C>(a / g * b));
}

// torch.bitwise_left_shift / bitwise_right_shift, as ATen's: a shift by a negative count or by the
// type's width or more gives 0 to the left and the sign fill (0 or -1) to the right; a left shift
// is done on the unsigned type, so a bit shifted into the sign bit makes the value negative.
template <typename C>
COLONY_INLINE C left_shift(C a, C b) {
  constexpr C kWidth = static_cast<C>(sizeof(C) * 8);
  if (is_negative(b) || b >= kWidth) return C(0);
  return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) << b);
}
template <typename C>
COLONY_INLINE C right_shift(C a, C b) {
  constexpr C kLast = static_cast<C>(sizeof(C) * 8 - (std::is_signed_v<C> ? 1 : 0));
  if (is_negative(b) || b >= kLast) return static_cast<C>(a >> kLast);
  return static_cast<C>(a >> b);
}

// `alpha` scales b in Add (torch.add(a, b, alpha=...)); the other ops ignore it.
template <BinaryOp Op, typename C>
COLONY_INLINE auto binary_fn(C a, C b, C alpha) {
  if constexpr (Op == BinaryOp::Add) {
    return static_cast<C>(a + alpha * b);
  } else if constexpr (Op == BinaryOp::Sub) {
    return static_cast<C>(a - b);
  } else if constexpr (Op == BinaryOp::Mul) {
    return static_cast<C>(a * b);
  } else if constexpr (Op == BinaryOp::Div) {
    return static_cast<C>(a / b);  // the front end gives integer operands a float type first
  } else if constexpr (Op == BinaryOp::Pow) {
    if constexpr (std::is_floating_point_v<C>) {
      return math::pow(a, b);
    } else {
      return int_pow(a, b);
    }
  } else if constexpr (Op == BinaryOp::Maximum) {
    return (a > b || is_nan(a)) ? a : b;  // a NaN on either side wins
  } else if constexpr (Op == BinaryOp::Minimum) {
    return (a < b || is_nan(a)) ? a : b;
  } else if constexpr (Op == BinaryOp::BitwiseAnd || Op == BinaryOp::BitwiseOr || Op == BinaryOp::BitwiseXor) {
    if constexpr (std::is_integral_v<C>) {  // bool included: &, |, ^ on masks are the logical ops
      if constexpr (Op == BinaryOp::BitwiseAnd) return static_cast<C>(a & b);
      if constexpr (Op == BinaryOp::BitwiseOr) return static_cast<C>(a | b);
      if constexpr (Op == BinaryOp::BitwiseXor) return static_cast<C>(a ^ b);
    } else {
      return a;  // never dispatched: COLONY_DISPATCH_INTEGRAL has no floating type
    }
  } else if constexpr (Op == BinaryOp::Atan2) {
    return math::atan2(a, b);
  } else if constexpr (Op == BinaryOp::Fmod) {
    return fmod_fn(a, b);
  } else if constexpr (Op == BinaryOp::Remainder) {
    return remainder_fn(a, b);
  } else if constexpr (Op == BinaryOp::FloorDivide) {
    return floor_divide(a, b);
  } else if constexpr (Op == BinaryOp::Hypot) {
    return math::hypot(a, b);  // inf if either is infinite, even against NaN
  } else if constexpr (Op == BinaryOp::Copysign) {
    return math::copysign(a, b);  // the sign bit of b: copysign(1, -0) = -1
  } else if constexpr (Op == BinaryOp::Xlogy) {
    return xlogy(a, b);
  } else if constexpr (Op == BinaryOp::LogAddExp) {
    return logaddexp(a, b);
  } else if constexpr (Op == BinaryOp::LogAddExp2) {
    return logaddexp2(a, b);
  } else if constexpr (Op == BinaryOp::Fmax) {
    return (a >= b || is_nan(b)) ? a : b;  // NaN only if both are; ties (+-0) to a, as torch.fmax
  } else if constexpr (Op == BinaryOp::Fmin) {
    return (a <= b || is_nan(b)) ? a : b;
  } else if constexpr (Op == BinaryOp::Gcd || Op == BinaryOp::Lcm) {
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      return Op == BinaryOp::Gcd ? gcd_fn(a, b) : lcm_fn(a, b);
    } else {
      return a;  // never run: the front end refuses bool, COLONY_DISPATCH_INTEGRAL has no floating type
    }
  } else if constexpr (Op == BinaryOp::NextAfter) {
    if constexpr (std::is_floating_point_v<C>) {
      return math::nextafter(a, b);  // the next value of a's type after a toward b
    } else {
      return a;  // never dispatched: COLONY_DISPATCH_FLOATING has no integral type
    }
  } else if constexpr (Op == BinaryOp::BitwiseLeftShift || Op == BinaryOp::BitwiseRightShift) {
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      return Op == BinaryOp::BitwiseLeftShift ? left_shift(a, b) : right_shift(a, b);
    } else {
      return a;  // never run: the front end refuses bool, COLONY_DISPATCH_INTEGRAL has no floating type
    }
  } else if constexpr (Op == BinaryOp::Eq) {
    return a == b;
  } else if constexpr (Op == BinaryOp::Ne) {
    return a != b;
  } else if constexpr (Op == BinaryOp::Lt) {
    return a < b;
  } else if constexpr (Op == BinaryOp::Le) {
    return a <= b;
  } else if constexpr (Op == BinaryOp::Gt) {
    return a > b;
  } else if constexpr (Op == BinaryOp::Ge) {
    return a >= b;
  } else if constexpr (Op == BinaryOp::LogicalAnd) {
    return a != C(0) && b != C(0);  // NaN is nonzero: true, as torch.logical_and
  } else if constexpr (Op == BinaryOp::LogicalOr) {
    return a != C(0) || b != C(0);
  } else {
    static_assert(Op == BinaryOp::LogicalXor, "unhandled BinaryOp");
    return (a != C(0)) != (b != C(0));
  }
}

// Activation gradients from the saved forward value (COLONY_FOR_EACH_ACTIVATION says which): the
// output y for relu (positive exactly where x is), sigmoid and tanh; the input x for the others.
// Operand order follows PyTorch's kernels so rounding matches: threshold_backward,
// grad * (1 - y) * y, grad * (1 - y * y), GeluBackward, grad * s * (1 + x * (1 - s)), and the
// *_backward kernels of ATen's Activation.cpp for the rest (the comparisons too: they decide the
// gradient at the kinks and at NaN).
template <ActivationGrad Op, typename C>
COLONY_INLINE C activation_grad_fn(C grad, C saved, const UnaryAttrs& attrs = {}) {
  if constexpr (Op == ActivationGrad::Relu) {
    return saved <= C(0) ? C(0) : grad;
  } else if constexpr (Op == ActivationGrad::Sigmoid) {
    return grad * (C(1) - saved) * saved;
  } else if constexpr (Op == ActivationGrad::Tanh) {
    return grad * (C(1) - saved * saved);
  } else if constexpr (Op == ActivationGrad::Gelu) {
    return grad * gelu_derivative(saved, attrs.gelu_approximate);
  } else if constexpr (Op == ActivationGrad::Silu) {
    C s = C(1) / (C(1) + math::exp(-saved));
    return grad * s * (C(1) + saved * (C(1) - s));
  } else if constexpr (Op == ActivationGrad::LeakyRelu) {
    return saved > C(0) ? grad : grad * C(attrs.negative_slope);  // slope at 0 and at NaN
  } else if constexpr (Op == ActivationGrad::Elu) {
    // From the input (elu_backward with is_result = false): at x = 0 the exponential side's slope,
    // alpha scale input_scale (ELU'(0) = alpha, SELU'(0) = 1.7581); at NaN, scale.
    const C negcoef = C(attrs.alpha) * C(attrs.scale), negiptcoef = C(attrs.input_scale);
    return saved <= C(0) ? grad * negiptcoef * negcoef * math::exp(saved * negiptcoef) : grad * C(attrs.scale);
  } else if constexpr (Op == ActivationGrad::Softplus) {
    // 1 above the threshold, as the forward is x there; sigmoid(beta x) = z / (z + 1) below.
    C z = math::exp(saved * C(attrs.beta));
    return saved * C(attrs.beta) > C(attrs.threshold) ? grad : grad * z / (z + C(1));
  } else if constexpr (Op == ActivationGrad::Mish) {
    C s = C(1) / (C(1) + math::exp(-saved));
    C tanh_softplus = math::tanh(math::log1p(math::exp(saved)));
    return grad * (tanh_softplus + saved * s * (C(1) - tanh_softplus * tanh_softplus));
  } else if constexpr (Op == ActivationGrad::Hardswish) {
    // ATen's intervals: 0 up to and including -3, x / 3 + 1/2 inside, 1 from 3 on (and at NaN).
    if (saved <= C(-3)) return C(0);
    return saved < C(3) ? grad * (saved / C(3) + C(0.5)) : grad;
  } else if constexpr (Op == ActivationGrad::Hardsigmoid) {
    // 0 at +-3 themselves and at NaN. ATen multiplies by scalar_t(1.0f / 6.0f), the float32 sixth
    // even in float64 (0.1666666716337204), which is what torch gives and so what this gives.
    return (saved > C(-3) && saved < C(3)) ? grad * C(1.0f / 6.0f) : C(0);
  } else if constexpr (Op == ActivationGrad::Hardtanh) {
    // 0 at the bounds themselves (as clamp's, clamp_grad_fn); NaN passes (clamp's gives 0 there).
    return (saved <= C(attrs.min_val) || saved >= C(attrs.max_val)) ? C(0) : grad;
  } else if constexpr (Op == ActivationGrad::Hardshrink || Op == ActivationGrad::Softshrink) {
    // ATen's shrink_backward, for both: 0 on [-lambd, lambd] (the kinks included), grad outside and at NaN.
    return (saved >= C(-attrs.lambd) && saved <= C(attrs.lambd)) ? C(0) : grad;
  } else if constexpr (Op == ActivationGrad::Threshold) {
    return saved <= C(attrs.threshold) ? C(0) : grad;  // threshold_backward: 0 at the threshold itself
  } else {
    static_assert(Op == ActivationGrad::LogSigmoid, "unhandled ActivationGrad");
    // d/dx [min(x, 0) - log1p(z)], z = exp(-|x|): 1 - z / (1 + z) below 0, -z / (1 + z) from 0 on.
    const bool negative = saved < C(0);
    C z = math::exp(-math::abs(saved));
    return grad * ((negative ? C(1) : C(0)) - (negative ? C(1) : C(-1)) * (z / (C(1) + z)));
  }
}

}  // namespace colony::kernels
