// Padding by reflection, replication or wrapping: each output element copies one input element,
// so the gradient sums, for each input element, the output gradients that copied it. That sum is
// the padding's transpose, and the padding is the sum's: under create_graph each is the other's
// gradient.
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"

namespace colony {

using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

namespace {

Tensor pad_by_mode_grad(const Tensor& g, kernels::PadMode mode, const std::vector<int64_t>& pad, const Shape& sizes) {
  Tensor out = raw::pad_by_mode_backward(g, mode, pad, sizes);
  if (autograd::needs_grad(g)) {
    record_differentiable("PadBackwardBackward", {g}, out, {}, [=](const Grads& gg, const Needs&) -> Grads {
      return {pad_by_mode(gg[0], mode, pad)};
    });
  }
  return out;
}

}  // namespace

Tensor pad_by_mode(const Tensor& input, kernels::PadMode mode, const std::vector<int64_t>& pad) {
  Tensor out = raw::pad_by_mode(input, mode, pad);
  if (autograd::needs_grad(input)) {
    const Shape sizes = input.sizes();
    record_differentiable("PadBackward", {input}, out, {}, [=](const Grads& g, const Needs&) -> Grads {
      return {pad_by_mode_grad(g[0], mode, pad, sizes)};
    });
  }
  return out;
}

}  // namespace colony
