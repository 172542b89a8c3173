// Order statistics. median, nanmedian and kthvalue select (ops/select_ops.cc: an O(n) selection per
// row, kernels/common/select.h) and take the values again through the differentiable gather, so
// every value's gradient goes to the element it was taken from:
//   median     the lower median ((n - 1) / 2 of the sorted row); a row with a NaN gives its
//              first NaN, as torch.median; of all elements, the gradient is shared by the elements
//              equal to the median, as torch's;
//   nanmedian  the lower median of the row's non-NaN elements (NaN when there are none);
//   kthvalue   the k-th smallest (k from 1; NaN counts as the largest, as torch's).
// Indices among equal values are those torch's CPU names (select.h says which). The quantiles
// need two neighbouring order statistics and their interpolation, so they sort:
//   quantile   torch's ranks (q * (n - 1), or over the non-NaN count for nanquantile) and its five
//              interpolations, the gradient to the two elements they lie between (lerp's weights).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

// The number of NaNs in each row along d (int64, kept dim).
Tensor nan_count(const Tensor& t, int64_t d) { return raw::sum(isnan(t), {d}, /*keepdim=*/true); }

enum class Median { Lower, IgnoreNan };

Tensor median_all(Median kind, const char* op, const Tensor& t) {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined input tensor");
  if (t.dtype() == kBool) {
    throw std::invalid_argument(std::string(op) + ": expected a numeric input, got bool (convert it first, e.g. "
                                "t.to(kInt64))");
  }
  if (t.numel() == 0) {
    if (!is_floating(t.dtype())) {
      throw std::invalid_argument(std::string(op) + ": expected a non-empty input for an integral dtype (" +
                                  dtype_name(t.dtype()) + " has no NaN to return)");
    }
    return raw::full({}, std::nan(""), TensorOptions(t.dtype()).device(t.device()));
  }
  // The value without a graph; its gradient is shared evenly by the elements equal to it (NaNs by a
  // NaN), as torch's median() and nanmedian() of all elements (evenly_distribute_backward).
  const Tensor flat = raw::reshape(detach(t), {-1});
  Tensor value = (kind == Median::Lower ? raw::median(flat, 0) : raw::nanmedian(flat, 0)).first;
  if (autograd::needs_grad(t)) {
    autograd::SavedTensor sx(t), sy(value, /*is_output=*/true);
    autograd::record(kind == Median::Lower ? "MedianBackward" : "NanmedianBackward", {t}, value, {sx, sy},
                     [sx, sy](const autograd::detail::Grads& g, const autograd::detail::Needs&) -> autograd::detail::Grads {
                       Tensor x = sx.unpack(), y = sy.unpack();
                       Tensor both_nan = raw::binary(raw::BinaryOp::LogicalAnd, raw::unary(raw::UnaryOp::IsNan, x),
                                                     raw::unary(raw::UnaryOp::IsNan, y));
                       Tensor same = raw::binary(raw::BinaryOp::LogicalOr, raw::binary(raw::BinaryOp::Eq, x, y), both_nan);
                       Tensor mask = raw::to(same, x.device(), g[0].dtype());
                       return {raw::mul(mask, raw::div(g[0], raw::sum(mask)))};
                     });
  }
  return value;
}

}  // namespace

std::pair<Tensor, Tensor> autograd::detail::value_selected(const Tensor& t, int64_t dim, bool keepdim,
                                                           std::pair<Tensor, Tensor> selected) {
  auto [values, indices] = std::move(selected);
  if (!autograd::needs_grad(t)) return {values, indices};
  // Gathered again, with history: the kept-dim indices select the element of each row.
  const int64_t d = wrap_dim(dim, t.dim(), "gather");
  const Tensor x = t.dim() == 0 ? reshape(t, {1}) : t;
  const Tensor at = t.dim() == 0 ? raw::reshape(indices, {1}) : keepdim ? indices : raw::unsqueeze(indices, d);
  Tensor picked = gather(x, d, at);
  if (t.dim() == 0) return {reshape(picked, {}), indices};
  return {keepdim ? picked : squeeze(picked, d), indices};
}

Tensor median(const Tensor& t) { return median_all(Median::Lower, "median", t); }
std::pair<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim) {
  return autograd::detail::value_selected(t, dim, keepdim, raw::median(t, dim, keepdim));
}
Tensor nanmedian(const Tensor& t) { return median_all(Median::IgnoreNan, "nanmedian", t); }
std::pair<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim) {
  return autograd::detail::value_selected(t, dim, keepdim, raw::nanmedian(t, dim, keepdim));
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  return autograd::detail::value_selected(t, dim, keepdim, raw::kthvalue(t, k, dim, keepdim));
}

namespace {

Tensor quantile_of(const char* op, bool ignore_nan, const Tensor& t, const Tensor& q_arg, bool q_scalar,
                   std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined input tensor");
  if (t.dtype() != kFloat32 && t.dtype() != kFloat64) {
    throw std::invalid_argument(std::string(op) + ": expected a float32 or float64 input, got " +
                                dtype_name(t.dtype()));
  }
  if (!q_arg.defined() || q_arg.dim() > 1) {
    throw std::invalid_argument(std::string(op) + ": expected q as a number or a 0-D or 1-D tensor, got " +
                                (q_arg.defined() ? std::to_string(q_arg.dim()) + "-D" : std::string("undefined")));
  }
  if (q_arg.dtype() != t.dtype()) {
    throw std::invalid_argument(std::string(op) + ": expected q of the input's dtype " + dtype_name(t.dtype()) +
                                ", got " + dtype_name(q_arg.dtype()));
  }
  if (t.numel() == 0) throw std::invalid_argument(std::string(op) + ": expected a non-empty input tensor");
  const bool lower = interpolation == "lower", higher = interpolation == "higher",
             midpoint = interpolation == "midpoint", nearest = interpolation == "nearest";
  if (!lower && !higher && !midpoint && !nearest && interpolation != "linear") {
    throw std::invalid_argument(std::string(op) + ": expected interpolation 'linear', 'lower', 'higher', "
                                "'midpoint' or 'nearest', got '" + interpolation + "'");
  }
  Tensor q = raw::reshape(raw::to(q_arg, t.device(), t.dtype()), {-1});
  const Tensor q_host = raw::contiguous(raw::to(q, kCPU, kFloat64));  // a synchronization on CUDA, as torch's check
  for (int64_t i = 0; i < q_host.numel(); ++i) {
    const double v = q_host.data_ptr<double>()[i];
    if (!(v >= 0.0 && v <= 1.0)) {
      throw std::invalid_argument(std::string(op) + ": expected q in [0, 1], got " + std::to_string(v));
    }
  }
  // The reduced dim last ([rest..., n]); without dim, the flattened input.
  const int64_t d = dim ? wrap_dim(*dim, t.dim(), op) : 0;
  Tensor rows = dim ? (t.dim() == 0 ? reshape(t, {1}) : movedim(t, d, -1)) : reshape(t, {-1});
  const int64_t n = rows.size(-1);
  Tensor sorted = sort(rows, -1).first;  // differentiable: the gradient goes back through the sort
  Tensor nans = nan_count(rows, rows.dim() - 1);  // [rest..., 1]
  Tensor ranks;                                   // [rest..., Q], in t's dtype as torch's
  if (ignore_nan) {
    Tensor valid = raw::to(raw::add(raw::neg(nans), static_cast<double>(n)), t.device(), t.dtype());
    ranks = raw::clamp(raw::mul(raw::add(valid, -1.0), q), 0.0, std::nullopt);
  } else {
    // A row with a NaN gives its last sorted element, a NaN (torch's rule).
    ranks = raw::where(gt(nans, 0.0), autograd::detail::scalar_like(static_cast<double>(n - 1), q),
                       raw::mul(q, static_cast<double>(n - 1)));
    Shape shape = nans.sizes();
    shape.back() = q.numel();
    ranks = raw::contiguous(raw::expand(ranks, shape));
  }
  if (lower) ranks = raw::unary(raw::UnaryOp::Floor, ranks);
  if (higher) ranks = raw::unary(raw::UnaryOp::Ceil, ranks);
  if (nearest) ranks = raw::unary(raw::UnaryOp::Round, ranks);  // half to even, as torch's round
  Tensor below_at = raw::to(ranks, t.device(), kInt64);
  Tensor out = gather(sorted, -1, below_at);
  if (!lower && !higher && !nearest) {
    Tensor above_at = raw::to(raw::unary(raw::UnaryOp::Ceil, ranks), t.device(), kInt64);
    Tensor weights = midpoint ? raw::full_like(ranks, 0.5) : raw::sub(ranks, raw::to(below_at, t.device(), t.dtype()));
    out = lerp(out, gather(sorted, -1, above_at), weights);
  }
  // [rest..., Q] -> [Q, rest...]; keepdim puts the reduced dims back as size 1.
  out = movedim(out, -1, 0);
  if (keepdim) {
    if (dim) {
      if (t.dim() > 0) out = unsqueeze(out, d + 1);
    } else {
      Shape shape(static_cast<size_t>(t.dim()) + 1, 1);
      shape[0] = q.numel();
      out = reshape(out, shape);
    }
  }
  return q_scalar ? squeeze(out, 0) : out;
}

Tensor scalar_q(double q, const Tensor& t) {
  return raw::scalar_tensor(q, TensorOptions(t.defined() ? t.dtype() : kFloat32).device(t.defined() ? t.device() : kCPU));
}

}  // namespace

Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) {
  return quantile_of("quantile", false, t, scalar_q(q, t), true, dim, keepdim, interpolation);
}
Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation) {
  return quantile_of("quantile", false, t, q, q.defined() && q.dim() == 0, dim, keepdim, interpolation);
}
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return quantile_of("nanquantile", true, t, scalar_q(q, t), true, dim, keepdim, interpolation);
}
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return quantile_of("nanquantile", true, t, q, q.defined() && q.dim() == 0, dim, keepdim, interpolation);
}

// NaN-aware sums: NaN counts as 0, and the mean divides by the non-NaN count. nansum's gradient is
// g times the not-NaN mask, as torch's (so an infinite g, nanmean's over a row of NaNs, gives NaN
// there, not 0).
Tensor nansum(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  if (!t.defined()) throw std::invalid_argument("nansum: expected a defined input tensor");
  if (!is_floating(t.dtype())) return sum(t, dims, keepdim);  // integers hold no NaN
  Tensor out = raw::sum(raw::masked_fill(t, raw::unary(raw::UnaryOp::IsNan, t), 0.0), dims, keepdim);
  if (autograd::needs_grad(t)) {
    autograd::SavedTensor sx(t);
    std::vector<int64_t> d = dims.empty() ? std::vector<int64_t>() : wrap_dims(dims, t.dim(), "nansum");
    if (dims.empty()) {
      for (int64_t i = 0; i < t.dim(); ++i) d.push_back(i);
    }
    std::sort(d.begin(), d.end());
    autograd::detail::record_differentiable(
        "NansumBackward", {t}, out, {sx},
        [sx, d, keepdim](const autograd::detail::Grads& g, const autograd::detail::Needs&) -> autograd::detail::Grads {
          Tensor x = sx.unpack();
          Tensor gk = g[0];
          if (!keepdim) {
            for (int64_t i : d) gk = unsqueeze(gk, i);
          }
          Tensor kept = raw::to(raw::unary(raw::UnaryOp::LogicalNot, raw::unary(raw::UnaryOp::IsNan, x)), x.device(),
                                gk.dtype());
          return {mul(expand(gk, x.sizes()), kept)};
        });
  }
  return out;
}

Tensor nanmean(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  if (!t.defined()) throw std::invalid_argument("nanmean: expected a defined input tensor");
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("nanmean: expected a floating point input, got ") + dtype_name(t.dtype()));
  }
  Tensor count = raw::to(raw::sum(logical_not(isnan(t)), dims, keepdim), t.device(), t.dtype());
  return div(nansum(t, dims, keepdim), count);
}

}  // namespace colony
