// median, nanmedian and kthvalue along a dim: the dim moved last and made contiguous, one selection
// per row (kernels/common/select.h), the results moved back.
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/common/select.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

using kernels::SelectKind;

// Where libstdc++'s std::nth_element leaves the first of n elements that all compare equivalent:
// the NaN torch's nanmedian names in a row of NaNs (its comparator finds NaNs equivalent). A
// function of n alone, so computed here once per call for every row.
int64_t nth_element_first_of_equivalent(int64_t n) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::nth_element(order.begin(), order.begin(), order.end(), [](int64_t, int64_t) { return false; });
  return order.front();
}

// Below this many rows, a CUDA median or nanmedian runs as a stable sort of each row instead of the
// one-thread-per-row selection, which would leave all but a few GPU threads idle (median() of all
// elements is one row). The stable sort names the same element as the selection (value, then
// position). A round number, not a measured crossover: no GPU has run this yet. kthvalue keeps the
// selection on every shape, because its ties follow torch's quickselect, which a sort does not give.
constexpr int64_t kCudaSortBelowRows = 1024;

// The median or nanmedian of each row of rows_last (the selected dim last, contiguous) from its
// stable sort (NaN last): (values, int64 indices), the last dim of size 1.
std::pair<Tensor, Tensor> median_by_sort(const Tensor& rows_last, SelectKind kind, int64_t all_nan_index) {
  const int64_t n = rows_last.size(-1);
  const Tensor order = sort(rows_last, -1).second;
  const Tensor nans = to(sum(unary(UnaryOp::IsNan, rows_last), {-1}, /*keepdim=*/true), rows_last.device(), kInt64);
  const Tensor valid = add(binary(BinaryOp::Mul, nans, -1.0), static_cast<double>(n));  // non-NaN count
  Shape kept = rows_last.sizes();
  kept.back() = 1;
  const TensorOptions int64_opts = TensorOptions(kInt64).device(rows_last.device());
  Tensor pos;
  if (kind == SelectKind::Median) {
    // (n - 1) / 2, or the first NaN (sorted to position n - nans) when the row has one.
    pos = where(binary(BinaryOp::Gt, nans, 0.0), valid, full(kept, static_cast<double>((n - 1) / 2), int64_opts));
  } else {
    // (valid - 1) / 2 of the non-NaN elements, which sort first; a row of NaNs sorts unchanged, so
    // position all_nan_index names the element the CPU's selection names.
    pos = where(binary(BinaryOp::Gt, valid, 0.0), binary(BinaryOp::FloorDivide, add(valid, -1.0), 2.0),
                full(kept, static_cast<double>(all_nan_index), int64_opts));
  }
  Tensor indices = gather(order, -1, pos);
  return {gather(rows_last, -1, indices), indices};
}

enum class Path { Auto, Sort };

std::pair<Tensor, Tensor> select_along(const Tensor& t, int64_t dim, bool keepdim, SelectKind kind, int64_t k,
                                       const char* op, Path path = Path::Auto) {
  check_defined(t, op);
  if (t.dtype() == kBool) {
    throw std::invalid_argument(std::string(op) + ": expected a numeric input, got bool (convert it first, e.g. "
                                "t.to(kInt64))");
  }
  const int64_t d = wrap_dim(dim, t.dim(), op);
  const Tensor x = t.dim() == 0 ? reshape(t, {1}) : t;
  const int64_t n = x.size(d);
  if (n == 0) {
    throw std::invalid_argument(std::string(op) + ": expected reduction dim " + std::to_string(d) +
                                " to have non-zero size");
  }
  if (kind == SelectKind::Kth && (k < 1 || k > n)) {
    throw std::out_of_range(std::string(op) + ": selected number k (" + std::to_string(k) +
                            ") out of range for dimension " + std::to_string(d) + " of size " + std::to_string(n) +
                            " (expected 1 <= k <= " + std::to_string(n) + ")");
  }
  Tensor rows_last = contiguous(transpose(x, d, -1));
  Shape kept = rows_last.sizes();
  kept.back() = 1;
  const int64_t rows = rows_last.numel() / n;
  const int64_t all_nan_index = kind == SelectKind::NanMedian ? nth_element_first_of_equivalent(n) : 0;
  Tensor values, indices;
  if (path == Path::Sort || (t.device().is_cuda() && kind != SelectKind::Kth && rows < kCudaSortBelowRows)) {
    std::tie(values, indices) = median_by_sort(rows_last, kind, all_nan_index);
  } else {
    values = empty(kept, TensorOptions(t.dtype()).device(t.device()));
    indices = empty(kept, TensorOptions(kInt64).device(t.device()));
    run_kernel<kernels::SelectRows>(t.device(), t.dtype(), rows_last.data_ptr_raw(), values.data_ptr_raw(),
                                    indices.data_ptr<int64_t>(), rows, n, kind, k, all_nan_index);
  }
  values = contiguous(transpose(values, d, -1));
  indices = contiguous(transpose(indices, d, -1));
  if (t.dim() == 0) return {reshape(values, {}), reshape(indices, {})};
  if (keepdim) return {values, indices};
  return {squeeze(values, d), squeeze(indices, d)};
}

}  // namespace

std::pair<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim) {
  return select_along(t, dim, keepdim, SelectKind::Median, 0, "median");
}

std::pair<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim) {
  return select_along(t, dim, keepdim, SelectKind::NanMedian, 0, "nanmedian");
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  return select_along(t, dim, keepdim, SelectKind::Kth, k, "kthvalue");
}

std::pair<Tensor, Tensor> median_by_sort(const Tensor& t, int64_t dim, bool keepdim, bool ignore_nan) {
  return select_along(t, dim, keepdim, ignore_nan ? SelectKind::NanMedian : SelectKind::Median, 0,
                      ignore_nan ? "nanmedian" : "median", Path::Sort);
}

}  // namespace colony::raw
