// scaled_dot_product_attention: the fused forward saves its output and per-row log-sum-exp, and the
// backward kernel recomputes the weights from them (kernels/common/attention.h); the dropout mask
// is regenerated from the saved Philox draw, never stored.
#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "ops/raw_nn_ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

Tensor scaled_dot_product_attention(const Tensor& q_arg, const Tensor& k_arg, const Tensor& v_arg,
                                    const Tensor& attn_mask_arg, double dropout_p, bool is_causal,
                                    std::optional<double> scale, Generator* gen) {
  using autocast::Op;
  const Tensor q = autocast::cast(Op::scaled_dot_product_attention, q_arg);
  const Tensor k = autocast::cast(Op::scaled_dot_product_attention, k_arg);
  const Tensor v = autocast::cast(Op::scaled_dot_product_attention, v_arg);
  // A floating mask follows the operands (as PyTorch casts every floating argument); bool stays.
  const Tensor attn_mask = attn_mask_arg.defined() && attn_mask_arg.dtype() != kBool
                               ? autocast::cast(Op::scaled_dot_product_attention, attn_mask_arg)
                               : attn_mask_arg;
  raw::AttentionResult r = raw::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, gen);
  Tensor out = r.output;
  if (!autograd::needs_grad(q, k, v)) return out;
  SavedTensor sq(q), sk(k), sv(v), so(out, /*is_output=*/true);
  Tensor lse = r.lse;
  Tensor mask = attn_mask.defined() ? detach(attn_mask) : Tensor();
  kernels::PhiloxArgs philox = r.philox;
  const double used_scale = r.scale;
  record("ScaledDotProductAttentionBackward", {q, k, v}, out, {sq, sk, sv, so},
         [sq, sk, sv, so, lse, mask, philox, used_scale, dropout_p, is_causal](const Grads& g, const Needs&) -> Grads {
           raw::AttentionResult fwd;
           fwd.output = so.unpack();
           fwd.lse = lse;
           fwd.philox = philox;
           fwd.scale = used_scale;
           raw::AttentionGrads gr = raw::scaled_dot_product_attention_backward(
               g[0], sq.unpack(), sk.unpack(), sv.unpack(), mask, fwd, dropout_p, is_causal);
           return {gr.grad_q, gr.grad_k, gr.grad_v};
         });
  return out;
}

}  // namespace colony
