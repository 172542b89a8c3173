// scaled_dot_product_attention: the fused forward saves its output and per-row log-sum-exp, and the
// backward kernel recomputes the weights from them (kernels/common/attention.h); the dropout mask
// is regenerated from the saved Philox draw, never stored.
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "ops/raw_nn_ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

namespace {

// PyTorch's pre_process_group_query_attention_input: with enable_gqa, key and value heads (dim -3)
// that divide the query's are repeated (repeat_interleave) up to the query's number of heads.
Tensor repeat_heads_for_gqa(const Tensor& q, const Tensor& kv, const char* what) {
  if (q.dim() < 3 || kv.dim() < 3) {
    throw std::invalid_argument(std::string("scaled_dot_product_attention: enable_gqa needs query and ") + what +
                                " with a heads dim ([..., H, L, E]), got " + shape_str(q.sizes()) + " and " +
                                shape_str(kv.sizes()));
  }
  const int64_t hq = q.size(-3), hkv = kv.size(-3);
  if (hkv == hq) return kv;
  if (hkv == 0 || hq % hkv != 0) {
    throw std::invalid_argument(std::string("scaled_dot_product_attention: with enable_gqa the number of heads of ") +
                                what + " (dim -3: " + std::to_string(hkv) +
                                ") must divide the query's (" + std::to_string(hq) + ")");
  }
  return repeat_interleave(kv, hq / hkv, -3);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q_arg, const Tensor& k_arg, const Tensor& v_arg,
                                    const Tensor& attn_mask_arg, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, Generator* gen) {
  using autocast::Op;
  const Tensor q = autocast::cast(Op::scaled_dot_product_attention, q_arg);
  Tensor k = autocast::cast(Op::scaled_dot_product_attention, k_arg);
  Tensor v = autocast::cast(Op::scaled_dot_product_attention, v_arg);
  if (enable_gqa && q.defined() && k.defined() && v.defined()) {
    k = repeat_heads_for_gqa(q, k, "key");
    v = repeat_heads_for_gqa(q, v, "value");
  }
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
