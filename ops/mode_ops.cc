// mode: the dim moved last and made contiguous, each row stably sorted (raw::sort), then one scan of
// each sorted row for its longest run (kernels/common/mode.h); the results moved back.
#include <stdexcept>
#include <string>

#include "kernels/common/mode.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {

std::pair<Tensor, Tensor> mode(const Tensor& t, int64_t dim, bool keepdim) {
  check_defined(t, "mode");
  const int64_t d = wrap_dim(dim, t.dim(), "mode");
  const Tensor x = t.dim() == 0 ? reshape(t, {1}) : t;
  const int64_t n = x.size(d);
  if (n == 0) {
    throw std::invalid_argument("mode: expected reduction dim " + std::to_string(d) + " to have non-zero size");
  }
  Tensor rows_last = contiguous(transpose(x, d, -1));
  auto [sorted, order] = sort(rows_last, -1);
  sorted = contiguous(sorted);
  order = contiguous(order);
  Shape kept = rows_last.sizes();
  kept.back() = 1;
  Tensor values = empty(kept, TensorOptions(t.dtype()).device(t.device()));
  Tensor indices = empty(kept, TensorOptions(kInt64).device(t.device()));
  run_kernel<kernels::ModeOfSortedRows>(t.device(), t.dtype(), sorted.data_ptr_raw(), order.data_ptr<int64_t>(),
                                        values.data_ptr_raw(), indices.data_ptr<int64_t>(), rows_last.numel() / n, n);
  values = contiguous(transpose(values, d, -1));
  indices = contiguous(transpose(indices, d, -1));
  if (t.dim() == 0) return {reshape(values, {}), reshape(indices, {})};
  if (keepdim) return {values, indices};
  return {squeeze(values, d), squeeze(indices, d)};
}

}  // namespace colony::raw
