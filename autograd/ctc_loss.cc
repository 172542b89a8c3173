// The CTC loss's differentiable op: raw::ctc_loss's per-sample losses with a node whose backward is
// raw::ctc_loss_backward (the beta recursion; kernels/common/ctc_loss.h). The forward's alpha table,
// lengths and int64 targets are kept by the node, not recomputed.
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

Tensor ctc_loss_per_sample(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                           const std::vector<int64_t>& target_lengths, int64_t blank, bool zero_infinity) {
  raw::CtcLossResult r = raw::ctc_loss(log_probs, targets, input_lengths, target_lengths, blank);
  if (!autograd::needs_grad(log_probs)) return r.nll;
  SavedTensor saved(log_probs);
  Tensor nll = r.nll;
  r.nll = r.nll.detach();  // the node keeps the values, not an edge to its own output
  record("CtcLossBackward", {log_probs}, nll, {saved}, [saved, r, zero_infinity](const Grads& g, const Needs&) -> Grads {
    return {raw::ctc_loss_backward(raw::contiguous(g[0]), saved.unpack(), r, zero_infinity)};
  });
  return nll;
}

}  // namespace colony
