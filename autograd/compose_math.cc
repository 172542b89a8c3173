// Math ops PyTorch users reach for that are compositions of other differentiable ops, so their
// gradients come from those: isclose, diff, aminmax, std_mean/var_mean, kron, cdist/pdist, dot,
// vdot, inner, mv, sgn, signbit, heaviside, float_power, trapezoid/cumulative_trapezoid,
// cov/corrcoef, clamp_min/clamp_max.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::detail::check_rank;

// Where `positive` holds, f(x) computed on x; elsewhere 0 with a zero gradient. The inner where
// keeps f away from the points where its derivative is infinite (sqrt and |x|^p at 0), whose
// inf * 0 would otherwise turn the gradient into NaN; torch's cdist/pdist backward gives 0 there.
template <typename F>
Tensor where_positive(const Tensor& x, F f) {
  Tensor positive = gt(x, 0.0);
  return where(positive, f(where(positive, x, 1.0)), 0.0);
}

// The p-norm over the last dim of `diff` as torch's cdist/pdist compute it, gradients included:
// p = 0 counts the non-zeros (no gradient), p = inf takes the largest |diff| and gives the whole
// gradient to every coordinate tied at the largest (torch's cdist backward; amax would split it).
Tensor distance_norm(const Tensor& diff, double p) {
  Tensor a = abs(diff);
  if (p == 0) {
    // The count has a zero gradient, as torch's (its output still requires grad): a where() that
    // never picks diff links it without letting a NaN or infinity through.
    Tensor never = raw::zeros(diff.sizes(), TensorOptions(kBool).device(diff.device()));
    return add(sum(to(ne(diff, 0.0), diff.device(), diff.dtype()), {-1}), sum(where(never, diff, 0.0), {-1}));
  }
  if (p == 1) return sum(a, {-1});
  if (std::isinf(p)) {
    Tensor largest = amax(detach(a), {-1}, true);
    // largest + sum over the tied coordinates of (|diff| - largest): the value is largest, the
    // gradient sign(diff) at each tied coordinate.
    Tensor tied = eq(detach(a), largest);
    return add(squeeze(largest, -1), sum(where(tied, sub(a, largest), 0.0), {-1}));
  }
  if (p == 2) return where_positive(sum(square(diff), {-1}), [](const Tensor& s) { return sqrt(s); });
  Tensor powered = sum(where_positive(a, [p](const Tensor& x) { return pow(x, p); }), {-1});
  return where_positive(powered, [p](const Tensor& s) { return pow(s, 1.0 / p); });
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string(op) + ": expected both inputs to have the same dtype, but found " +
                                dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
  }
}

Tensor floating(const Tensor& t) { return is_floating(t.dtype()) ? t : to(t, t.device(), default_float_dtype()); }

}  // namespace

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string("isclose: ") + dtype_name(a.dtype()) + " did not match " + dtype_name(b.dtype()));
  }
  if (rtol < 0) throw std::invalid_argument("isclose: rtol must be greater than or equal to zero, but got " + std::to_string(rtol));
  if (atol < 0) throw std::invalid_argument("isclose: atol must be greater than or equal to zero, but got " + std::to_string(atol));
  // Equal values (infinities of one sign included) are close; otherwise |a - b| <= atol + rtol |b|
  // between finite values, computed in the inputs' floating type (float32 for integers), as torch.
  Tensor close = eq(a, b);
  if (equal_nan && is_floating(a.dtype())) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (a.dtype() == kBool) return close;
  Tensor fa = detach(floating(a)), fb = detach(floating(b));
  Tensor within = le(abs(sub(fa, fb)), add(mul(abs(fb), rtol), atol));
  return logical_or(close, logical_and(within, logical_and(isfinite(fa), isfinite(fb))));
}

Tensor diff(const Tensor& t, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  if (t.dim() == 0) throw std::invalid_argument("diff: expects input to be at least one-dimensional");
  if (n < 0) throw std::invalid_argument("diff: order must be non-negative but got " + std::to_string(n));
  const int64_t d = wrap_dim(dim, t.dim(), "diff");
  std::vector<Tensor> parts;
  if (prepend.defined()) parts.push_back(prepend);
  parts.push_back(t);
  if (append.defined()) parts.push_back(append);
  Tensor out = parts.size() == 1 ? t : cat(parts, d);
  if (n == 0) return parts.size() == 1 ? clone(t) : out;
  // Each order shortens dim by one. At the length or beyond it the dim is empty, a new tensor
  // without history, as torch's.
  if (n >= out.size(d)) {
    Shape empty = out.sizes();
    empty[d] = 0;
    return raw::empty(empty, TensorOptions(out.dtype()).device(out.device()));
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = out.size(d) - 1;
    Tensor hi = narrow(out, d, 1, len), lo = narrow(out, d, 0, len);
    // Bool inputs differ by xor, as torch's diff (subtraction of bools is refused).
    out = out.dtype() == kBool ? logical_xor(hi, lo) : sub(hi, lo);
  }
  return out;
}

std::pair<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  const bool empty = dim ? (t.dim() > 0 && t.size(wrap_dim(*dim, t.dim(), "aminmax")) == 0) : t.numel() == 0;
  if (empty) {
    throw std::invalid_argument("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  }
  if (!dim) return {amin(t, {}, keepdim), amax(t, {}, keepdim)};
  return {amin(t, {*dim}, keepdim), amax(t, {*dim}, keepdim)};
}

std::pair<Tensor, Tensor> std_mean(const Tensor& t, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  return {std(t, dims, unbiased, keepdim), mean(t, dims, keepdim)};
}

std::pair<Tensor, Tensor> var_mean(const Tensor& t, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  return {var(t, dims, unbiased, keepdim), mean(t, dims, keepdim)};
}

Tensor kron(const Tensor& a, const Tensor& b) {
  // Both padded to one rank with leading 1s; then a as [a0, 1, a1, 1, ...] times b as
  // [1, b0, 1, b1, ...] broadcasts to [a0, b0, a1, b1, ...], which reshapes to [a0 b0, a1 b1, ...].
  const int64_t rank = std::max(a.dim(), b.dim());
  Shape as(rank - a.dim(), 1), bs(rank - b.dim(), 1);
  as.insert(as.end(), a.sizes().begin(), a.sizes().end());
  bs.insert(bs.end(), b.sizes().begin(), b.sizes().end());
  Shape a_view, b_view, out;
  for (int64_t i = 0; i < rank; ++i) {
    a_view.insert(a_view.end(), {as[i], 1});
    b_view.insert(b_view.end(), {1, bs[i]});
    out.push_back(as[i] * bs[i]);
  }
  return reshape(mul(reshape(a, a_view), reshape(b, b_view)), out);
}

Tensor cdist(const Tensor& x1_arg, const Tensor& x2_arg, double p, const std::string& compute_mode) {
  const Tensor x1 = autocast::cast(autocast::Op::cdist, x1_arg), x2 = autocast::cast(autocast::Op::cdist, x2_arg);
  if (x1.dim() < 2 || x2.dim() < 2) {
    throw std::invalid_argument("cdist only supports at least 2D tensors, X1 got: " + std::to_string(x1.dim()) + "D, X2 got: " +
                                std::to_string(x2.dim()) + "D");
  }
  if (!is_floating(x1.dtype()) || !is_floating(x2.dtype())) {
    throw std::invalid_argument(std::string("cdist only supports floating-point dtypes, X1 got: ") +
                                dtype_name(x1.dtype()) + ", X2 got: " + dtype_name(x2.dtype()));
  }
  if (x1.size(-1) != x2.size(-1)) {
    throw std::invalid_argument("cdist: X1 and X2 must have the same number of columns. X1: " + std::to_string(x1.size(-1)) +
                                " X2: " + std::to_string(x2.size(-1)));
  }
  if (!(p >= 0)) throw std::invalid_argument("cdist only supports non-negative p values, got " + std::to_string(p));
  const bool mm_if_needed = compute_mode == "use_mm_for_euclid_dist_if_necessary";
  if (!mm_if_needed && compute_mode != "use_mm_for_euclid_dist" && compute_mode != "donot_use_mm_for_euclid_dist") {
    throw std::invalid_argument("cdist: compute_mode must be \"use_mm_for_euclid_dist_if_necessary\", "
                                "\"use_mm_for_euclid_dist\" or \"donot_use_mm_for_euclid_dist\", got \"" +
                                compute_mode + "\"");
  }
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2);
  // The leading (batch) dims broadcast.
  const Shape batch = broadcast_shapes(Shape(x1.sizes().begin(), x1.sizes().end() - 2),
                                       Shape(x2.sizes().begin(), x2.sizes().end() - 2), "cdist");
  Shape s1 = batch, s2 = batch;
  s1.insert(s1.end(), {r1, x1.size(-1)});
  s2.insert(s2.end(), {r2, x2.size(-1)});
  Tensor a = expand(x1, s1), b = expand(x2, s2);
  const bool use_mm = p == 2 && (compute_mode == "use_mm_for_euclid_dist" || (mm_if_needed && (r1 > 25 || r2 > 25)));
  if (use_mm) {
    // torch's _euclidean_dist: |a|^2 + |b|^2 - 2 a b^T, clamped at 1e-30 before the root (rounding
    // can make it negative), so identical rows give 1e-15 there rather than 0, as torch's.
    Tensor d2 = add(add(sum(square(a), {-1}, true), transpose(sum(square(b), {-1}, true), -1, -2)),
                    mul(matmul(a, transpose(b, -1, -2)), -2.0));
    return sqrt(clamp(d2, 1e-30, std::nullopt));
  }
  // Every pair's difference, [..., r1, r2, m]: memory grows with r1 * r2 * m, as noted in ops.h.
  return distance_norm(sub(unsqueeze(a, -2), unsqueeze(b, -3)), p);
}

Tensor pdist(const Tensor& t_arg, double p) {
  const Tensor t = autocast::cast(autocast::Op::pdist, t_arg);
  if (t.dim() != 2) throw std::invalid_argument("pdist only supports 2D tensors, got: " + std::to_string(t.dim()) + "D");
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("pdist only supports floating-point dtypes, got: ") + dtype_name(t.dtype()));
  }
  if (!(p >= 0)) throw std::invalid_argument("pdist only supports non-negative p values, got " + std::to_string(p));
  // The rows i < j in row-major order: the upper triangle of cdist(t, t) without its diagonal.
  Tensor pairs = triu_indices(t.size(0), t.size(0), 1, TensorOptions(kInt64).device(t.device()));
  Tensor first = index_select(t, 0, raw::select(pairs, 0, 0)), second = index_select(t, 0, raw::select(pairs, 0, 1));
  return distance_norm(sub(first, second), p);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (a.dim() != 1 || b.dim() != 1) {
    throw std::invalid_argument("dot: 1D tensors expected, but got " + std::to_string(a.dim()) + "D and " + std::to_string(b.dim()) + "D tensors");
  }
  check_same_dtype(a, b, "dot");
  if (a.size(0) != b.size(0)) {
    throw std::invalid_argument("dot: inconsistent tensor size, expected tensor [" + std::to_string(a.size(0)) + "] and src [" +
                                std::to_string(b.size(0)) + "] to have the same number of elements, but got " + std::to_string(a.size(0)) +
                                " and " + std::to_string(b.size(0)) + " elements respectively");
  }
  Tensor out = sum(mul(a, b));
  return out.dtype() == a.dtype() ? out : to(out, out.device(), a.dtype());  // integer sums stay in their dtype
}

Tensor vdot(const Tensor& a, const Tensor& b) { return dot(a, b); }  // real tensors: no conjugate

Tensor inner(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b);
  if (a.size(-1) != b.size(-1)) {
    throw std::invalid_argument("inner: inner() the last dimension must match on both input tensors but got shapes " +
                                shape_str(a.sizes()) + " and " + shape_str(b.sizes()));
  }
  return tensordot(a, b, {-1}, {-1});
}

Tensor mv(const Tensor& mat, const Tensor& vec) {
  check_rank(mat, 2, "mv", "mat");
  check_rank(vec, 1, "mv", "vec");
  if (mat.size(1) != vec.size(0)) {
    throw std::invalid_argument("mv: size mismatch, got mat " + shape_str(mat.sizes()) + ", vec " + shape_str(vec.sizes()));
  }
  return matmul(mat, vec);
}

Tensor sgn(const Tensor& t) { return sign(t); }  // real tensors: sgn is sign

Tensor signbit(const Tensor& t) {
  if (!is_floating(t.dtype())) return t.dtype() == kBool ? raw::zeros_like(t) : lt(t, 0.0);
  // The sign bit itself: true for -0.0 and for a NaN with its sign bit set, as std::signbit.
  return lt(copysign(raw::ones_like(detach(t)), detach(t)), 0.0);
}

Tensor heaviside(const Tensor& input, const Tensor& values) {
  if (input.dtype() != values.dtype()) {
    throw std::invalid_argument(std::string("heaviside is not yet implemented for tensors with different dtypes (got ") +
                                dtype_name(input.dtype()) + " and " + dtype_name(values.dtype()) + ")");
  }
  // 0 below zero, values at zero, 1 above. Not differentiable: torch's backward refuses it.
  Tensor step = to(gt(detach(input), 0.0), input.device(), input.dtype());
  return where(eq(detach(input), 0.0), detach(values), step);
}

Tensor float_power(const Tensor& a, const Tensor& b) {
  return pow(to(a, a.device(), kFloat64), to(b, b.device(), kFloat64));
}
Tensor float_power(const Tensor& a, double exponent) { return pow(to(a, a.device(), kFloat64), exponent); }
Tensor float_power(double base, const Tensor& exponent) { return pow(base, to(exponent, exponent.device(), kFloat64)); }

Tensor trapezoid(const Tensor& y, double dx, int64_t dim) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(y.dim(), 1), "trapezoid");
  Tensor fy = floating(y);
  if (y.dim() == 0 || y.size(d) == 0) return sum(narrow(fy.dim() == 0 ? unsqueeze(fy, 0) : fy, d, 0, 0), {d});
  // dx * (sum of y - (first + last) / 2), as torch's.
  Tensor ends = add(select(fy, d, 0), select(fy, d, -1 + fy.size(d)));
  return mul(sub(sum(fy, {d}), mul(ends, 0.5)), dx);
}

namespace {

// The spacings of x broadcast against y's `dim`: a 1-D x is laid along dim, an N-D x must
// broadcast with y.
Tensor spacings(const Tensor& x, const Tensor& y, int64_t d, const char* op) {
  if (x.dim() == 1) {
    if (x.size(0) != y.size(d)) {
      throw std::invalid_argument(std::string(op) + ": There must be one `x` value for each sample point, got " +
                                  std::to_string(x.size(0)) + " for " + std::to_string(y.size(d)) + " samples");
    }
    Shape view(y.dim(), 1);
    view[d] = x.size(0) - 1;
    return reshape(diff(x), view);
  }
  return diff(x, 1, d - y.dim());
}

}  // namespace

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(y.dim(), 1), "trapezoid");
  Tensor fy = floating(y);
  if (y.dim() == 0 || y.size(d) == 0) return sum(narrow(fy.dim() == 0 ? unsqueeze(fy, 0) : fy, d, 0, 0), {d});
  const int64_t n = fy.size(d);
  Tensor pair_sums = add(narrow(fy, d, 1, n - 1), narrow(fy, d, 0, n - 1));
  return mul(sum(mul(spacings(floating(x), fy, d, "trapezoid"), pair_sums), {d}), 0.5);
}

Tensor cumulative_trapezoid(const Tensor& y, double dx, int64_t dim) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(y.dim(), 1), "cumulative_trapezoid");
  Tensor fy = floating(y);
  const int64_t n = fy.size(d);
  if (n == 0) return fy;
  Tensor pair_sums = add(narrow(fy, d, 1, n - 1), narrow(fy, d, 0, n - 1));
  return cumsum(mul(pair_sums, dx / 2), d);
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(y.dim(), 1), "cumulative_trapezoid");
  Tensor fy = floating(y);
  const int64_t n = fy.size(d);
  if (n == 0) return fy;
  Tensor pair_sums = add(narrow(fy, d, 1, n - 1), narrow(fy, d, 0, n - 1));
  return cumsum(mul(mul(spacings(floating(x), fy, d, "cumulative_trapezoid"), pair_sums), 0.5), d);
}

Tensor cov(const Tensor& input, int64_t correction, const Tensor& fweights, const Tensor& aweights) {
  if (input.dim() > 2) {
    throw std::invalid_argument("cov(): expected input to have two or fewer dimensions but got an input with " +
                                std::to_string(input.dim()) + " dimensions");
  }
  // Rows are variables, columns observations; a vector is one variable.
  Tensor x = input.dim() < 2 ? reshape(floating(input), {1, -1}) : floating(input);
  const int64_t observations = x.size(1);
  Tensor w;
  if (fweights.defined()) {
    if (fweights.dim() > 1 || fweights.numel() != observations || is_floating(fweights.dtype())) {
      throw std::invalid_argument("cov(): expected fweights to be an integer 1-D tensor with " + std::to_string(observations) +
                                  " elements, got " + dtype_name(fweights.dtype()) + " " + shape_str(fweights.sizes()));
    }
    if (any(lt(fweights, 0.0)).item<bool>()) {
      throw std::invalid_argument("cov(): fweights cannot be negative");
    }
    w = to(fweights, x.device(), x.dtype());
  }
  if (aweights.defined()) {
    if (aweights.dim() > 1 || aweights.numel() != observations || !is_floating(aweights.dtype())) {
      throw std::invalid_argument("cov(): expected aweights to be a floating 1-D tensor with " + std::to_string(observations) +
                                  " elements, got " + dtype_name(aweights.dtype()) + " " + shape_str(aweights.sizes()));
    }
    if (any(lt(aweights, 0.0)).item<bool>()) {
      throw std::invalid_argument("cov(): aweights cannot be negative");
    }
    Tensor aw = to(aweights, x.device(), x.dtype());
    w = w.defined() ? mul(w, aw) : aw;
  }
  // torch.cov's algorithm (numpy.cov's): the weighted mean, then the normalization factor.
  Tensor avg, norm_factor;
  if (w.defined()) {
    Tensor w_sum = sum(w);
    avg = div(sum(mul(x, w), {1}), w_sum);
    if (correction == 0) {
      norm_factor = w_sum;
    } else if (!aweights.defined()) {
      norm_factor = sub(w_sum, static_cast<double>(correction));
    } else {
      norm_factor = sub(w_sum, mul(div(sum(mul(w, to(aweights, x.device(), x.dtype()))), w_sum),
                                   static_cast<double>(correction)));
    }
  } else {
    avg = mean(x, {1});
    norm_factor = scalar_tensor(static_cast<double>(observations - correction), TensorOptions(x.dtype()).device(x.device()));
  }
  norm_factor = clamp(norm_factor, 0.0, std::nullopt);  // torch warns and clamps a factor <= 0
  Tensor centered = sub(x, unsqueeze(avg, 1));
  Tensor weighted = w.defined() ? mul(centered, w) : centered;
  Tensor c = div(mm(centered, t(weighted)), norm_factor);
  return input.dim() < 2 || x.size(0) == 1 ? reshape(c, {}) : c;
}

Tensor corrcoef(const Tensor& input) {
  Tensor c = cov(input);
  if (c.dim() == 0) return div(c, c);  // one variable: 1, or NaN for a constant
  Tensor stddev = sqrt(diagonal(c));
  c = div(div(c, unsqueeze(stddev, 1)), unsqueeze(stddev, 0));
  return clamp(c, -1.0, 1.0);  // rounding can step past +-1, as torch clips
}

Tensor clamp_min(const Tensor& t, double min) { return clamp(t, min, std::nullopt); }
Tensor clamp_max(const Tensor& t, double max) { return clamp(t, std::nullopt, max); }

}  // namespace colony
