#include "nn/attention.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "ops/raw_ops.h"

namespace colony::nn {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("MultiheadAttention: " + what); }

// A bool mask (true = masked out, MultiheadAttention's sense) as the additive float mask
// PyTorch's _canonical_mask makes of it: -inf where true, 0 elsewhere; a float mask as is.
Tensor additive_mask(const Tensor& mask, const Tensor& like, const char* what) {
  if (mask.dtype() == kBool) {
    const TensorOptions o = TensorOptions(like.dtype()).device(like.device());
    return raw::where(mask, raw::scalar_tensor(-std::numeric_limits<double>::infinity(), o), raw::scalar_tensor(0.0, o));
  }
  if (!is_floating(mask.dtype())) fail(std::string(what) + " must be bool or floating, got " + dtype_name(mask.dtype()));
  return mask.dtype() == like.dtype() ? mask : to(mask, like.device(), like.dtype());
}

}  // namespace

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& o) : options(o) {
  const int64_t E = o.embed_dim(), H = o.num_heads();
  if (E <= 0 || H <= 0) {
    fail("embed_dim and num_heads must be positive, got " + std::to_string(E) + " and " + std::to_string(H));
  }
  if (E % H != 0) fail("embed_dim must be divisible by num_heads, got " + std::to_string(E) + " and " + std::to_string(H));
  if (o.kdim() <= 0 || o.vdim() <= 0) {
    fail("kdim and vdim must be positive, got " + std::to_string(o.kdim()) + " and " + std::to_string(o.vdim()));
  }
  if (!(o.dropout() >= 0.0 && o.dropout() <= 1.0)) fail("dropout must be in [0, 1], got " + std::to_string(o.dropout()));
  head_dim = E / H;
  qkv_same_embed_dim = o.kdim() == E && o.vdim() == E;
  // PyTorch's registration order, which is its state dict's: the projections, in_proj_bias,
  // bias_k and bias_v, then out_proj's.
  if (qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", raw::empty({3 * E, E}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", raw::empty({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", raw::empty({E, o.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", raw::empty({E, o.vdim()}));
  }
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", raw::empty({3 * E}));
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", raw::empty({1, 1, E}));
    bias_v = register_parameter("bias_v", raw::empty({1, 1, E}));
  }
  out_proj = register_module("out_proj", std::make_shared<NonDynamicallyQuantizableLinear>(LinearOptions(E, E).bias(o.bias())));
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  // PyTorch's MultiheadAttention._reset_parameters, in its order (the draws follow it): the
  // projections xavier_uniform_, zero biases (out_proj keeps Linear's weight init), bias_k and
  // bias_v xavier_normal_.
  if (qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
  if (bias_k.defined()) {
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query_in, const Tensor& key_in,
                                                       const Tensor& value_in, std::optional<Tensor> key_padding_mask,
                                                       std::optional<bool> need_weights_arg,
                                                       std::optional<Tensor> attn_mask_arg,
                                                       std::optional<bool> average_arg, std::optional<bool> causal_arg) {
  const bool need_weights = need_weights_arg.value_or(true), average = average_arg.value_or(true);
  bool is_causal = causal_arg.value_or(false);
  const int64_t E = options.embed_dim(), H = options.num_heads(), D = head_dim;
  for (const Tensor* t : {&query_in, &key_in, &value_in}) {
    if (!t->defined()) fail("query, key and value must be defined");
  }
  const bool batched = query_in.dim() == 3;
  if (!batched && query_in.dim() != 2) fail("query must be 3-D (batched) or 2-D (unbatched), got " + shape_str(query_in.sizes()));
  if (key_in.dim() != query_in.dim() || value_in.dim() != query_in.dim()) {
    fail("query " + shape_str(query_in.sizes()) + ", key " + shape_str(key_in.sizes()) + " and value " +
         shape_str(value_in.sizes()) + " must all be batched (3-D) or all unbatched (2-D)");
  }
  // Work in [L, N, E] whatever the layout given.
  Tensor query = batched ? query_in : query_in.unsqueeze(1);
  Tensor key = batched ? key_in : key_in.unsqueeze(1);
  Tensor value = batched ? value_in : value_in.unsqueeze(1);
  if (batched && options.batch_first()) {
    query = query.transpose(0, 1);
    key = key.transpose(0, 1);
    value = value.transpose(0, 1);
  }
  const int64_t L = query.size(0), N = query.size(1), S = key.size(0);
  if (query.size(2) != E || key.size(2) != options.kdim() || value.size(2) != options.vdim()) {
    fail("query, key and value must have embed_dim = " + std::to_string(E) + ", kdim = " +
         std::to_string(options.kdim()) + " and vdim = " + std::to_string(options.vdim()) + " features, got " +
         shape_str(query_in.sizes()) + ", " + shape_str(key_in.sizes()) + " and " + shape_str(value_in.sizes()));
  }
  if (key.size(1) != N || value.size(1) != N || value.size(0) != S) {
    fail("key " + shape_str(key_in.sizes()) + " and value " + shape_str(value_in.sizes()) +
         " must have the query's batch size and one sequence length");
  }

  // The input projections, as PyTorch's _in_projection_packed and _in_projection: one product
  // when query, key and value are one tensor (self-attention), one for key and value when those
  // two are (attention over an encoder's memory), else one each. The results are views of the
  // products, which the fused kernel reads through their strides.
  Tensor q, k, v;
  auto bias = [&](int64_t i, int64_t n) { return in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, n * E) : Tensor(); };
  if (!qkv_same_embed_dim) {
    q = functional::linear(query, q_proj_weight, bias(0, 1));
    k = functional::linear(key, k_proj_weight, bias(1, 1));
    v = functional::linear(value, v_proj_weight, bias(2, 1));
  } else if (query_in.is_same(key_in) && key_in.is_same(value_in)) {
    Tensor qkv = functional::linear(query, in_proj_weight, in_proj_bias);  // [L, N, 3E]
    q = qkv.narrow(2, 0, E);
    k = qkv.narrow(2, E, E);
    v = qkv.narrow(2, 2 * E, E);
  } else if (key_in.is_same(value_in)) {
    q = functional::linear(query, in_proj_weight.narrow(0, 0, E), bias(0, 1));
    Tensor kv = functional::linear(key, in_proj_weight.narrow(0, E, 2 * E), bias(1, 2));  // [S, N, 2E]
    k = kv.narrow(2, 0, E);
    v = kv.narrow(2, E, E);
  } else {
    q = functional::linear(query, in_proj_weight.narrow(0, 0, E), bias(0, 1));
    k = functional::linear(key, in_proj_weight.narrow(0, E, E), bias(1, 1));
    v = functional::linear(value, in_proj_weight.narrow(0, 2 * E, E), bias(2, 1));
  }
  // add_bias_kv: one more key and value, the same for every sequence of the batch.
  if (bias_k.defined()) {
    k = cat({k, bias_k.expand({1, N, E})}, 0);
    v = cat({v, bias_v.expand({1, N, E})}, 0);
  }
  const int64_t keys = k.size(0);
  // [L, N, E] -> [N, H, L, D]: views, which the fused kernel reads through their strides.
  q = q.reshape({L, N, H, D}).permute({1, 2, 0, 3});
  k = k.reshape({keys, N, H, D}).permute({1, 2, 0, 3});
  v = v.reshape({keys, N, H, D}).permute({1, 2, 0, 3});
  // add_zero_attn: one more key and value of zeros for every head.
  if (options.add_zero_attn()) {
    Tensor zero = zeros({N, H, 1, D}, TensorOptions(q.dtype()).device(q.device()));
    k = cat({k, zero}, 2);
    v = cat({v, zero}, 2);
  }

  // Masks, merged into one additive mask broadcastable to [N, H, L, S] (PyTorch's merge).
  Tensor mask;
  if (attn_mask_arg && attn_mask_arg->defined()) {
    const Tensor& m = *attn_mask_arg;
    if (m.dim() == 2) {
      if (m.size(0) != L || m.size(1) != S) fail("2-D attn_mask must be [L, S] = " + shape_str({L, S}) + ", got " + shape_str(m.sizes()));
      mask = additive_mask(m, q, "attn_mask");
    } else if (m.dim() == 3) {
      if (m.size(0) != N * H || m.size(1) != L || m.size(2) != S) {
        fail("3-D attn_mask must be [N * num_heads, L, S] = " + shape_str({N * H, L, S}) + ", got " + shape_str(m.sizes()));
      }
      mask = additive_mask(m, q, "attn_mask").reshape({N, H, L, S});
    } else {
      fail("attn_mask must be 2-D or 3-D, got " + shape_str(m.sizes()));
    }
  } else if (is_causal) {
    fail("is_causal is a hint that attn_mask is the causal mask: it needs attn_mask (PyTorch's rule)");
  }
  const bool has_padding = key_padding_mask && key_padding_mask->defined();
  if (has_padding) {
    const Tensor& m = *key_padding_mask;
    const Shape expected = batched ? Shape{N, S} : Shape{S};
    if (m.sizes() != expected) fail("key_padding_mask must be " + shape_str(expected) + ", got " + shape_str(m.sizes()));
    Tensor pad = additive_mask(m, q, "key_padding_mask").reshape({N, 1, 1, S});
    mask = mask.defined() ? add(mask, pad) : pad;
  }
  // The appended keys are allowed for every query (PyTorch pads its masks with zero columns).
  if (mask.defined() && k.size(2) > S) mask = functional::pad(mask, {0, k.size(2) - S});
  const double p = is_training() ? options.dropout() : 0.0;

  Tensor attn, weights;  // attn [N, H, L, D]
  if (!need_weights) {
    // The hint holds: the kernel's causal rule replaces the mask (PyTorch does the same).
    const bool use_causal = is_causal && !has_padding;
    attn = functional::scaled_dot_product_attention(q, k, v, use_causal ? Tensor() : mask, p, use_causal);
  } else {
    // The weights are returned, so they are formed: softmax(q k^T / sqrt(D) + mask), as PyTorch.
    Tensor scores = matmul(mul(q, 1.0 / std::sqrt(static_cast<double>(D))), k.transpose(-2, -1));
    if (mask.defined()) scores = add(scores, mask);
    weights = softmax(scores, -1);
    // PyTorch returns the weights after dropout.
    if (p > 0) weights = functional::dropout(weights, p, true);
    attn = matmul(weights, v);
  }
  // [N, H, L, D] -> [L, N, E], then the output projection.
  Tensor out = out_proj->forward(attn.permute({2, 0, 1, 3}).reshape({L, N, E}));
  if (batched && options.batch_first()) out = out.transpose(0, 1);
  if (!batched) out = out.squeeze(1);
  if (weights.defined()) {
    if (average) weights = weights.mean({1});
    if (!batched) weights = weights.squeeze(0);
  }
  return {out, weights};
}

std::string MultiheadAttention::extra_repr() const {
  // PyTorch prints only the submodule, "(out_proj): NonDynamicallyQuantizableLinear(...)".
  return "";
}

}  // namespace colony::nn
