// The differentiable op API: free functions in namespace colony (and the arithmetic operators).
// Each runs the raw op of ops/raw_ops.h and, when grad mode is on and an input requires grad,
// records a node whose backward is the op's derivative. The Tensor members marked
// "differentiable" in tensor/tensor.h forward here.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/composed_ops.h"
#include "autograd/factory.h"
#include "ops/raw_ops.h"
#include "tensor/tensor.h"

namespace colony {

// ---------- elementwise unary (autograd/unary.cc) ----------
Tensor neg(const Tensor& t);
inline Tensor negative(const Tensor& t) { return neg(t); }  // torch.negative, neg's alias
Tensor abs(const Tensor& t);
inline Tensor absolute(const Tensor& t) { return abs(t); }  // torch.absolute, abs's alias
Tensor exp(const Tensor& t);
Tensor log(const Tensor& t);
Tensor sqrt(const Tensor& t);
Tensor rsqrt(const Tensor& t);
// The activations, one per entry of COLONY_FOR_EACH_ACTIVATION (kernels/common/elementwise_functors.h):
// relu, sigmoid, tanh, gelu, silu, leaky_relu, elu, softplus, mish, hardswish, hardsigmoid, hardtanh,
// log_sigmoid, hardshrink, softshrink, threshold, each `Tensor name(const Tensor& t, const UnaryAttrs&
// attrs = {})`; attrs carries the parameters (GELU's approximation, LeakyReLU's slope, ...):
// gelu(x, {GeluApproximate::Tanh}).
// nn/activation.h's F:: functions fill them from options, as torch.nn.functional names them.
#define COLONY_DECLARE_ACTIVATION(Op, name, saved) Tensor name(const Tensor& t, const raw::UnaryAttrs& attrs = {});
COLONY_FOR_EACH_ACTIVATION(COLONY_DECLARE_ACTIVATION)
#undef COLONY_DECLARE_ACTIVATION
Tensor sin(const Tensor& t);
Tensor cos(const Tensor& t);
Tensor log1p(const Tensor& t);
Tensor expm1(const Tensor& t);
Tensor square(const Tensor& t);
Tensor reciprocal(const Tensor& t);
Tensor erf(const Tensor& t);  // integral inputs compute in float32, like torch.erf
// Piecewise constant: their gradient is zero everywhere (PyTorch's convention at the jumps too).
Tensor sign(const Tensor& t);
Tensor floor(const Tensor& t);
Tensor ceil(const Tensor& t);
Tensor round(const Tensor& t);
// torch.round(t, decimals=d): to d decimal places (to 10^-d for negative d), ATen's nearbyint(x 10^d)
// / 10^d in float32 for 16-bit types; floating inputs only (torch refuses integers too). Zero gradient.
Tensor round(const Tensor& t, int64_t decimals);
Tensor clamp(const Tensor& t, std::optional<double> min, std::optional<double> max);
inline Tensor clip(const Tensor& t, std::optional<double> min, std::optional<double> max) { return clamp(t, min, max); }
// Trigonometric, hyperbolic, logarithmic and special functions (autograd/unary_math.cc), as torch's:
// integral and bool inputs compute in float32; outside its domain a function gives NaN (asin(2),
// acosh(0.5), log2(-1), erfinv(1.5), digamma(-1)) and at its poles +-inf (atanh(1), log2(0),
// lgamma(0), digamma(0) = -inf for +0 and +inf for -0). Under autocast tan, asin, acos, sinh, cosh,
// log2, log10 and erfinv compute in float32 (torch's CUDA list; one row serves both devices).
Tensor tan(const Tensor& t);
Tensor asin(const Tensor& t);
inline Tensor arcsin(const Tensor& t) { return asin(t); }  // NumPy's names: torch's aliases
Tensor acos(const Tensor& t);
inline Tensor arccos(const Tensor& t) { return acos(t); }
Tensor atan(const Tensor& t);
inline Tensor arctan(const Tensor& t) { return atan(t); }
Tensor sinh(const Tensor& t);
Tensor cosh(const Tensor& t);
Tensor asinh(const Tensor& t);
inline Tensor arcsinh(const Tensor& t) { return asinh(t); }
Tensor acosh(const Tensor& t);
inline Tensor arccosh(const Tensor& t) { return acosh(t); }
Tensor atanh(const Tensor& t);
inline Tensor arctanh(const Tensor& t) { return atanh(t); }
Tensor log2(const Tensor& t);
Tensor log10(const Tensor& t);
Tensor exp2(const Tensor& t);
Tensor erfc(const Tensor& t);    // 1 - erf, accurate in the tail
Tensor erfinv(const Tensor& t);  // inverse of erf on (-1, 1); +-inf at +-1
Tensor lgamma(const Tensor& t);  // log |Gamma(x)|; its gradient is digamma
Tensor digamma(const Tensor& t); // psi = Gamma'/Gamma; its gradient is trigamma, polygamma(1, x)
// torch.polygamma: the n-th derivative of digamma (n >= 0; 0 is digamma, 1 trigamma, else
// (-1)^(n+1) n! zeta(n + 1, x), ATen's Hurwitz zeta); its gradient is polygamma(n + 1, x).
Tensor polygamma(int64_t n, const Tensor& t);
// torch.logit: log(p / (1 - p)), p clamped to [eps, 1 - eps] first when eps is given (and >= 0);
// the gradient is 0 where the clamp was active, NaN outside [0, 1] without eps.
Tensor logit(const Tensor& t, std::optional<double> eps = std::nullopt);
Tensor sinc(const Tensor& t);  // sin(pi x) / (pi x), 1 at 0
// The modified Bessel functions of the first kind of order 0 and 1 (torch.i0, torch.special.i1),
// Cephes' Chebyshev series as ATen's: i0 is even (1 at 0), i1 odd; i0's gradient is i1, i1's
// i0(x) - i1(x) / x (0.5 at 0). Integral and bool inputs compute in float32.
Tensor i0(const Tensor& t);
Tensor special_i1(const Tensor& t);
// Degrees to radians (x pi / 180) and back (x 180 / pi); integral and bool inputs give float32.
Tensor deg2rad(const Tensor& t);
Tensor rad2deg(const Tensor& t);
// Toward zero; integers are copied, bool refused, as torch.trunc. fix is its alias. Zero gradient.
Tensor trunc(const Tensor& t);
Tensor fix(const Tensor& t);
// x - trunc(x), the sign of x (frac(-1.5) = -0.5); floating inputs only; the gradient passes unchanged.
Tensor frac(const Tensor& t);
// torch.frexp: (mantissa, int32 exponent) with t = mantissa 2^exponent, |mantissa| in [0.5, 1) (0,
// +-inf and NaN: themselves and 0); floating inputs only. The mantissa's gradient is grad / 2^exponent;
// the exponent is not differentiable.
std::pair<Tensor, Tensor> frexp(const Tensor& t);

// ---------- elementwise binary, broadcasting (autograd/binary.cc) ----------
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);  // a + alpha * b
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1.0);  // a - alpha * b
inline Tensor subtract(const Tensor& a, const Tensor& b, double alpha = 1.0) { return sub(a, b, alpha); }
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
inline Tensor true_divide(const Tensor& a, const Tensor& b) { return div(a, b); }  // div without rounding
Tensor add(const Tensor& a, double b);
Tensor sub(const Tensor& a, double b);
inline Tensor subtract(const Tensor& a, double b) { return sub(a, b); }
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
inline Tensor true_divide(const Tensor& a, double b) { return div(a, b); }
// torch.div(a, b, rounding_mode=...): nullopt is div; "trunc" rounds the quotient toward zero
// (trunc(a / b) on floating types, C's integer quotient on integers), "floor" toward -inf (floor_divide's
// values); both keep integer dtypes and give zero gradients, as torch's. Other modes are refused with
// torch's message. (Floating "trunc" truncates the quotient rounded to the dtype: float16/bfloat16
// may differ from torch at a quotient within half an ulp of an integer.)
Tensor div(const Tensor& a, const Tensor& b, const std::optional<std::string>& rounding_mode);
Tensor div(const Tensor& a, double b, const std::optional<std::string>& rounding_mode);
inline Tensor divide(const Tensor& a, const Tensor& b, const std::optional<std::string>& rounding_mode = std::nullopt) {
  return div(a, b, rounding_mode);
}
inline Tensor divide(const Tensor& a, double b, const std::optional<std::string>& rounding_mode = std::nullopt) {
  return div(a, b, rounding_mode);
}
Tensor rsub(const Tensor& a, double b);  // b - a
Tensor rdiv(const Tensor& a, double b);  // b / a
Tensor pow(const Tensor& a, double exponent);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(double base, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);  // ties split the gradient in half, as PyTorch
Tensor minimum(const Tensor& a, const Tensor& b);
// ---------- elementwise binary math, broadcasting (autograd/binary_math.cc) ----------
// The forms torch has: scalar operands where torch takes a Scalar. Integer operands: atan2, copysign
// and xlogy compute in float32; hypot and logaddexp(2) refuse them; fmod, remainder and floor_divide
// stay integral (bool refused), where a zero divisor on the CPU throws ("ZeroDivisionError", as
// torch; a CUDA divisor is not read back and gives 0).
Tensor atan2(const Tensor& a, const Tensor& b);  // the angle of (b, a), in [-pi, pi]
inline Tensor arctan2(const Tensor& a, const Tensor& b) { return atan2(a, b); }
// a - trunc(a / b) * b: the sign of a (C's fmod). Gradient: g, and -g trunc(a / b) for b.
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, double b);
// a - floor(a / b) * b: the sign of b, Python's %, the operator % below. Gradient: g, and
// -g floor_divide(a, b) for b.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, double b);
Tensor remainder(double a, const Tensor& b);
// Python's //: rounds the quotient toward -inf (floor_divide(-7, 2) = -4), on integers and floats.
// Its derivative is not implemented, as in PyTorch: a backward through it throws.
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, double b);
Tensor floor_divide(double a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);  // sqrt(a^2 + b^2) without overflow
// |a| with the sign bit of b (copysign(1, -0.0) = -1); b gets a zero gradient.
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, double b);
// a log b, 0 where a == 0 (also for b == 0), NaN where b is NaN.
Tensor xlogy(const Tensor& a, const Tensor& b);
Tensor xlogy(const Tensor& a, double b);
Tensor xlogy(double a, const Tensor& b);
// log(exp(a) + exp(b)) and log2(2^a + 2^b), without overflow.
Tensor logaddexp(const Tensor& a, const Tensor& b);
Tensor logaddexp2(const Tensor& a, const Tensor& b);
// The larger / smaller of a and b ignoring a NaN operand (NaN only where both are), any dtype; the
// gradient goes to the operand chosen (to a where both are NaN), half to each at a tie, as torch's.
Tensor fmax(const Tensor& a, const Tensor& b);
Tensor fmin(const Tensor& a, const Tensor& b);
// Greatest common divisor and least common multiple of integer tensors (bool and floating refused),
// non-negative (but gcd(INT64_MIN, 0) wraps, as torch's); gcd(0, 0) = lcm(x, 0) = 0.
Tensor gcd(const Tensor& a, const Tensor& b);
Tensor lcm(const Tensor& a, const Tensor& b);
// a * 2^b, torch's composition (integers give float32; differentiable in both).
Tensor ldexp(const Tensor& a, const Tensor& b);
// torch.nextafter: the next value of the (promoted) floating dtype after a toward b, float32 and
// float64 (Colony refuses float16/bfloat16, which torch steps too); the gradient is grad for a where
// a != b (0 where they are equal: the result is b there) and zero for b, as torch 2.15's
// NextafterBackward.
Tensor nextafter(const Tensor& a, const Tensor& b);
// torch.bitwise_left_shift / bitwise_right_shift of integer tensors (bool and floating refused), as
// ATen's: shifting by a negative count or by the width or more gives 0 (left) or the sign fill
// (right); the operators << and >> below. Not differentiable.
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, double b);
Tensor bitwise_left_shift(double a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, double b);
Tensor bitwise_right_shift(double a, const Tensor& b);
// t with `value` where the bool mask (broadcast with t) is true; no gradient flows to filled places.
Tensor masked_fill(const Tensor& t, const Tensor& mask, double value);
// torch's Tensor-value overload: value must be 0-D (it may live on the CPU for a CUDA t); it is
// cast to t's dtype and receives the sum of the gradient over the filled elements.
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value);
// cond ? a : b (broadcast); cond is bool and gets no gradient.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, double b);
Tensor where(const Tensor& cond, double a, const Tensor& b);

// ---------- comparisons and logic: bool results, not differentiable (autograd/compare.cc) ----------
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor gt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);
// torch's long names of the comparisons: greater (gt), greater_equal (ge), less (lt), less_equal (le),
// not_equal (ne).
inline Tensor not_equal(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor less(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor less_equal(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor greater(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor greater_equal(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor not_equal(const Tensor& a, double b) { return ne(a, b); }
inline Tensor less(const Tensor& a, double b) { return lt(a, b); }
inline Tensor less_equal(const Tensor& a, double b) { return le(a, b); }
inline Tensor greater(const Tensor& a, double b) { return gt(a, b); }
inline Tensor greater_equal(const Tensor& a, double b) { return ge(a, b); }
Tensor logical_not(const Tensor& t);
// torch.logical_and / or / xor: any dtypes, nonzero (NaN included) is true; bool results.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// torch.bitwise_*: integral or bool tensors (promoted as the arithmetic ops promote; floating types
// are refused). On bool masks they are the logical ops: the operators &, |, ^ and ~ below.
Tensor bitwise_not(const Tensor& t);
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
// Elementwise tests, any dtype (integers and bool are numbers, finite): torch.isnan, isinf, isfinite.
Tensor isnan(const Tensor& t);
Tensor isinf(const Tensor& t);
Tensor isfinite(const Tensor& t);
// x == +inf and x == -inf (false for every integer); isreal is true everywhere (no complex dtypes).
Tensor isposinf(const Tensor& t);
Tensor isneginf(const Tensor& t);
Tensor isreal(const Tensor& t);

// ---------- reductions (autograd/reduce.cc); dims empty = all dims ----------
Tensor sum(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor var(const Tensor& t, const std::vector<int64_t>& dims = {}, bool unbiased = true, bool keepdim = false);
// sqrt(var): torch.std (its gradient is NaN where every element is equal, as in PyTorch).
Tensor std(const Tensor& t, const std::vector<int64_t>& dims = {}, bool unbiased = true, bool keepdim = false);
// torch.linalg.vector_norm (Tensor.norm): (sum |t|^p)^(1/p) over dims (all when empty), floating
// inputs; p = 2, 1, any p > 0, inf (max |t|), -inf (min |t|), 0 (the count of nonzeros, no
// gradient). Where the norm is 0 the gradient is 0, as PyTorch's (not the NaN of the plain chain rule).
Tensor norm(const Tensor& t, double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Whether any / every element is nonzero (NaN counts as nonzero), as bool: torch.any, torch.all.
Tensor any(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor all(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Ties share the gradient evenly, as PyTorch's amax/amin and full max()/min().
Tensor amax(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor max(const Tensor& t);
Tensor min(const Tensor& t);
// values (differentiable: the gradient goes to the selected element) and int64 indices.
std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
// log(sum(exp(t))) over dims (all when empty), with the largest value taken out first so that
// it neither overflows nor underflows; rows of -inf give -inf, as torch.logsumexp. Composed of the
// ops above (its gradient is softmax(t) over dims).
Tensor logsumexp(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim = false);  // not differentiable
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim = false);  // not differentiable
// Sums down to `shape` (the reverse of broadcasting); its gradient broadcasts back.
Tensor sum_to(const Tensor& t, const Shape& shape);

// ---------- linear algebra (autograd/linalg.cc) ----------
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);  // torch.matmul rules
Tensor outer(const Tensor& a, const Tensor& b);   // a [n] (x) b [m] -> [n, m], torch.outer
inline Tensor ger(const Tensor& a, const Tensor& b) { return outer(a, b); }  // torch.ger, outer's old name
// y = x W^T + b: x [..., in], weight [out, in], bias [out] (optional), F.linear; under autocast the
// whole layer (bias included) runs in the lower precision, as PyTorch's fused linear.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());
// beta * input + alpha * product, torch's add-and-multiply family (autograd/addmm.cc, one GEMM pass
// each, the product accumulated onto input and rounded once): addmm (mat1 @ mat2), addmv
// (mat @ vec), addr (outer(vec1, vec2)), baddbmm (batch1 @ batch2 per batch), addbmm (summed over
// the batch). input broadcasts to the product's shape; beta = 0 ignores its values (NaN too).
Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, double beta = 1.0, double alpha = 1.0);
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta = 1.0, double alpha = 1.0);
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, double beta = 1.0, double alpha = 1.0);
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta = 1.0, double alpha = 1.0);
Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta = 1.0, double alpha = 1.0);

// ---------- einsum and tensordot (autograd/einsum.cc) ----------
// torch.einsum (libtorch's torch::einsum(equation, {a, b, ...})): any number of operands;
// subscripts [a-zA-Z], spaces ignored; "ij,jk->ik" names the output, "ij,jk" gives the letters
// that appear once, sorted (upper case first), after the ellipsis' dims; "..." broadcasts as
// torch does (ellipses of different widths align at their last dims, size-1 dims broadcast
// between operands); a letter repeated in one operand takes the diagonal ("ii->i", "ii" is the
// trace); letters not in the output are summed. Operands are contracted left to right (torch's
// order without opt_einsum), each pair as one bmm after permuting and reshaping, so the gradients
// are those of the views, sum, mul and bmm it is made of. Throws std::invalid_argument with
// torch's einsum() messages. Integer operands contract too (by broadcast product and sum: the
// GEMM kernels are floating-point only); a contraction needs one dtype, as torch's bmm does.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
// torch.tensordot: sums the products of a's dims dims_a with b's dims dims_b (pairwise; negative
// dims count from the end; a size-1 dim broadcasts against the other's); the result has a's free
// dims then b's. One mm (bmm of one) after permuting and reshaping, as torch computes it.
Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims_a,
                 const std::vector<int64_t>& dims_b);
// The last `dims` dims of a with the first `dims` of b (torch.tensordot(a, b, dims=2)).
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims);

// ---------- softmax family (autograd/softmax.cc) ----------
Tensor softmax(const Tensor& t, int64_t dim);
Tensor log_softmax(const Tensor& t, int64_t dim);

// ---------- fused attention (autograd/attention.cc) ----------
// torch.nn.functional.scaled_dot_product_attention: softmax(q k^T * scale + mask) v with dropout
// on the weights, as one kernel each way (raw::scaled_dot_product_attention has the shapes and
// rules); differentiable in q, k and v (the mask is a constant). Under autocast it runs in the
// lower precision with float32 accumulation. enable_gqa (grouped-query attention, PyTorch's flag):
// q [..., Hq, L, E] with k [..., Hk, S, E] and v [..., Hv, S, Ev] where Hk and Hv divide Hq; query
// head h then reads key head h / (Hq / Hk), as PyTorch repeats k and v with repeat_interleave
// along dim -3 (which this does too: the gradients of a key head sum over its group).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt, bool enable_gqa = false,
                                    Generator* gen = nullptr);
// enable_gqa took the place where a Generator* used to be the eighth argument: without this, such a
// call would turn the pointer into enable_gqa = true and draw from the default generator.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                    double dropout_p, bool is_causal, std::optional<double> scale,
                                    Generator* gen) = delete;

// ---------- indexing (autograd/index.cc); index tensors get no gradient ----------
// index of any shape: the result is t.shape[:dim] + index.shape + t.shape[dim+1:].
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src);
Tensor one_hot(const Tensor& labels, int64_t num_classes = -1);  // not differentiable
// ---------- scatter and friends (autograd/scatter.cc); index tensors (int64) get no gradient ----------
// torch.scatter: a copy of self with self[p with coordinate dim replaced by index[p]] = src[p] (or
// value) for every position p of index (self's rank; no larger than src, nor than self outside dim;
// src of self's dtype). Of duplicate positions one write wins, as torch's. Gradient: self's outside
// the written positions, src's gathered at index.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, double value);
// torch.scatter_reduce: reduce "sum", "prod", "mean", "amax" or "amin" (NaN wins) of src's elements
// into their positions, with self's element when include_self (else a position written to starts
// from the scattered elements only; "mean" divides by the count, rounding down for integers).
// Differentiable in self and src as torch's (amax/amin share among ties; prod exact with zeros).
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
// torch.index_fill / index_copy: the slices at a 0-D or 1-D index along dim filled with value, or
// copied from source's slices (source: self's shape with dim the index's length). scatter with the
// index expanded, so their gradients are scatter's.
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, double value);
// With a 0-D tensor value (torch's overload): its gradient sums the filled elements once each,
// however often index repeats one.
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// torch.scatter_add: scatter_reduce(self, dim, index, src, "sum"), its gradients
// (autograd/scatter_inplace.cc, beside the in-place members).
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
// torch.index_add: self + alpha * (source's slices summed at a 0-D or 1-D index along dim); source of
// self's dtype. Gradients: self's g, source's alpha * g's slices at index.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, double alpha = 1.0);
// torch.masked_scatter: self (broadcast with the bool mask) with its k-th masked element (row-major)
// replaced by source's k-th element (source of self's dtype, at least as many elements as the mask
// has trues). Gradients: self's where the mask is false, source's first elements the masked ones.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);

// ---------- unique, counting and searching (autograd/unique.cc): no gradient ----------
// torch.unique (flattened; dim = None): (the distinct values in ascending order, NaNs each distinct,
// as torch's; int64 inverse of t's shape, each element's position in them, when return_inverse;
// int64 counts, when return_counts), the ones not asked for empty, as libtorch's _unique2. Always
// sorted (torch's CUDA order, which sorted = false permits). Reads its size back to the host.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false);
// torch.unique with dim (libtorch's at::unique_dim; an overload of unique would be ambiguous with
// its bools): the distinct slices along dim (dim first, each slice a row of the rest), sorted
// lexicographically; the inverse has dim's length, counts one per distinct slice. Slices holding a
// NaN equal no other slice (torch's ==); where torch's std::sort meets NaNs its order is
// unspecified, Colony's puts NaN after every number. Empty dims other than dim are refused, as
// torch's; a 0-d input too.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& t, int64_t dim, bool sorted = true,
                                              bool return_inverse = false, bool return_counts = false);
// torch.unique_consecutive: the first of each run of equal neighbours, of the flattened input, or,
// with dim, of the slices along dim (as libtorch's, dim last and optional).
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);
// torch.bincount of a 1-D non-negative integer tensor: int64 counts (or sums of weights: floating
// weights keep their dtype, others give float64) of length max(max + 1, minlength). Reads the
// maximum back to the host.
Tensor bincount(const Tensor& t, const Tensor& weights = Tensor(), int64_t minlength = 0);
// torch.histc: `bins` equal bins over [min, max] (the data's range when min == max), in t's
// floating dtype; elements outside (and NaN) are not counted, max falls in the last bin.
Tensor histc(const Tensor& t, int64_t bins = 100, double min = 0, double max = 0);
// torch.searchsorted (autograd/searchsorted.cc; raw::searchsorted says the rule): for each value, its
// position in its row of sorted_sequence (1-D, or N-D with values' leading dims), left (the first
// boundary >= value) or right (> value; right = true or side "right"), through `sorter` (int64
// positions that sort each row) when given; the two promoted as torch's; int64, or int32 with
// out_int32. A binary search per value, torch's own bisection, so NaNs give torch's positions.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false, bool right = false,
                    const std::optional<std::string>& side = std::nullopt, const Tensor& sorter = Tensor());
// A scalar value (a 0-D int64 result): an integral sequence with a non-integral value searches in
// float32, as torch's wrapped numbers.
Tensor searchsorted(const Tensor& sorted_sequence, double value, bool out_int32 = false, bool right = false,
                    const std::optional<std::string>& side = std::nullopt, const Tensor& sorter = Tensor());
// torch.bucketize: searchsorted(boundaries (1-D), values).
Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor bucketize(double value, const Tensor& boundaries, bool out_int32 = false, bool right = false);

// torch.nonzero: int64 [n, t.dim()] coordinates of the nonzero elements (not differentiable; a CUDA
// tensor is read back to the host).
Tensor nonzero(const Tensor& t);
// torch.masked_select: the elements of t where mask (bool, broadcast with t) is true, as a 1-D
// tensor in row-major order; differentiable in t.
Tensor masked_select(const Tensor& t, const Tensor& mask);

// ---------- triangles (autograd/triangle.cc), scans (autograd/cumsum.cc), sorting (autograd/sort.cc) ----------
// Lower/upper triangle of the last two dims (batched); diagonal > 0 above the main one, < 0 below.
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
// Inclusive prefix sums; integral and bool inputs give int64. Gradient: the reversed cumsum.
Tensor cumsum(const Tensor& t, int64_t dim);
// ---------- the other scans and the product (autograd/scan.cc) ----------
// torch.cumprod: integral and bool inputs give int64. The gradient is exact with zeros in the
// input (no division): the products of the other elements, as torch's. (At a NaN of the input it is
// still that product, where torch's division gives NaN.)
Tensor cumprod(const Tensor& t, int64_t dim);
// torch.prod over all elements (0-d; the empty product is 1) or over dim: integral and bool inputs
// give int64. Made of cumprod's last element, so its gradient is g * the product of the others
// (exact with one zero or several, as torch's prod_backward).
Tensor prod(const Tensor& t);
Tensor prod(const Tensor& t, int64_t dim, bool keepdim = false);
// torch.cummax / cummin: (values, int64 indices), the index of the last of equal values and, once
// a NaN is seen, NaN with the index of the latest NaN, as torch's. The values' gradient goes to
// the positions the indices name.
std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);
// torch.logcumsumexp: log(cumsum(exp(t))) without overflow (floating inputs; -inf stays -inf).
Tensor logcumsumexp(const Tensor& t, int64_t dim);

// ---------- order statistics and NaN-aware reductions (autograd/order_stats.cc) ----------
// median, nanmedian and kthvalue select (an O(n) selection per row, raw::median and friends); the
// values' gradient goes through gather to the elements they were taken from (int64 indices: their
// positions along dim; of equal values the one torch's CPU names: the stable sort's for the
// medians, its quickselect's for kthvalue; kernels/common/select.h). torch's CUDA kernels may name
// another of equal values; Colony's CUDA names the CPU's. quantile sorts. bool inputs are refused,
// as torch's.
// torch.median: the lower median; a NaN in the row gives NaN (and the first NaN's index). All
// elements: 0-d, NaN for an empty floating input.
Tensor median(const Tensor& t);
std::pair<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim = false);
// torch.nanmedian: the lower median of the non-NaN elements; NaN (index 0) for a row of NaNs.
Tensor nanmedian(const Tensor& t);
std::pair<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim = false);
// torch.mode (autograd/mode.cc): the most frequent value along dim, of equally frequent values the
// smallest, and the position of its last occurrence in the row (torch's CPU kernel gives the last
// occurrence in rows of up to 16 elements, any occurrence in longer ones: the values agree). NaN
// equals nothing, so each NaN counts once. The gradient goes to the element at the index.
std::pair<Tensor, Tensor> mode(const Tensor& t, int64_t dim = -1, bool keepdim = false);
// torch.kthvalue: the k-th smallest along dim, 1 <= k <= size (NaN is the largest).
std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false);
// torch.quantile / nanquantile of float32/float64 t at q in [0, 1] (a number, or a 0-D or 1-D
// tensor of t's dtype whose values lead the result's dims), over dim or all elements (dim =
// nullopt; keepdim then keeps every dim as size 1). interpolation: "linear", "lower", "higher",
// "midpoint" or "nearest" (half to even), between the sorted elements at q * (n - 1). quantile
// gives NaN for a row with a NaN; nanquantile ranks the non-NaN elements (NaN when none). Checking
// q reads it on the host (a synchronization on CUDA, as torch's).
Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   const std::string& interpolation = "linear");
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   const std::string& interpolation = "linear");
// torch.nansum (NaN counts as 0, with gradient 0; integers and bool sum to int64 as sum) and
// torch.nanmean (floating inputs: the mean of the non-NaN elements, NaN when there are none).
Tensor nansum(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor nanmean(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);

// ---------- sorting (autograd/sort.cc) ----------
// Stable; NaN sorts as the largest value. Values are differentiable, indices (int64) are not.
std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false);
std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// sort's indices (int64): torch.argsort; always stable (equal values keep their order).
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false);
// Category indices drawn from 1-D or 2-D non-negative weights; not differentiable.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, Generator* gen = nullptr);

// ---------- joining and splitting (autograd/join.cc) ----------
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
inline Tensor concat(const std::vector<Tensor>& tensors, int64_t dim = 0) { return cat(tensors, dim); }
inline Tensor concatenate(const std::vector<Tensor>& tensors, int64_t dim = 0) { return cat(tensors, dim); }
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
// torch.repeat: t tiled repeats[i] times along dim i (more repeats than dims add leading dims).
Tensor repeat(const Tensor& t, const Shape& repeats);
// torch.repeat_interleave with an integer count: each element (each slice along dim) `repeats`
// times in a row; without dim, of the flattened tensor. (Per-element counts are not supported.)
Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
// torch.flip: a copy with the order of elements reversed along each of dims.
Tensor flip(const Tensor& t, const std::vector<int64_t>& dims);

// ---------- compositions (autograd/compose.cc): gradients from the ops they are made of ----------
// torch.roll: elements shifted along each of dims (wrapping around); without dims, of the flattened
// tensor. A new tensor.
Tensor roll(const Tensor& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
// torch.unbind: the slices along dim (views, as select's).
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);
// torch.movedim: source dims moved to destination, the others in their order (a permute view).
Tensor movedim(const Tensor& t, const std::vector<int64_t>& source, const std::vector<int64_t>& destination);
Tensor movedim(const Tensor& t, int64_t source, int64_t destination);
inline Tensor moveaxis(const Tensor& t, const std::vector<int64_t>& source, const std::vector<int64_t>& destination) {
  return movedim(t, source, destination);
}
inline Tensor moveaxis(const Tensor& t, int64_t source, int64_t destination) { return movedim(t, source, destination); }
// torch.unflatten: dim split into sizes (one may be -1).
Tensor unflatten(const Tensor& t, int64_t dim, const Shape& sizes);
// torch.meshgrid of 0-D or 1-D tensors: indexing "ij" (matrix) or "xy" (Cartesian; the first two
// dims swapped). Expanded views.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij");
// torch.lerp: start + weight * (end - start), in PyTorch's two forms (from end when |weight| >= 0.5).
Tensor lerp(const Tensor& start, const Tensor& end, double weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
// torch.addcmul / addcdiv: t + value * tensor1 * tensor2 (/ tensor2); addcdiv refuses two integer tensors.
Tensor addcmul(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
Tensor addcdiv(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
// torch.nan_to_num: NaN, +inf and -inf replaced (defaults 0 and the dtype's largest and lowest
// finite values); the gradient is 0 where an element was replaced.
Tensor nan_to_num(const Tensor& t, std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
// torch.count_nonzero over dims (all when empty): int64.
Tensor count_nonzero(const Tensor& t, const std::vector<int64_t>& dims = {});
// torch.diag: a vector onto the offset diagonal of a square matrix (zeros elsewhere), or a matrix's
// offset diagonal as a vector (diagonal's view). torch.trace is the member t.trace() only:
// colony::trace is the tracing namespace (log/trace.h).
Tensor diag(const Tensor& t, int64_t diagonal = 0);

// ---------- views (autograd/views.cc): share storage with the input ----------
Tensor view(const Tensor& t, const Shape& shape);
Tensor reshape(const Tensor& t, const Shape& shape);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& self);  // 2-D transpose
Tensor permute(const Tensor& t, const std::vector<int64_t>& dims);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
inline Tensor ravel(const Tensor& t) { return flatten(t); }  // torch.ravel: 1-D, a view when t is contiguous
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor expand(const Tensor& t, const Shape& shape);
// torch.diagonal: dims dim1 and dim2 removed and their diagonal (offset > 0 above the main one)
// appended as the last dim; the gradient is written into that diagonal of a zero tensor.
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);

// torch.as_strided: the view of t's storage with these sizes, strides and storage offset (t's own
// when nullopt), which may reach elements of the storage t does not cover; torch's checks (the
// storage's bounds, no negative strides). The gradient is torch's as_strided_backward: output
// gradients summed at the storage positions they share, read at t's positions.
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides,
                  std::optional<int64_t> storage_offset = std::nullopt);

// torch's Tensor.unfold: the sliding windows of `size` elements `step` apart along dim, as a view
// (raw::unfold); overlapping windows' gradients are summed.
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);

// ---------- copies and conversion (autograd/convert.cc) ----------
Tensor contiguous(const Tensor& t);  // t itself when already contiguous
Tensor clone(const Tensor& t);
// Gradients flow back to the input's device and dtype. t itself when nothing changes.
Tensor to(const Tensor& t, Device device, DType dtype, bool non_blocking = false);
Tensor pin_memory(const Tensor& t);
Tensor detach(const Tensor& t);  // shares storage (and version counter), no history

// ---------- operators ----------
inline Tensor operator-(const Tensor& t) { return neg(t); }
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, double b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, double b) { return div(a, b); }
inline Tensor operator+(double a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(double a, const Tensor& b) { return rsub(b, a); }
inline Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(double a, const Tensor& b) { return rdiv(b, a); }
// Python's % on tensors: torch.remainder (the sign of the divisor).
inline Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
inline Tensor operator%(const Tensor& a, double b) { return remainder(a, b); }
inline Tensor operator%(double a, const Tensor& b) { return remainder(a, b); }
inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator==(const Tensor& a, double b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, double b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, double b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, double b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, double b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, double b) { return ge(a, b); }
inline Tensor operator!(const Tensor& t) { return logical_not(t); }
// As in PyTorch, bitwise: `causal_mask | padding_mask`, `~keep` on bool masks, bits on integers.
inline Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
inline Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
inline Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
inline Tensor operator~(const Tensor& t) { return bitwise_not(t); }
// The shifts of integer tensors, as torch's << and >> (a number keeps the tensor's dtype: int32 << 2 is int32).
inline Tensor operator<<(const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); }
inline Tensor operator<<(const Tensor& a, double b) { return bitwise_left_shift(a, b); }
inline Tensor operator>>(const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); }
inline Tensor operator>>(const Tensor& a, double b) { return bitwise_right_shift(a, b); }

}  // namespace colony
