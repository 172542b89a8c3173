// scaled_dot_product_attention: the fused forward saves its output and per-row log-sum-exp, and the
// backward kernel recomputes the weights from them (kernels/common/attention.h); the dropout mask
// is regenerated from the saved Philox draw, never stored. Without dropout, a backward with
// create_graph differentiates the math it fuses (softmax(q k^T scale + mask) v) instead.
#include <limits>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/composite_backward.h"
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

// What the fused kernels compute, from differentiable ops (torch's math reference,
// _scaled_dot_product_attention_math, without dropout): softmax(q k^T scale + bias) v, where the
// bias is a float mask as given, or 0 where a bool mask (or the causal lower triangle, aligned to
// the top left) keeps a position and -inf where it drops one.
Tensor attention_composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal,
                           double scale) {
  using autograd::detail::scalar_like;
  Tensor scores = mul(matmul(q, transpose(k, -2, -1)), scale);
  const double inf = std::numeric_limits<double>::infinity();
  auto as_bias = [&](const Tensor& keep) { return raw::where(keep, scalar_like(0.0, q), scalar_like(-inf, q)); };
  if (is_causal) {
    const int64_t l = q.size(-2), s = k.size(-2);
    scores = add(scores, as_bias(raw::tril(raw::ones({l, s}, TensorOptions(kBool).device(q.device())))));
  }
  if (mask.defined()) scores = add(scores, mask.dtype() == kBool ? as_bias(mask) : mask);
  return matmul(softmax(scores, -1), v);
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
  auto fused = [sq, sk, sv, so, lse, mask, philox, used_scale, dropout_p, is_causal](const Grads& g,
                                                                                     const Needs&) -> Grads {
    raw::AttentionResult fwd;
    fwd.output = so.unpack();
    fwd.lse = lse;
    fwd.philox = philox;
    fwd.scale = used_scale;
    raw::AttentionGrads gr = raw::scaled_dot_product_attention_backward(g[0], sq.unpack(), sk.unpack(), sv.unpack(),
                                                                        mask, fwd, dropout_p, is_causal);
    return {gr.grad_q, gr.grad_k, gr.grad_v};
  };
  const char* name = "ScaledDotProductAttentionBackward";
  if (dropout_p > 0.0) {
    // The dropout mask lives only in the kernels (regenerated from the Philox draw): with dropout
    // the op is differentiable once, and a second backward through it throws.
    record(name, {q, k, v}, out, {sq, sk, sv, so}, fused);
  } else {
    autograd::detail::record_fused(name, {q, k, v}, out, {sq, sk, sv, so}, fused,
                                   [mask, is_causal, used_scale](const std::vector<Tensor>& in) -> std::vector<Tensor> {
                                     return {attention_composite(in[0], in[1], in[2], mask, is_causal, used_scale)};
                                   });
  }
  return out;
}

}  // namespace colony
