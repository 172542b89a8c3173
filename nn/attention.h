// nn::MultiheadAttention (torch.nn.MultiheadAttention): the packed input projection, per-head
// attention, and the output projection, with PyTorch's parameter names and initialization, so a
// state dict moves between the two unchanged:
//   in_proj_weight [3E, E] (xavier_uniform), in_proj_bias [3E] (zeros),
//   out_proj.weight [E, E] (Linear's init), out_proj.bias [E] (zeros).
// Not supported (PyTorch options): kdim/vdim different from embed_dim, add_bias_kv, add_zero_attn.
#pragma once

#include <optional>
#include <tuple>

#include "base/arg.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace colony::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  COLONY_ARG(int64_t, embed_dim);
  COLONY_ARG(int64_t, num_heads);
  COLONY_ARG(double, dropout) = 0.0;  // on the attention weights, while training
  COLONY_ARG(bool, bias) = true;      // in_proj_bias and out_proj.bias
  COLONY_ARG(bool, batch_first) = false;  // inputs [N, L, E] instead of [L, N, E]
};

class MultiheadAttention : public Module {
 public:
  explicit MultiheadAttention(const MultiheadAttentionOptions& options);
  MultiheadAttention(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads)) {}

  // query [L, N, E] (batch_first: [N, L, E]; unbatched [L, E]), key and value [S, N, E] likewise.
  // key_padding_mask [N, S] (unbatched [S]): bool, true = the key is ignored, or floating (added).
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
  Tensor in_proj_weight;  // [3E, E]
  Tensor in_proj_bias;    // [3E], undefined without bias
  std::shared_ptr<Linear> out_proj;
};

}  // namespace colony::nn
