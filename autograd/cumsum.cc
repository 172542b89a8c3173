// cumsum: y_i = sum_{j <= i} x_j, so dL/dx_j = sum_{i >= j} g_i, the cumsum of the gradient taken
// from the end: the kernel's reversed scan (raw::cumsum's `reverse`: flip, cumsum, flip's
// additions in one pass; exact, unlike total - cumsum + g, which cancels in float32 over long
// dims). Two index_select reversals around a cumsum took 40 ms of a [4096, 1024] float32
// backward against torch's 13 (op_sweep, 1 thread, 2026-12-07). The reversed scan's own gradient
// (under create_graph) is the forward scan: each is the other's transpose.
#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

namespace {

Tensor reversed_cumsum(const Tensor& g, int64_t d) {
  Tensor out = raw::cumsum(g, d, /*reverse=*/true);
  if (autograd::needs_grad(g)) {
    record_differentiable("CumsumBackwardBackward", {g}, out, {}, [d](const Grads& gg, const Needs&) -> Grads {
      return {cumsum(gg[0], d)};
    });
  }
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& t_arg, int64_t dim) {
  // Under autocast a float16/bfloat16 running sum would lose the small terms: float32, as PyTorch.
  const Tensor t = autocast::cast(autocast::Op::cumsum, t_arg);
  Tensor out = raw::cumsum(t, dim);
  if (autograd::needs_grad(t)) {
    const int64_t d = wrap_dim(dim, t.dim(), "cumsum");
    const bool scalar = t.dim() == 0;
    record_differentiable("CumsumBackward", {t}, out, {}, [d, scalar](const Grads& g, const Needs&) -> Grads {
      if (scalar || g[0].size(d) <= 1) return {g[0]};
      return {reversed_cumsum(g[0], d)};
    });
  }
  return out;
}

}  // namespace colony
