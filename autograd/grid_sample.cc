// grid_sampler with its gradients w.r.t. the input and the grid, both from one backward kernel
// (raw::grid_sampler_backward, torch's grid_sampler_2d/3d_backward), which the node asks only for
// the gradients its inputs need. Under autocast, both inputs go to float32 first: torch's CPU list
// has grid_sampler in float32; its CUDA list in "promote" (to the widest of the two), which is float32
// too whenever the two dtypes differ; where both are 16-bit, CUDA torch keeps them and Colony widens
// (one row serves both devices).
#include "autograd/autocast.h"
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

Tensor grid_sampler(const Tensor& input_arg, const Tensor& grid_arg, kernels::GridSampleMode mode,
                    kernels::GridSamplePadding padding, bool align_corners) {
  const Tensor input = autocast::cast(autocast::Op::grid_sampler, input_arg);
  const Tensor grid = autocast::cast(autocast::Op::grid_sampler, grid_arg);
  Tensor out = raw::grid_sampler(input, grid, mode, padding, align_corners);
  if (autograd::needs_grad(input, grid)) {
    SavedTensor si(input), sg(grid);
    record("GridSampler" + std::to_string(input.dim() - 2) + "DBackward", {input, grid}, out, {si, sg},
           [si, sg, mode, padding, align_corners](const Grads& g, const Needs& needs) -> Grads {
             auto [gi, gg] = raw::grid_sampler_backward(g[0], si.unpack(), sg.unpack(), mode, padding, align_corners,
                                                        needs[0], needs[1]);
             return {gi, gg};
           });
  }
  return out;
}

}  // namespace colony
