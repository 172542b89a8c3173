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
COLONY_MATH_BINARY(nextafter, nextafterf, nextafter)

#undef COLONY_MATH_BINARY

// x = mantissa * 2^exponent with |mantissa| in [0.5, 1) (C's frexp).
COLONY_INLINE float frexp(float x, int* exponent) { return ::frexpf(x, exponent); }
COLONY_INLINE double frexp(double x, int* exponent) { return ::frexp(x, exponent); }

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

// The Hurwitz zeta function zeta(x, q) = sum over k >= 0 of (q + k)^-x, ATen's zeta (from the
// Cephes library; 3-clause BSD, Steven Moshier): the first terms summed up to q + k > 9 (at least
// nine), then the Euler-Maclaurin tail with the Bernoulli numbers' twelve terms. inf at x = 1 and
// at q a non-positive integer, NaN for x < 1 and for a non-integer x with q <= 0. In double, as
// ATen's CPU accumulates float's too.
COLONY_INLINE double hurwitz_zeta(double x, double q) {
  const double kMachEp = 1.11022302462515654042E-16;
  const double A[12] = {12.0,
                        -720.0,
                        30240.0,
                        -1209600.0,
                        47900160.0,
                        -1.8924375803183791606e9,
                        7.47242496e10,
                        -2.950130727918164224e12,
                        1.1646782814350067249e14,
                        -4.5979787224074726105e15,
                        1.8152105401943546773e17,
                        -7.1661652561756670113e18};
  if (x == 1.0) return INFINITY;
  if (x < 1.0) return NAN;
  if (q <= 0.0) {
    if (q == ::floor(q)) return INFINITY;
    if (x != ::floor(x)) return NAN;
  }
  double s = ::pow(q, -x), a = q, b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i += 1;
    a += 1.0;
    b = ::pow(a, -x);
    s += b;
    if (-kMachEp * s < b && b < kMachEp * s) return s;
  }
  const double w = a;
  s += b * w / (x - 1.0);
  s -= 0.5 * b;
  a = 1.0;
  double k = 0.0;
  for (i = 0; i < 12; ++i) {
    a *= x + k;
    b /= w;
    double t = a * b / A[i];
    s = s + t;
    t = ::fabs(t / s);
    if (t < kMachEp) return s;
    k += 1.0;
    a *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}

// The n-th derivative of digamma, torch.polygamma(n, x): digamma for n = 0, trigamma for n = 1,
// else (-1)^(n+1) n! zeta(n + 1, x) (ATen's calc_polygamma, n! as exp(lgamma(n + 1)) in C).
template <typename C>
COLONY_INLINE C polygamma(int n, C x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  const C sign = (n % 2) ? C(1) : C(-1);
  return sign * exp(lgamma(static_cast<C>(n) + C(1))) *
         static_cast<C>(hurwitz_zeta(static_cast<double>(n + 1), static_cast<double>(x)));
}

// Modified Bessel functions of the first kind, I0 and I1, as ATen's calc_i0 / calc_i1 (from the
// Cephes library; 3-clause BSD, Steven Moshier): exp(|x|) times a Chebyshev series of exp(-x) I(x)
// over [0, 8], and of exp(-x) sqrt(x) I(x) over (8, inf) in 32 / x - 2. I0 is even, I1 odd. Float
// evaluates the same 30 and 25 coefficients for I0 and, as ATen, only the last 17 and 7 for I1 (the
// leading ones are below float's precision), so results match PyTorch's CPU to rounding.
// chbevl: Cephes' Clenshaw sum of the coefficients c[first..n) at x.
template <typename C>
COLONY_INLINE C chbevl(C x, const double* c, int first, int n) {
  C b0 = C(c[first]), b1 = C(0), b2 = C(0);
  for (int i = first + 1; i < n; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + C(c[i]);
  }
  return C(0.5) * (b0 - b2);
}

template <typename C>
COLONY_INLINE C bessel_i0(C x_in) {
  const C x = abs(x_in);
  if (x <= C(8)) {
    const double a[30] = {
        -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
        1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
        -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
        9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
        -1.30002500998624804212E-8,  6.04699502254191894932E-8,  -2.67079385394061173391E-7,
        1.11738753912010371815E-6,   -4.41673835845875056359E-6, 1.64484480707288970893E-5,
        -5.75419501008210370398E-5,  1.88502885095841655729E-4,  -5.76375574538582365885E-4,
        1.63947561694133579842E-3,   -4.32430999505057594430E-3, 1.05464603945949983183E-2,
        -2.37374148058994688156E-2,  4.93052842396707084878E-2,  -9.49010970480476444210E-2,
        1.71620901522208775349E-1,   -3.04682672343198398683E-1, 6.76795274409476084995E-1};
    return exp(x) * chbevl(x / C(2) - C(2), a, 0, 30);
  }
  const double b[25] = {
      -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
      3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
      1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
      -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
      7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
      -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
      3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
      2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
      8.04490411014108831608E-1};
  return exp(x) * chbevl(C(32) / x - C(2), b, 0, 25) / sqrt(x);
}

template <typename C>
COLONY_INLINE C bessel_i1(C x_in) {
  const C x = abs(x_in);
  constexpr bool is_float = sizeof(C) == sizeof(float);
  C out;
  if (x <= C(8)) {
    const double a[29] = {
        2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
        -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
        3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
        -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
        9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
        -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
        4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
        -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
        2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
        -1.76416518357834055153E-1,  2.52587186443633654823E-1};
    out = exp(x) * x * chbevl(x / C(2) - C(2), a, is_float ? 12 : 0, 29);
  } else {
    const double b[25] = {
        7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
        -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
        -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
        4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
        -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
        3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
        -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
        -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
        7.78576235018280120474E-1};
    out = exp(x) * chbevl(C(32) / x - C(2), b, is_float ? 18 : 0, 25) / sqrt(x);
  }
  return x_in < C(0) ? -out : out;
}

}  // namespace colony::kernels::math
