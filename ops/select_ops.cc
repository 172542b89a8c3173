// median, nanmedian and kthvalue along a dim: the dim moved last and made contiguous, one selection
// per row (kernels/common/select.h), the results moved back.
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
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

std::pair<Tensor, Tensor> select_along(const Tensor& t, int64_t dim, bool keepdim, SelectKind kind, int64_t k,
                                       const char* op) {
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
  Tensor values = empty(kept, TensorOptions(t.dtype()).device(t.device()));
  Tensor indices = empty(kept, TensorOptions(kInt64).device(t.device()));
  const int64_t all_nan_index = kind == SelectKind::NanMedian ? nth_element_first_of_equivalent(n) : 0;
  run_kernel<kernels::SelectRows>(t.device(), t.dtype(), rows_last.data_ptr_raw(), values.data_ptr_raw(),
                                  indices.data_ptr<int64_t>(), rows_last.numel() / n, n, kind, k, all_nan_index);
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

}  // namespace colony::raw
