// cumsum: y_i = sum_{j <= i} x_j, so dL/dx_j = sum_{i >= j} g_i, the cumsum of the gradient taken
// from the end. The reversal is an index_select with descending positions (reversed_along in
// op_util.h; exact, unlike total - cumsum + g, which cancels in float32 over long dims).
#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::reversed_along;

Tensor cumsum(const Tensor& t_arg, int64_t dim) {
  // Under autocast a float16/bfloat16 running sum would lose the small terms: float32, as PyTorch.
  const Tensor t = autocast::cast(autocast::Op::cumsum, t_arg);
  Tensor out = raw::cumsum(t, dim);
  if (autograd::needs_grad(t)) {
    const int64_t d = wrap_dim(dim, t.dim(), "cumsum");
    const bool scalar = t.dim() == 0;
    record("CumsumBackward", {t}, out, {}, [d, scalar](const Grads& g, const Needs&) -> Grads {
      if (scalar || g[0].size(d) <= 1) return {g[0]};
      return {reversed_along(raw::cumsum(reversed_along(g[0], d), d), d)};
    });
  }
  return out;
}

}  // namespace colony
