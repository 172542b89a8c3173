// unique, unique_consecutive, bincount and histc: results with no gradient
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

}  // namespace colony
