// softmax and log_softmax: the backward formulas live in tensor/ (raw::*_backward) next to their
// kernels; here they are wired to the saved output, and, for a backward with create_graph, made
// differentiable ops of (g, y) themselves.
#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

namespace {

// softmax's gradient y (g - sum(g y)). With history on g or y: its gradient for g is the same
// formula of gg; for y, gg (g - sum(g y)) - g sum(gg y).
Tensor softmax_grad(const Tensor& g, const Tensor& y, int64_t dim) {
  Tensor out = raw::softmax_backward(g, y, dim);
  if (autograd::needs_grad(g, y)) {
    SavedTensor sg(g), sy(y);
    record_differentiable("SoftmaxBackwardBackward", {g, y}, out, {sg, sy}, [sg, sy, dim](const Grads& gg, const Needs& needs) -> Grads {
      const Tensor grad = sg.unpack(), prob = sy.unpack();
      Tensor d_g, d_y;
      if (needs[0]) d_g = softmax_grad(gg[0], prob, dim);
      if (needs[1]) {
        d_y = sub(mul(gg[0], sub(grad, sum(mul(grad, prob), {dim}, true))), mul(grad, sum(mul(gg[0], prob), {dim}, true)));
      }
      return {d_g, d_y};
    });
  }
  return out;
}

// log_softmax's gradient g - exp(y) sum(g). With history: for g, gg - sum(gg exp(y)); for y,
// -gg exp(y) sum(g).
Tensor log_softmax_grad(const Tensor& g, const Tensor& y, int64_t dim) {
  Tensor out = raw::log_softmax_backward(g, y, dim);
  if (autograd::needs_grad(g, y)) {
    SavedTensor sg(g), sy(y);
    record_differentiable("LogSoftmaxBackwardBackward", {g, y}, out, {sg, sy}, [sg, sy, dim](const Grads& gg, const Needs& needs) -> Grads {
      const Tensor grad = sg.unpack(), p = exp(sy.unpack());
      Tensor d_g, d_y;
      if (needs[0]) d_g = sub(gg[0], sum(mul(gg[0], p), {dim}, true));
      if (needs[1]) d_y = neg(mul(mul(gg[0], p), sum(grad, {dim}, true)));
      return {d_g, d_y};
    });
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& t_arg, int64_t dim) {
  const Tensor t = autocast::cast(autocast::Op::softmax, t_arg);
  Tensor out = raw::softmax(t, dim);
  if (autograd::needs_grad(t)) {
    SavedTensor sy(out, /*is_output=*/true);
    record_differentiable("SoftmaxBackward", {t}, out, {sy}, [sy, dim](const Grads& g, const Needs&) -> Grads {
      return {softmax_grad(g[0], sy.unpack(), dim)};
    });
  }
  return out;
}

Tensor log_softmax(const Tensor& t_arg, int64_t dim) {
  const Tensor t = autocast::cast(autocast::Op::log_softmax, t_arg);
  Tensor out = raw::log_softmax(t, dim);
  if (autograd::needs_grad(t)) {
    SavedTensor sy(out, /*is_output=*/true);
    record_differentiable("LogSoftmaxBackward", {t}, out, {sy}, [sy, dim](const Grads& g, const Needs&) -> Grads {
      return {log_softmax_grad(g[0], sy.unpack(), dim)};
    });
  }
  return out;
}

}  // namespace colony
