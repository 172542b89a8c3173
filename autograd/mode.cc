// mode: raw::mode's indices, and the values gathered at them through the differentiable gather, so
// the gradient goes to the element each value was taken from (torch's
// value_selecting_reduction_backward).
#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "ops/raw_ops.h"

namespace colony {

std::pair<Tensor, Tensor> mode(const Tensor& t, int64_t dim, bool keepdim) {
  auto [values, indices] = raw::mode(t, dim, keepdim);
  if (!autograd::needs_grad(t)) return {values, indices};
  // Gathered again, with history: the kept-dim indices select the element of each row.
  const int64_t d = wrap_dim(dim, t.dim(), "mode");
  const Tensor x = t.dim() == 0 ? reshape(t, {1}) : t;
  const Tensor at = t.dim() == 0 ? raw::reshape(indices, {1}) : keepdim ? indices : raw::unsqueeze(indices, d);
  Tensor picked = gather(x, d, at);
  if (t.dim() == 0) return {reshape(picked, {}), indices};
  return {keepdim ? picked : squeeze(picked, d), indices};
}

}  // namespace colony
