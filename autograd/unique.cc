// unique, unique_consecutive (flattened or along a dim), bincount and histc: results with no gradient
// (as torch's), composed of the raw sort, cumsum, comparisons and scatters. The sizes of unique's and
// bincount's results depend on the values, which are read back to the host (a synchronization on
// CUDA, as torch's and as nonzero's).
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

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

namespace {

std::tuple<Tensor, Tensor, Tensor> unique_consecutive_flat(const Tensor& t, bool return_inverse, bool return_counts) {
  check_defined(t, "unique_consecutive");
  Runs r = runs_of(raw::contiguous(raw::reshape(t, {-1})));
  return {r.values, return_inverse ? raw::reshape(r.group, t.sizes()) : raw::empty({0}, int64_on(t)),
          return_counts ? r.counts : raw::empty({0}, int64_on(t))};
}

// The permutation that moves dim d of ndim first, the others in their order.
std::vector<int64_t> dim_first(int64_t ndim, int64_t d) {
  std::vector<int64_t> order{d};
  for (int64_t i = 0; i < ndim; ++i) {
    if (i != d) order.push_back(i);
  }
  return order;
}

// t with dim d first, as [n, m] rows (m the product of the other dims), contiguous.
Tensor slices_as_rows(const Tensor& t, int64_t d) {
  Tensor moved = raw::contiguous(raw::permute(t, dim_first(t.dim(), d)));
  int64_t m = 1;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i != d) m *= t.size(i);
  }
  return raw::reshape(moved, {t.size(d), m});
}

// The slices [k, ...] (rows of [k, m]) back in t's layout: dim d of size k.
Tensor rows_as_slices(const Tensor& rows, const Tensor& t, int64_t d) {
  Shape moved = t.sizes();
  moved.erase(moved.begin() + d);
  moved.insert(moved.begin(), rows.size(0));
  const std::vector<int64_t> order = dim_first(t.dim(), d);
  std::vector<int64_t> back(order.size());
  for (size_t i = 0; i < order.size(); ++i) back[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return raw::contiguous(raw::permute(raw::reshape(rows, moved), back));
}

// Runs of equal neighbouring rows of [n, m] (a row with a NaN equals no row, as torch's ==): each
// run's first row, each row's run number, each run's length.
Runs row_runs(const Tensor& rows) {
  const int64_t n = rows.size(0);
  if (n == 0) {
    return {rows, raw::empty({0}, int64_on(rows)), raw::empty({0}, int64_on(rows))};
  }
  Tensor is_new = raw::ones({1}, TensorOptions(kBool).device(rows.device()));
  if (n > 1) {
    Tensor differs = raw::binary(raw::BinaryOp::Ne, raw::narrow(rows, 0, 1, n - 1), raw::narrow(rows, 0, 0, n - 1));
    // any along the row: a row of m == 0 elements equals its neighbour.
    Tensor any = raw::binary(raw::BinaryOp::Gt, raw::sum(differs, {1}), 0.0);
    is_new = raw::cat({is_new, any}, 0);
  }
  Tensor group = raw::add(raw::cumsum(is_new, 0), -1.0);  // int64
  Tensor starts = raw::reshape(raw::nonzero(is_new), {-1});  // read back to the host
  Tensor counts = raw::scatter_add({starts.numel()}, 0, group, raw::ones({n}, int64_on(rows)));
  return {raw::index_select(rows, 0, starts), group, counts};
}

// Checks unique's dim and torch's refusal of empty dims that are not the one selected.
int64_t unique_dim_of(const Tensor& t, int64_t dim, const char* op) {
  check_defined(t, op);
  if (t.dim() == 0) {
    throw std::out_of_range(std::string(op) + ": Dimension specified as " + std::to_string(dim) +
                            " but tensor has no dimensions");
  }
  const int64_t d = wrap_dim(dim, t.dim(), op);
  if (t.numel() == 0 && t.size(d) != 0) {
    throw std::invalid_argument(std::string(op) + ": There are 0 sized dimensions, and they aren't selected, so "
                                "unique cannot be applied");
  }
  return d;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& t, int64_t dim, bool sorted, bool return_inverse,
                                              bool return_counts) {
  (void)sorted;  // always sorted, as torch's unique with dim
  const int64_t d = unique_dim_of(t, dim, "unique");
  Tensor rows = slices_as_rows(t, d);
  const int64_t n = rows.size(0), m = rows.size(1);
  // The rows' lexicographic order by stable sorts of each column, from the last to the first (a
  // least-significant-digit radix sort over the columns): m sorts of n keys.
  Tensor order = raw::arange(0.0, static_cast<double>(n), 1.0, int64_on(t));
  for (int64_t j = m - 1; j >= 0 && n > 1; --j) {
    Tensor column = raw::index_select(raw::select(rows, 1, j), 0, order);
    order = raw::index_select(order, 0, raw::sort(column, 0).second);
  }
  Runs r = row_runs(raw::index_select(rows, 0, order));
  Tensor inverse = raw::empty({0}, int64_on(t));
  if (return_inverse) {
    // Row order[i] of t is in run group[i].
    inverse = raw::scatter_reduce(raw::zeros({n}, int64_on(t)), 0, order, r.group, raw::ScatterOp::Assign);
  }
  return {rows_as_slices(r.values, t, d), inverse, return_counts ? r.counts : raw::empty({0}, int64_on(t))};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  if (!dim) return unique_consecutive_flat(t, return_inverse, return_counts);
  const int64_t d = unique_dim_of(t, *dim, "unique_consecutive");
  Runs r = row_runs(slices_as_rows(t, d));
  return {rows_as_slices(r.values, t, d), return_inverse ? r.group : raw::empty({0}, int64_on(t)),
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

}  // namespace colony
