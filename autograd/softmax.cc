// softmax and log_softmax: the backward formulas live in tensor/ (raw::*_backward) next to their
// kernels; here they are wired to the saved output.
#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

Tensor softmax(const Tensor& t_arg, int64_t dim) {
  const Tensor t = autocast::cast(autocast::Op::softmax, t_arg);
  Tensor out = raw::softmax(t, dim);
  if (autograd::needs_grad(t)) {
    SavedTensor sy(out, /*is_output=*/true);
    record("SoftmaxBackward", {t}, out, {sy}, [sy, dim](const Grads& g, const Needs&) -> Grads {
      return {raw::softmax_backward(g[0], sy.unpack(), dim)};
    });
  }
  return out;
}

Tensor log_softmax(const Tensor& t_arg, int64_t dim) {
  const Tensor t = autocast::cast(autocast::Op::log_softmax, t_arg);
  Tensor out = raw::log_softmax(t, dim);
  if (autograd::needs_grad(t)) {
    SavedTensor sy(out, /*is_output=*/true);
    record("LogSoftmaxBackward", {t}, out, {sy}, [sy, dim](const Grads& g, const Needs&) -> Grads {
      return {raw::log_softmax_backward(g[0], sy.unpack(), dim)};
    });
  }
  return out;
}

}  // namespace colony
