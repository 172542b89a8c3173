// cumsum: inclusive prefix sums along one dim, read in place as [outer, dim, inner] (no permute).
#include <string>

#include "kernels/common/cumsum.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {

Tensor cumsum(const Tensor& t, int64_t dim, bool reverse) {
  const char* op = "cumsum";
  check_defined(t, op);
  const int64_t d = wrap_dim(dim, t.dim(), op);
  int64_t outer = 1, len = 1, inner = 1;
  if (t.dim() > 0) {
    for (int64_t i = 0; i < d; ++i) outer *= t.size(i);
    len = t.size(d);
    for (int64_t i = d + 1; i < t.dim(); ++i) inner *= t.size(i);
  }
  // Integral and bool inputs sum to int64, as torch.cumsum (and sum) do.
  const DType out_dtype = is_floating(t.dtype()) ? t.dtype() : kInt64;
  Tensor x = contiguous(t);
  Tensor y = empty(t.sizes(), TensorOptions(out_dtype).device(t.device()));
  if (y.numel() == 0) return y;
  run_kernel<kernels::Cumsum>(y.device(), t.dtype(), x.data_ptr_raw(), y.data_ptr_raw(), outer, len, inner,
                              reverse);
  return y;
}

}  // namespace colony::raw
