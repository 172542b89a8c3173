// cross_entropy_loss (and nll_loss, its log_probs form): one fused kernel each way
// (kernels/common/cross_entropy.h), differentiated twice through the loss's definition.
#include <vector>

#include "autograd/autocast.h"
#include "autograd/composite_backward.h"
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

// The loss as kernels/common/cross_entropy.h defines it, for a backward with create_graph: each
// counted row's -sum_c q_c lp_c, with lp the log-probabilities and q the target's one-hot smoothed
// to (1 - eps) [c == t] + eps / C; ignored rows weigh nothing; Mean divides by the forward's count.
Tensor cross_entropy_composite(const Tensor& x, const Tensor& target, const Tensor& counted,
                               const raw::CrossEntropyOptions& o) {
  const int64_t classes = x.size(1);
  const Tensor lp = o.log_probs ? x : log_softmax(x, 1);
  const Tensor is_counted = ne(target, static_cast<double>(o.ignore_index));
  // An ignored row's target (say -100) is no class: it picks class 0, weighted by zero below.
  const Tensor one_hot_target = to(one_hot(mul(target, is_counted), classes), x.device(), x.dtype());
  const double eps = o.label_smoothing;
  Tensor q = eps == 0.0 ? one_hot_target : add(mul(one_hot_target, 1.0 - eps), eps / static_cast<double>(classes));
  q = mul(q, unsqueeze(to(is_counted, x.device(), x.dtype()), 1));
  const Tensor row_loss = neg(sum(mul(lp, q), {1}));
  switch (o.reduction) {
    case raw::LossReduction::None: return row_loss;
    case raw::LossReduction::Sum: return sum(row_loss);
    case raw::LossReduction::Mean: return div(sum(row_loss), reshape(to(counted, x.device(), x.dtype()), {}));
  }
  return row_loss;
}

}  // namespace

Tensor cross_entropy_loss(const Tensor& input_arg, const Tensor& target, const raw::CrossEntropyOptions& options) {
  const Tensor input =
      autocast::cast(options.log_probs ? autocast::Op::nll_loss : autocast::Op::cross_entropy, input_arg);
  raw::CrossEntropyResult r = raw::cross_entropy_loss(input, target, options);
  if (!autograd::needs_grad(input)) return r.loss;
  SavedTensor si(input), st(target);
  Tensor lse = r.lse, counted = r.counted;
  autograd::detail::record_fused(
      options.log_probs ? "NllLossBackward" : "CrossEntropyLossBackward", {input}, r.loss, {si, st},
      [si, st, lse, counted, options](const Grads& g, const Needs&) -> Grads {
        return {raw::cross_entropy_loss_backward(g[0], si.unpack(), st.unpack(), lse, counted, options)};
      },
      [st, counted, options](const std::vector<Tensor>& in) -> std::vector<Tensor> {
        return {cross_entropy_composite(in[0], st.unpack(), counted, options)};
      });
  return r.loss;
}

}  // namespace colony
