// unique, unique_consecutive, bincount, histc, searchsorted and bucketize: results with no gradient
// (as torch's), composed of the raw sort, cumsum, comparisons and scatters. The sizes of unique's and
// bincount's results depend on the values, which are read back to the host (a synchronization on
// CUDA, as torch's and as nonzero's).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

TensorOptions int64_on(const Tensor& t) { return TensorOptions(kInt64).device(t.device()); }

// The runs of equal neighbours of the 1-D `vals` (NaN equals nothing, so each NaN is a run of its
// own, as torch's unique): each run's first value, each element's run number, each run's length.
struct Runs {
  Tensor values, group, counts;
};

Runs runs_of(const Tensor& vals) {
  const int64_t n = vals.numel();
  if (n == 0) {
    return {raw::empty({0}, TensorOptions(vals.dtype()).device(vals.device())), raw::empty({0}, int64_on(vals)),
            raw::empty({0}, int64_on(vals))};
  }
  Tensor differs = raw::binary(raw::BinaryOp::Ne, raw::narrow(vals, 0, 1, n - 1), raw::narrow(vals, 0, 0, n - 1));
  Tensor is_new = raw::cat({raw::ones({1}, TensorOptions(kBool).device(vals.device())), differs}, 0);
  Tensor group = raw::add(raw::cumsum(is_new, 0), -1.0);  // int64
  Tensor starts = raw::reshape(raw::nonzero(is_new), {-1});  // read back to the host
  const int64_t runs = starts.numel();
  Tensor counts = raw::scatter_add({runs}, 0, group, raw::ones({n}, int64_on(vals)));
  return {raw::index_select(vals, 0, starts), group, counts};
}

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined input tensor");
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;  // always sorted: torch's CUDA order, which sorted = false permits
  check_defined(t, "unique");
  Tensor flat = raw::reshape(t, {-1});
  auto [vals, order] = raw::sort(flat, 0);
  Runs r = runs_of(vals);
  Tensor inverse = raw::empty({0}, int64_on(t));
  if (return_inverse) {
    // Element order[i] of t holds the value of sorted position i, which is in run group[i].
    Tensor inv = raw::scatter_reduce(raw::zeros({flat.numel()}, int64_on(t)), 0, order, r.group, raw::ScatterOp::Assign);
    inverse = raw::reshape(inv, t.sizes());
  }
  return {r.values, inverse, return_counts ? r.counts : raw::empty({0}, int64_on(t))};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse, bool return_counts) {
  check_defined(t, "unique_consecutive");
  Runs r = runs_of(raw::contiguous(raw::reshape(t, {-1})));
  return {r.values, return_inverse ? raw::reshape(r.group, t.sizes()) : raw::empty({0}, int64_on(t)),
          return_counts ? r.counts : raw::empty({0}, int64_on(t))};
}

Tensor bincount(const Tensor& t, const Tensor& weights, int64_t minlength) {
  const char* op = "bincount";
  check_defined(t, op);
  if (t.dim() != 1 || is_floating(t.dtype()) || t.dtype() == kBool) {
    throw std::invalid_argument(std::string(op) + ": expected a 1-D tensor of non-negative integers, got " +
                                dtype_name(t.dtype()) + " " + shape_str(t.sizes()));
  }
  if (minlength < 0) throw std::invalid_argument(std::string(op) + ": expected minlength >= 0, got " + std::to_string(minlength));
  if (weights.defined() && (weights.dim() != 1 || weights.numel() != t.numel())) {
    throw std::invalid_argument(std::string(op) + ": expected weights of the input's shape " + shape_str(t.sizes()) +
                                ", got " + shape_str(weights.sizes()));
  }
  int64_t size = minlength;
  Tensor idx = raw::to(t, t.device(), kInt64);
  if (t.numel() > 0) {
    if (raw::amin(idx).item<int64_t>() < 0) {
      throw std::invalid_argument(std::string(op) + ": expected non-negative values, got " +
                                  std::to_string(raw::amin(idx).item<int64_t>()));
    }
    size = std::max(size, raw::amax(idx).item<int64_t>() + 1);
  }
  if (!weights.defined()) return raw::scatter_add({size}, 0, idx, raw::ones({t.numel()}, int64_on(t)));
  // Floating weights keep their dtype; others count in float64, as torch's.
  const DType dtype = is_floating(weights.dtype()) ? weights.dtype() : kFloat64;
  return raw::scatter_add({size}, 0, idx, raw::to(weights, t.device(), dtype));
}

Tensor histc(const Tensor& t, int64_t bins, double min, double max) {
  const char* op = "histc";
  check_defined(t, op);
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string(op) + ": expected a floating point input, got " + dtype_name(t.dtype()));
  }
  if (bins <= 0) throw std::invalid_argument(std::string(op) + ": expected bins > 0, got " + std::to_string(bins));
  if (min > max) {
    throw std::invalid_argument(std::string(op) + ": expected max >= min, got min " + std::to_string(min) + " and max " +
                                std::to_string(max));
  }
  Tensor x = raw::to(raw::reshape(t, {-1}), t.device(), kFloat64);
  if (min == max && x.numel() > 0) {  // the data's range (read back to the host), as torch's
    min = raw::amin(x).item();
    max = raw::amax(x).item();
  }
  if (min == max) {
    min -= 1;
    max += 1;
  }
  if (!std::isfinite(min) || !std::isfinite(max)) {
    throw std::invalid_argument(std::string(op) + ": range of [" + std::to_string(min) + ", " + std::to_string(max) +
                                "] is not finite");
  }
  // Bin floor((x - min) / (max - min) * bins), x == max in the last; the others (and NaN) go to an
  // extra bin `bins`, dropped at the end.
  Tensor pos = raw::unary(raw::UnaryOp::Floor, raw::mul(raw::add(x, -min), static_cast<double>(bins) / (max - min)));
  pos = raw::clamp(pos, 0.0, static_cast<double>(bins - 1));
  Tensor inside = raw::binary(raw::BinaryOp::LogicalAnd, raw::binary(raw::BinaryOp::Ge, x, min),
                              raw::binary(raw::BinaryOp::Le, x, max));
  pos = raw::to(raw::masked_fill(pos, raw::unary(raw::UnaryOp::LogicalNot, inside), static_cast<double>(bins)),
                t.device(), kInt64);
  Tensor counts = raw::scatter_add({bins + 1}, 0, pos, raw::ones({x.numel()}, TensorOptions(t.dtype()).device(t.device())));
  return raw::contiguous(raw::narrow(counts, 0, 0, bins));
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const std::optional<std::string>& side) {
  const char* op = "searchsorted";
  check_defined(sorted_sequence, op);
  check_defined(values, op);
  if (side && *side != "left" && *side != "right") {
    throw std::invalid_argument(std::string(op) + ": expected side 'left' or 'right', got '" + *side + "'");
  }
  if (side && right && *side == "left") {
    throw std::invalid_argument(std::string(op) + ": side and right can't be set to opposites, got side 'left' and "
                                "right true");
  }
  const bool upper = right || (side && *side == "right");
  const Tensor& seq = sorted_sequence;
  if (seq.dim() == 0) throw std::invalid_argument(std::string(op) + ": expected a 1-D or N-D sorted sequence, got 0-D");
  if (seq.device() != values.device()) {
    throw std::invalid_argument(std::string(op) + ": sorted_sequence is on " + seq.device().str() + " but values on " +
                                values.device().str());
  }
  // Each value against every boundary of its row: [..., M, 1] with [..., 1, N] (1-D: values' shape + [N]).
  Tensor s, v;
  if (seq.dim() == 1) {
    v = raw::unsqueeze(values, -1);
    s = seq;
  } else {
    Shape lead_s(seq.sizes().begin(), seq.sizes().end() - 1);
    Shape lead_v(values.sizes().begin(), values.sizes().end() - (values.dim() > 0 ? 1 : 0));
    if (values.dim() != seq.dim() || lead_s != lead_v) {
      throw std::invalid_argument(std::string(op) + ": expected values with the sorted sequence's leading dims " +
                                  shape_str(lead_s) + " (boundaries " + shape_str(seq.sizes()) + "), got " +
                                  shape_str(values.sizes()));
    }
    v = raw::unsqueeze(values, -1);
    s = raw::unsqueeze(seq, -2);
  }
  // How many boundaries come before the value in torch's order (NaN the largest): left counts
  // s < v, right s <= v.
  Tensor v_nan = raw::unary(raw::UnaryOp::IsNan, v), s_nan = raw::unary(raw::UnaryOp::IsNan, s);
  Tensor before = upper ? raw::binary(raw::BinaryOp::LogicalOr, raw::binary(raw::BinaryOp::Le, s, v), v_nan)
                        : raw::binary(raw::BinaryOp::LogicalOr, raw::binary(raw::BinaryOp::Lt, s, v),
                                      raw::binary(raw::BinaryOp::LogicalAnd, v_nan,
                                                  raw::unary(raw::UnaryOp::LogicalNot, s_nan)));
  Tensor count = raw::sum(before, {-1});
  return out_int32 ? raw::to(count, count.device(), kInt32) : count;
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right) {
  if (boundaries.defined() && boundaries.dim() != 1) {
    throw std::invalid_argument("bucketize: expected 1-D boundaries, got " + shape_str(boundaries.sizes()));
  }
  return searchsorted(boundaries, values, out_int32, right, std::nullopt);
}

}  // namespace colony
