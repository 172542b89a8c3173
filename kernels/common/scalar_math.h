// Float and double overloads of the libm functions the elementwise math uses, callable from host and
// device code alike: the C names resolve to libm on the host and to CUDA's device math on the GPU,
// so a functor written once over compute_t<T> runs at the right precision on both.
#pragma once

#include <math.h>

#include "kernels/common/macros.h"

namespace colony::kernels::math {

#define COLONY_MATH_UNARY(name, float_fn, double_fn)              \
  COLONY_INLINE float name(float x) { return ::float_fn(x); }     \
  COLONY_INLINE double name(double x) { return ::double_fn(x); }

COLONY_MATH_UNARY(abs, fabsf, fabs)
COLONY_MATH_UNARY(exp, expf, exp)
COLONY_MATH_UNARY(log, logf, log)
COLONY_MATH_UNARY(sqrt, sqrtf, sqrt)
COLONY_MATH_UNARY(tanh, tanhf, tanh)
COLONY_MATH_UNARY(erf, erff, erf)
COLONY_MATH_UNARY(sin, sinf, sin)
COLONY_MATH_UNARY(cos, cosf, cos)
COLONY_MATH_UNARY(log1p, log1pf, log1p)
COLONY_MATH_UNARY(expm1, expm1f, expm1)
COLONY_MATH_UNARY(floor, floorf, floor)
COLONY_MATH_UNARY(ceil, ceilf, ceil)
// rint rounds to nearest with ties to even in the default rounding mode, as torch.round does.
COLONY_MATH_UNARY(rint, rintf, rint)
COLONY_MATH_UNARY(trunc, truncf, trunc)
COLONY_MATH_UNARY(tan, tanf, tan)
COLONY_MATH_UNARY(asin, asinf, asin)
COLONY_MATH_UNARY(acos, acosf, acos)
COLONY_MATH_UNARY(atan, atanf, atan)
COLONY_MATH_UNARY(sinh, sinhf, sinh)
COLONY_MATH_UNARY(cosh, coshf, cosh)
COLONY_MATH_UNARY(asinh, asinhf, asinh)
COLONY_MATH_UNARY(acosh, acoshf, acosh)
COLONY_MATH_UNARY(atanh, atanhf, atanh)
COLONY_MATH_UNARY(log2, log2f, log2)
COLONY_MATH_UNARY(log10, log10f, log10)
COLONY_MATH_UNARY(exp2, exp2f, exp2)
COLONY_MATH_UNARY(erfc, erfcf, erfc)

#undef COLONY_MATH_UNARY

#define COLONY_MATH_BINARY(name, float_fn, double_fn)                          \
  COLONY_INLINE float name(float x, float y) { return ::float_fn(x, y); }      \
  COLONY_INLINE double name(double x, double y) { return ::double_fn(x, y); }

COLONY_MATH_BINARY(pow, powf, pow)
COLONY_MATH_BINARY(atan2, atan2f, atan2)
COLONY_MATH_BINARY(fmod, fmodf, fmod)
COLONY_MATH_BINARY(hypot, hypotf, hypot)
COLONY_MATH_BINARY(copysign, copysignf, copysign)

#undef COLONY_MATH_BINARY

// log|Gamma(x)|. On the host lgamma_r, not lgamma: lgamma stores the sign of Gamma(x) in the global
// signgam, a data race between the threads of one elementwise loop; the sign is not needed here.
COLONY_INLINE float lgamma(float x) {
#ifdef __CUDA_ARCH__
  return ::lgammaf(x);
#else
  int sign;
  return ::lgammaf_r(x, &sign);
#endif
}
COLONY_INLINE double lgamma(double x) {
#ifdef __CUDA_ARCH__
  return ::lgamma(x);
#else
  int sign;
  return ::lgamma_r(x, &sign);
#endif
}

// The special functions libm lacks (erfinv) or that PyTorch computes its own way (digamma,
// trigamma), written once over float and double for both devices, after ATen/native/Math.h so
// that results match PyTorch's CPU kernels to rounding.
constexpr double kPi = 3.14159265358979323846;

// The inverse error function: a rational approximation (Giles' central range |y| <= 0.7, the tail
// beyond) refined by two Newton steps, ATen's calc_erfinv. erfinv(+-1) = +-inf, NaN outside [-1, 1].
template <typename C>
COLONY_INLINE C erfinv(C y) {
  const C y_abs = abs(y);
  if (y_abs > C(1)) return C(NAN);
  if (y_abs == C(1)) return copysign(C(INFINITY), y);
  C x;
  if (y_abs <= C(0.7)) {
    const C z = y * y;
    const C num = ((C(-0.140543331) * z + C(0.914624893)) * z + C(-1.645349621)) * z + C(0.886226899);
    const C dem = (((C(0.012229801) * z + C(-0.329097515)) * z + C(1.442710462)) * z + C(-2.118377725)) * z + C(1);
    x = y * num / dem;
  } else {
    const C z = sqrt(-log((C(1) - y_abs) / C(2)));
    const C num = ((C(1.641345311) * z + C(3.429567803)) * z + C(-1.624906493)) * z + C(-1.970840454);
    const C dem = (C(1.637067800) * z + C(3.543889200)) * z + C(1);
    x = copysign(num, y) / dem;
  }
  const C two_over_sqrt_pi = C(2) * C(0.564189583547756286948);  // 2 * c10::frac_1_sqrt_pi
  x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
  x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
  return x;
}

// psi(x) = d/dx log Gamma(x), ATen's calc_digamma (from the Cephes library; 3-clause BSD, Steven
// Moshier): +-inf at +-0 (sign opposite to the zero's), NaN at the negative integers and -inf,
// the reflection psi(x) = psi(1 - x) - pi / tan(pi r) below 0 (r the fractional part of x, for
// accuracy; in double even for float, as ATen), the recurrence up to 10, then the asymptotic series
// (digamma_of_positive: x > 0 or NaN).
template <typename C>
COLONY_INLINE C digamma_of_positive(C x) {
  C result = C(0);
  while (x < C(10)) {
    result -= C(1) / x;
    x += C(1);
  }
  if (x == C(10)) return result + C(2.25175258906672110764);  // psi(10)
  C y = C(0);
  if (x < C(1e17)) {
    const C z = C(1) / (x * x);
    // Horner on Cephes' A[] = {1/12, -691/32760, 1/132, -1/240, 1/252, -1/120, 1/12}
    C p = C(8.33333333333333333333E-2);
    p = p * z + C(-2.10927960927960927961E-2);
    p = p * z + C(7.57575757575757575758E-3);
    p = p * z + C(-4.16666666666666666667E-3);
    p = p * z + C(3.96825396825396825397E-3);
    p = p * z + C(-8.33333333333333333333E-3);
    p = p * z + C(8.33333333333333333333E-2);
    y = z * p;
  }
  return result + log(x) - (C(0.5) / x) - y;
}

template <typename C>
COLONY_INLINE C digamma(C x) {
  if (x == C(0)) return copysign(C(INFINITY), -x);
  if (x < C(0)) {
    if (x == trunc(x)) return C(NAN);
    const double r = static_cast<double>(x) - ::trunc(static_cast<double>(x));
    return digamma_of_positive(C(1) - x) - static_cast<C>(kPi / ::tan(kPi * r));
  }
  return digamma_of_positive(x);  // NaN stays NaN: every comparison on the way is false
}

// psi'(x) = polygamma(1, x), the derivative of digamma, ATen's trigamma: the reflection below 1/2,
// six steps of the recurrence, then the asymptotic series.
template <typename C>
COLONY_INLINE C trigamma(C x) {
  C sign = C(1), result = C(0);
  if (x < C(0.5)) {
    sign = C(-1);
    const C sin_pi_x = sin(C(kPi) * x);
    result -= (C(kPi) * C(kPi)) / (sin_pi_x * sin_pi_x);
    x = C(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += C(1) / (x * x);
    x += C(1);
  }
  const C ixx = C(1) / (x * x);
  result += (C(1) + C(1) / (C(2) * x) + ixx * (C(1. / 6) - ixx * (C(1. / 30) - ixx * C(1. / 42)))) / x;
  return sign * result;
}

}  // namespace colony::kernels::math
