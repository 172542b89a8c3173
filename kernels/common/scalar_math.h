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

#undef COLONY_MATH_UNARY

COLONY_INLINE float pow(float x, float y) { return ::powf(x, y); }
COLONY_INLINE double pow(double x, double y) { return ::pow(x, y); }

}  // namespace colony::kernels::math
