// nn::TransformerEncoderLayer (torch.nn.TransformerEncoderLayer): self-attention and a
// feed-forward block, each with dropout, a residual connection and LayerNorm, after (post-norm)
// or before (norm_first) the block. Its children and parameters are PyTorch's, in PyTorch's
// order (self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2), so state dicts
// match. The self-attention runs the fused kernel (need_weights false).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/arg.h"
#include "nn/attention.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/normalization.h"

namespace colony::nn {

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  COLONY_ARG(int64_t, d_model);
  COLONY_ARG(int64_t, nhead);
  COLONY_ARG(int64_t, dim_feedforward) = 2048;
  COLONY_ARG(double, dropout) = 0.1;
  COLONY_ARG(std::string, activation) = "relu";  // "relu" or "gelu", as PyTorch's string form
  COLONY_ARG(double, layer_norm_eps) = 1e-5;
  COLONY_ARG(bool, batch_first) = false;
  COLONY_ARG(bool, norm_first) = false;
  COLONY_ARG(bool, bias) = true;
};

class TransformerEncoderLayer : public Module {
 public:
  explicit TransformerEncoderLayer(const TransformerEncoderLayerOptions& options);
  TransformerEncoderLayer(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayer(TransformerEncoderLayerOptions(d_model, nhead)) {}

  // src [S, N, E] (batch_first: [N, S, E]; unbatched [S, E]); src_mask [S, S] or
  // [N * nhead, S, S], bool (true = not allowed) or additive; src_key_padding_mask [N, S] (true =
  // ignored); is_causal: the hint that src_mask is the causal mask (MultiheadAttention's rule).
  Tensor forward(const Tensor& src, std::optional<Tensor> src_mask = std::nullopt,
                 std::optional<Tensor> src_key_padding_mask = std::nullopt, std::optional<bool> is_causal = std::nullopt);
  std::string extra_repr() const override { return ""; }

  TransformerEncoderLayerOptions options;
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 private:
  Tensor self_attention_block(const Tensor& x, const std::optional<Tensor>& mask, const std::optional<Tensor>& padding,
                              bool is_causal);
  Tensor feed_forward_block(const Tensor& x);
};

}  // namespace colony::nn
