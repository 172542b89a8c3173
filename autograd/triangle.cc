// tril and triu: each keeps some elements and zeroes the rest, so its gradient keeps the same ones.
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

Tensor tril(const Tensor& t, int64_t diagonal) {
  Tensor out = raw::tril(t, diagonal);
  if (autograd::needs_grad(t)) {
    record_differentiable("TrilBackward", {t}, out, {}, [diagonal](const Grads& g, const Needs&) -> Grads {
      return {tril(g[0], diagonal)};
    });
  }
  return out;
}

Tensor triu(const Tensor& t, int64_t diagonal) {
  Tensor out = raw::triu(t, diagonal);
  if (autograd::needs_grad(t)) {
    record_differentiable("TriuBackward", {t}, out, {}, [diagonal](const Grads& g, const Needs&) -> Grads {
      return {triu(g[0], diagonal)};
    });
  }
  return out;
}

}  // namespace colony
