// Scans other than the sum (cumsum.h) along the middle axis of a contiguous [outer, dim, inner]
// array: the running product, maximum, minimum and log-sum-exp (torch.cumprod, cummax, cummin,
// logcumsumexp), and the gradient of the running product. The entry points are declared once for
// both devices (kernel.h), defined in kernels/cpu/scan.cc and kernels/cuda/scan.cu; the step of
// each scan is written once, below, and both devices call it.
#pragma once

#include <cstdint>

#include "kernels/common/cumsum.h"
#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"
#include "kernels/common/scalar_math.h"

namespace colony::kernels {

enum class ScanOp { Prod, Max, Min, LogSumExp };

// The running product is kept in cumsum's accumulator type (int64 for integral and bool inputs,
// whose result is int64 as torch.cumprod's; double for float64; float otherwise).
template <typename T>
using cumprod_acc_t = cumsum_acc_t<T>;

// The running maximum (is_max) or minimum: torch's rule, which takes the new element on ties (so
// the index is the last of equal values) and once a NaN is seen keeps NaN, each later NaN taking
// the index over. Returns whether `v` became the extreme.
template <typename C>
COLONY_INLINE bool extreme_step(C v, C& acc, bool is_max) {
  const bool v_nan = v != v, acc_nan = acc != acc;
  const bool take = v_nan || (!acc_nan && (is_max ? v >= acc : v <= acc));
  if (take) acc = v;
  return take;
}

// log(exp(acc) + exp(v)) in float or double without overflow: the larger plus log1p of exp of the difference.
// Equal infinities stay themselves (-inf + -inf is -inf, not NaN), as torch's _log_add_exp_helper.
template <typename C>
COLONY_INLINE C log_add_exp(C acc, C v) {
  if (acc != acc || v != v) return acc + v;  // NaN
  const C lo = acc < v ? acc : v, hi = acc < v ? v : acc;
  if (lo == hi && !(lo - lo == C(0))) return hi;  // both +inf or both -inf
  return hi + math::log1p(math::exp(lo - hi));
}

// y[o, i, k] = the scan of x[o, 0..i, k] by `op`. Prod: y has dtype `dtype` for floating inputs and
// int64 for integral and bool ones. Max and Min: y has dtype `dtype`, and `indices` (int64, same
// shape) the position along the axis of the element each value came from. LogSumExp: floating
// dtypes only, y has dtype `dtype`.
COLONY_KERNEL(Scan, ScanOp op, DType dtype, const void* x, void* y, int64_t* indices, int64_t outer, int64_t dim,
              int64_t inner);

// The gradient of y = cumprod(x) along the axis (floating dtypes): grad_x[k] = L_k * S_k with
// L_k = prod_{j<k} x_j and S_k = g_k + x_{k+1} S_{k+1} (S_{dim-1} = g_{dim-1}), which is
// sum_{i>=k} g_i * prod_{j<=i, j!=k} x_j written without a division, so zeros in x give the exact
// products of the other elements (torch's cumprod_backward and prod_backward for inputs with zeros).
COLONY_KERNEL(CumprodBackward, DType dtype, const void* x, const void* grad_y, void* grad_x, int64_t outer,
              int64_t dim, int64_t inner);

}  // namespace colony::kernels
