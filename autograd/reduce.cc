// Reductions: the gradient of a reduced element spreads back over the elements it came from.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::record;
using autograd::detail::record_differentiable;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

// The reduced dims in ascending order; empty `dims` means all of them.
std::vector<int64_t> reduced_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> d;
  if (dims.empty()) {
    d.resize(ndim);
    std::iota(d.begin(), d.end(), 0);
  } else {
    d = wrap_dims(dims, ndim, op);
    std::sort(d.begin(), d.end());
  }
  return d;
}

// A reduction's result (or its gradient) with the reduced dims put back as size 1.
Tensor with_kept_dims(const Tensor& g, const std::vector<int64_t>& sorted_dims, bool keepdim) {
  if (keepdim) return g;
  Tensor r = g;
  for (int64_t d : sorted_dims) r = raw::unsqueeze(r, d);
  return r;
}

// with_kept_dims by the differentiable unsqueeze, for the closures a create_graph backward
// differentiates again.
Tensor kept_dims(const Tensor& g, const std::vector<int64_t>& sorted_dims, bool keepdim) {
  if (keepdim) return g;
  Tensor r = g;
  for (int64_t d : sorted_dims) r = unsqueeze(r, d);
  return r;
}

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& sorted_dims) {
  int64_t n = 1;
  for (int64_t d : sorted_dims) n *= shape[d];
  return n;
}

// Gradient of amax/amin: shared evenly among the elements equal to the extreme value.
Tensor extreme_value_grad(const Tensor& g, const Tensor& x, const Tensor& out, const std::vector<int64_t>& dims,
                          bool keepdim) {
  Tensor out_k = with_kept_dims(out, dims, keepdim);
  Tensor mask = raw::to(raw::binary(raw::BinaryOp::Eq, x, out_k), x.device(), g.dtype());
  Tensor count = raw::sum(mask, dims, /*keepdim=*/true);
  // Linear in g with the mask and count constant: differentiable under create_graph.
  return mul(mask, div(kept_dims(g, dims, keepdim), count));
}

Tensor extreme_value(bool is_max, const char* name, const Tensor& t, const std::vector<int64_t>& dims,
                     bool keepdim) {
  Tensor out = is_max ? raw::amax(t, dims, keepdim) : raw::amin(t, dims, keepdim);
  if (autograd::needs_grad(t)) {
    std::vector<int64_t> d = reduced_dims(dims, t.dim(), name);
    SavedTensor sx(t), sy(out, /*is_output=*/true);
    record_differentiable(name, {t}, out, {sx, sy}, [sx, sy, d, keepdim](const Grads& g, const Needs&) -> Grads {
      return {extreme_value_grad(g[0], sx.unpack(), sy.unpack(), d, keepdim)};
    });
  }
  return out;
}

std::pair<Tensor, Tensor> select_extreme(bool is_max, const char* name, const Tensor& t, int64_t dim,
                                         bool keepdim) {
  auto [values, indices] = is_max ? raw::max(t, dim, keepdim) : raw::min(t, dim, keepdim);
  if (autograd::needs_grad(t)) {
    Shape in_shape = t.sizes();
    int64_t d = t.dim() == 0 ? 0 : wrap_dim(dim, t.dim(), name);
    SavedTensor si(indices, /*is_output=*/true);
    record_differentiable(name, {t}, values, {si}, [si, in_shape, d, keepdim](const Grads& g, const Needs&) -> Grads {
      if (in_shape.empty()) return {g[0]};
      Tensor idx = with_kept_dims(si.unpack(), {d}, keepdim);
      return {scatter_add(in_shape, d, idx, kept_dims(g[0], {d}, keepdim))};
    });
  }
  return {values, indices};
}

}  // namespace

Tensor sum(const Tensor& t_arg, const std::vector<int64_t>& dims, bool keepdim) {
  const Tensor t = autocast::cast(autocast::Op::sum, t_arg);
  Tensor out = raw::sum(t, dims, keepdim);
  if (autograd::needs_grad(t)) {
    std::vector<int64_t> d = reduced_dims(dims, t.dim(), "sum");
    Shape in_shape = t.sizes();
    record_differentiable("SumBackward", {t}, out, {}, [d, keepdim, in_shape](const Grads& g, const Needs&) -> Grads {
      return {expand(kept_dims(g[0], d, keepdim), in_shape)};
    });
  }
  return out;
}

Tensor mean(const Tensor& t_arg, const std::vector<int64_t>& dims, bool keepdim) {
  const Tensor t = autocast::cast(autocast::Op::mean, t_arg);
  Tensor out = raw::mean(t, dims, keepdim);
  if (autograd::needs_grad(t)) {
    std::vector<int64_t> d = reduced_dims(dims, t.dim(), "mean");
    Shape in_shape = t.sizes();
    double n = static_cast<double>(reduced_count(in_shape, d));
    record_differentiable("MeanBackward", {t}, out, {}, [d, keepdim, in_shape, n](const Grads& g, const Needs&) -> Grads {
      return {expand(mul(kept_dims(g[0], d, keepdim), 1.0 / n), in_shape)};
    });
  }
  return out;
}

Tensor var(const Tensor& t_arg, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  const Tensor t = autocast::cast(autocast::Op::var, t_arg);
  Tensor out = raw::var(t, dims, unbiased, keepdim);
  if (autograd::needs_grad(t)) {
    std::vector<int64_t> d = reduced_dims(dims, t.dim(), "var");
    double n = static_cast<double>(reduced_count(t.sizes(), d));
    double denom = n - (unbiased ? 1.0 : 0.0);
    SavedTensor sx(t);
    record_differentiable("VarBackward", {t}, out, {sx}, [sx, d, keepdim, denom](const Grads& g, const Needs&) -> Grads {
      // d var / dx_i = 2 (x_i - mean) / (N - correction)
      Tensor x = sx.unpack();
      Tensor centered = sub(x, mean(x, d, /*keepdim=*/true));
      return {mul(mul(centered, kept_dims(g[0], d, keepdim)), 2.0 / denom)};
    });
  }
  return out;
}

Tensor amax(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme_value(true, "AmaxBackward", t, dims, keepdim);
}
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme_value(false, "AminBackward", t, dims, keepdim);
}
Tensor max(const Tensor& t) { return extreme_value(true, "MaxBackward", t, {}, false); }
Tensor min(const Tensor& t) { return extreme_value(false, "MinBackward", t, {}, false); }

std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  return select_extreme(true, "MaxBackward", t, dim, keepdim);
}
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  return select_extreme(false, "MinBackward", t, dim, keepdim);
}

Tensor logsumexp(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  // The shift is a constant to autograd: d/dt [log sum exp(t - m) + m] is softmax(t) whatever m is.
  // Infinite maxima shift by 0 (torch.logsumexp's rule): a row of -inf stays -inf instead of
  // becoming NaN from -inf - -inf, and a +inf stays +inf.
  Tensor m = raw::amax(t, dims, /*keepdim=*/true);
  m = raw::masked_fill(m, eq(raw::abs(m), std::numeric_limits<double>::infinity()), 0.0);
  Tensor sums = sum(exp(sub(t, m)), dims, keepdim);
  return add(log(sums), keepdim ? m : raw::reshape(m, sums.sizes()));
}

Tensor std(const Tensor& t, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  return sqrt(var(t, dims, unbiased, keepdim));
}

namespace {

// f(x) where x != 0 and `at_zero` where x == 0, with no gradient through f at the zeros: f's
// derivative there is infinite (x^p for p < 1, s^(1/p)), and infinity times the zero that reaches
// it would be NaN. Where the norm is 0, PyTorch's norm_backward masks its gradient to 0 likewise.
template <class F>
Tensor away_from_zero(const Tensor& x, double at_zero, F f) {
  Tensor zero = eq(x, 0.0);
  return where(zero, at_zero, f(where(zero, 1.0, x)));
}

// p = 2 by one read of t (raw::vector_norm2, as torch.linalg.vector_norm; sqrt(sum(square(t)))
// wrote the squares out and read them back). The gradient is torch's norm_backward for p = 2:
// t * (g / norm), 0 where the norm is 0 (written with the differentiable ops: create_graph works).
Tensor norm2(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor out = raw::vector_norm2(t, dims, keepdim);
  if (autograd::needs_grad(t)) {
    SavedTensor st(t), sn(out, /*is_output=*/true);
    const std::vector<int64_t> sorted = reduced_dims(dims, t.dim(), "norm");
    record_differentiable("NormBackward", {t}, out, {st, sn}, [st, sn, sorted, keepdim](const Grads& g, const Needs&) -> Grads {
      const Tensor n = kept_dims(sn.unpack(), sorted, keepdim);
      const Tensor scale = where(raw::binary(raw::BinaryOp::Eq, n, 0.0), 0.0, div(kept_dims(g[0], sorted, keepdim), n));
      return {mul(st.unpack(), scale)};
    });
  }
  return out;
}

}  // namespace

Tensor norm(const Tensor& t, double p, const std::vector<int64_t>& dims, bool keepdim) {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("norm: expected a floating point tensor, got ") + dtype_name(t.dtype()) +
                                " (convert it first, e.g. t.to(kFloat32))");
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (std::isnan(p) || (p < 0 && p != -kInf)) {
    throw std::invalid_argument("norm: p must be 0, positive, inf or -inf, got " + std::to_string(p));
  }
  // p = 0 and p = 2 read t itself: |t| would be one more pass over it (and a tensor that size).
  if (p == 0) return raw::to(raw::sum(ne(t, 0.0), dims, keepdim), t.device(), t.dtype());
  if (p == 2) return norm2(t, dims, keepdim);
  Tensor a = abs(t);
  if (p == kInf) return amax(a, dims, keepdim);
  if (p == -kInf) return amin(a, dims, keepdim);
  if (p == 1) return sum(a, dims, keepdim);
  Tensor powers = p < 1 ? away_from_zero(a, 0.0, [p](const Tensor& x) { return pow(x, p); }) : pow(a, p);
  return away_from_zero(sum(powers, dims, keepdim), 0.0, [p](const Tensor& s) { return pow(s, 1.0 / p); });
}

// Counts of nonzeros (bool results, never in the graph). NaN != 0, so NaN counts as nonzero (torch's rule).
Tensor any(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return ne(raw::sum(ne(t, 0.0), dims, keepdim), 0.0);
}

Tensor all(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return eq(raw::sum(eq(t, 0.0), dims, keepdim), 0.0);
}

Tensor argmax(const Tensor& t, int64_t dim, bool keepdim) { return raw::argmax(t, dim, keepdim); }
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim) { return raw::argmin(t, dim, keepdim); }

Tensor sum_to(const Tensor& t, const Shape& shape) {
  Tensor out = raw::sum_to(t, shape);
  if (autograd::needs_grad(t)) {
    Shape in_shape = t.sizes();
    record_differentiable("SumToBackward", {t}, out, {}, [in_shape](const Grads& g, const Needs&) -> Grads {
      return {expand(g[0], in_shape)};
    });
  }
  return out;
}

}  // namespace colony
