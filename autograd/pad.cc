// Padding by reflection, replication or wrapping: each output element copies one input element,
// so the gradient sums, for each input element, the output gradients that copied it.
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"

namespace colony {

using autograd::record;
using autograd::detail::Grads;
using autograd::detail::Needs;

Tensor pad_by_mode(const Tensor& input, kernels::PadMode mode, const std::vector<int64_t>& pad) {
  Tensor out = raw::pad_by_mode(input, mode, pad);
  if (autograd::needs_grad(input)) {
    const Shape sizes = input.sizes();
    record("PadBackward", {input}, out, {}, [=](const Grads& g, const Needs&) -> Grads {
      return {raw::pad_by_mode_backward(g[0], mode, pad, sizes)};
    });
  }
  return out;
}

}  // namespace colony
