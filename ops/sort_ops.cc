// sort and topk: the dim is moved last and made contiguous (a copy unless it already is), each row
// is sorted by the kernel, and the results are moved back. NaN sorts as the largest value, as in
// PyTorch.
#include <stdexcept>
#include <string>

#include "kernels/common/sort.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

// The first k of each row's stable sort along `dim`: values with t's dtype, int64 indices, both of
// t's shape with dim's size k.
std::pair<Tensor, Tensor> sorted_prefix(const Tensor& t, int64_t d, int64_t k, bool descending) {
  const int64_t nd = t.dim();
  Tensor x = nd == 0 ? reshape(t, {1}) : t;
  Tensor rows_last = contiguous(transpose(x, d, -1));
  const int64_t n = x.size(d);
  const int64_t rows = n == 0 ? 0 : rows_last.numel() / n;
  Shape out_shape = rows_last.sizes();
  out_shape.back() = k;
  Tensor values = empty(out_shape, TensorOptions(t.dtype()).device(t.device()));
  Tensor indices = empty(out_shape, TensorOptions(kInt64).device(t.device()));
  if (rows * k > 0) {
    size_t bytes = 0;
    run_kernel<kernels::SortWorkspaceBytes>(t.device(), t.dtype(), rows, n, descending, &bytes);
    Tensor workspace;
    if (bytes > 0) workspace = empty({static_cast<int64_t>(bytes)}, TensorOptions(kUInt8).device(t.device()));
    run_kernel<kernels::SortRows>(t.device(), t.dtype(), rows_last.data_ptr_raw(), values.data_ptr_raw(),
                                  indices.data_ptr<int64_t>(), rows, n, k, descending,
                                  bytes > 0 ? workspace.data_ptr_raw() : nullptr);
  }
  values = transpose(values, d, -1);
  indices = transpose(indices, d, -1);
  if (nd == 0) return {reshape(values, {}), reshape(indices, {})};
  return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending) {
  check_defined(t, "sort");
  const int64_t d = wrap_dim(dim, t.dim(), "sort");
  return sorted_prefix(t, d, t.dim() == 0 ? 1 : t.size(d), descending);
}

std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;  // the k values always come out sorted, which sorted=false permits
  check_defined(t, "topk");
  const int64_t d = wrap_dim(dim, t.dim(), "topk");
  const int64_t size = t.dim() == 0 ? 1 : t.size(d);
  if (k < 0 || k > size) {
    throw std::out_of_range("topk: k (" + std::to_string(k) + ") is out of range for dimension " + std::to_string(d) +
                            " of size " + std::to_string(size) + " (expected 0 <= k <= " + std::to_string(size) + ")");
  }
  return sorted_prefix(t, d, k, largest);
}

}  // namespace colony::raw
