// nn::MultiheadAttention (torch.nn.MultiheadAttention): the input projections, per-head attention,
// and the output projection, with PyTorch's parameter names, order and initialization, so a state
// dict moves between the two unchanged:
//   in_proj_weight [3E, E] (xavier_uniform) when key and value have E features, otherwise (kdim or
//   vdim differs from E) q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim]
//   (each xavier_uniform); in_proj_bias [3E] (zeros); with add_bias_kv, bias_k and bias_v [1, 1, E]
//   (xavier_normal); out_proj.weight [E, E] (Linear's init), out_proj.bias [E] (zeros).
#pragma once

#include <optional>
#include <tuple>

#include "base/arg.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace colony::nn {

struct MultiheadAttentionOptions {
  // kdim and vdim default to embed_dim, as libtorch's options (PyTorch's None).
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  COLONY_ARG(int64_t, embed_dim);
  COLONY_ARG(int64_t, num_heads);
  COLONY_ARG(double, dropout) = 0.0;  // on the attention weights, while training
  COLONY_ARG(bool, bias) = true;      // in_proj_bias and out_proj.bias
  // A learned key and value (bias_k, bias_v) appended to every sequence of keys and values.
  COLONY_ARG(bool, add_bias_kv) = false;
  // A key and value of zeros appended (after bias_k/bias_v), per head.
  COLONY_ARG(bool, add_zero_attn) = false;
  COLONY_ARG(int64_t, kdim);  // features of key
  COLONY_ARG(int64_t, vdim);  // features of value
  COLONY_ARG(bool, batch_first) = false;  // inputs [N, L, E] instead of [L, N, E]
};

// torch's class of MultiheadAttention.out_proj: a Linear under another name (torch keeps dynamic
// quantization away from it), which a printed model shows: "(out_proj):
// NonDynamicallyQuantizableLinear(in_features=64, ...)". Everything else is Linear's.
class NonDynamicallyQuantizableLinear : public Linear {
  COLONY_CLONEABLE
 public:
  using Linear::Linear;
};

class MultiheadAttention : public Module {
  COLONY_CLONEABLE
 public:
  explicit MultiheadAttention(const MultiheadAttentionOptions& options);
  MultiheadAttention(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads)) {}

  // query [L, N, E] (batch_first: [N, L, E]; unbatched [L, E]), key [S, N, kdim] and value
  // [S, N, vdim] likewise. The input projection is one product when query, key and value are one
  // tensor (self-attention) and one for key and value when those two are (attention over a memory).
  // key_padding_mask [N, S] (unbatched [S]): bool, true = the key is ignored, or floating (added).
  // Masks are given for the S keys; the keys add_bias_kv and add_zero_attn append are never masked.
  // attn_mask [L, S] or [N * num_heads, L, S]: bool, true = not allowed, or floating (added).
  // is_causal is PyTorch's hint that attn_mask is the causal mask (it needs one): without
  // key_padding_mask and with need_weights false the fused kernel's causal path replaces it.
  // Returns (output shaped as query, weights): with need_weights, the attention weights [N, L, S]
  // averaged over heads (average_attn_weights) or [N, num_heads, L, S]; otherwise an undefined
  // tensor, and the attention runs as one fused kernel (F::scaled_dot_product_attention).
  // The optional arguments take PyTorch's defaults when left out (need_weights = true,
  // average_attn_weights = true, is_causal = false), so AnyModule calls work with 3 to 8 arguments.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     std::optional<Tensor> key_padding_mask = std::nullopt,
                                     std::optional<bool> need_weights = std::nullopt,
                                     std::optional<Tensor> attn_mask = std::nullopt,
                                     std::optional<bool> average_attn_weights = std::nullopt,
                                     std::optional<bool> is_causal = std::nullopt);
  void reset_parameters();
  std::string extra_repr() const override;

  MultiheadAttentionOptions options;
  int64_t head_dim;
  // Whether key and value have embed_dim features (PyTorch's _qkv_same_embed_dim): the three
  // projections are then rows of in_proj_weight, otherwise q_proj_weight, k_proj_weight and
  // v_proj_weight (and in_proj_weight is undefined).
  bool qkv_same_embed_dim;
  Tensor in_proj_weight;  // [3E, E]
  Tensor q_proj_weight;   // [E, E]
  Tensor k_proj_weight;   // [E, kdim]
  Tensor v_proj_weight;   // [E, vdim]
  Tensor in_proj_bias;    // [3E], undefined without bias
  Tensor bias_k, bias_v;  // [1, 1, E] with add_bias_kv
  std::shared_ptr<Linear> out_proj;
};

}  // namespace colony::nn
