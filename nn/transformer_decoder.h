// nn::TransformerDecoderLayer (torch.nn.TransformerDecoderLayer): self-attention over the target,
// attention over the encoder's output (memory), and a feed-forward block, each with dropout, a
// residual connection and LayerNorm, after (post-norm) or before (norm_first) the block. Its
// children and parameters are PyTorch's, in PyTorch's order (self_attn, multihead_attn, linear1,
// dropout, linear2, norm1, norm2, norm3, dropout1, dropout2, dropout3), so state dicts match. Both
// attentions run the fused kernel (need_weights false). Its pieces are the encoder layer's
// (nn/transformer_blocks.h).
// nn::TransformerDecoder (torch.nn.TransformerDecoder): num_layers copies of one layer in
// `layers` (a ModuleList), then an optional final norm.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/arg.h"
#include "nn/attention.h"
#include "nn/containers.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/normalization.h"
#include "nn/transformer.h"

namespace colony::nn {

class TransformerDecoderLayer : public Module {
  COLONY_CLONEABLE
 public:
  // TransformerDecoderLayerOptions is TransformerLayerOptions (nn/transformer.h): d_model, nhead,
  // dim_feedforward 2048, dropout 0.1, activation "relu" | "gelu", layer_norm_eps 1e-5,
  // batch_first, norm_first, bias. Throws std::invalid_argument for an unknown activation, nhead
  // not dividing d_model, or a size that is not positive.
  explicit TransformerDecoderLayer(const TransformerDecoderLayerOptions& options);
  TransformerDecoderLayer(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayer(TransformerDecoderLayerOptions(d_model, nhead)) {}

  // tgt [T, N, E] and memory [S, N, E] (batch_first: [N, T, E] and [N, S, E]; unbatched [T, E] and
  // [S, E]), E = d_model. tgt_mask [T, T] or [N * nhead, T, T] and memory_mask [T, S] or
  // [N * nhead, T, S]: bool (true = not allowed) or additive. tgt_key_padding_mask [N, T] and
  // memory_key_padding_mask [N, S] (unbatched [T] and [S]): true = that key is ignored.
  // tgt_is_causal / memory_is_causal: the hints that tgt_mask / memory_mask are the causal mask
  // (MultiheadAttention's rule; PyTorch's default false). Returns tgt's shape.
  Tensor forward(const Tensor& tgt, const Tensor& memory, std::optional<Tensor> tgt_mask = std::nullopt,
                 std::optional<Tensor> memory_mask = std::nullopt,
                 std::optional<Tensor> tgt_key_padding_mask = std::nullopt,
                 std::optional<Tensor> memory_key_padding_mask = std::nullopt,
                 std::optional<bool> tgt_is_causal = std::nullopt, std::optional<bool> memory_is_causal = std::nullopt);
  std::string extra_repr() const override { return ""; }

  TransformerDecoderLayerOptions options;
  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2, dropout3;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;
};

struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayerOptions decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  COLONY_ARG(TransformerDecoderLayerOptions, decoder_layer);
  COLONY_ARG(int64_t, num_layers);
  // Applied to the last layer's output (PyTorch's norm=, usually a LayerNorm; any module whose
  // forward takes and returns one Tensor). Null: none.
  COLONY_ARG(std::shared_ptr<Module>, norm);
};

class TransformerDecoder : public Module {
 public:
  // PyTorch's form: num_layers deep copies of `decoder_layer` (as TransformerEncoder copies its
  // layer: the layers begin equal, on its device, in its dtype and mode). `decoder_layer` itself
  // is not registered; later changes to it do not reach the copies.
  TransformerDecoder(const TransformerDecoderLayer& decoder_layer, int64_t num_layers,
                     std::shared_ptr<Module> norm = nullptr);
  // libtorch's form: one layer made from the options, then copied as above.
  explicit TransformerDecoder(const TransformerDecoderOptions& options);

  // The arguments of TransformerDecoderLayer::forward, passed to every layer. When tgt_is_causal
  // is not given and tgt_mask is exactly the causal mask of tgt's length
  // (generate_square_subsequent_mask, or a bool mask true above the diagonal), the layers take the
  // fused kernel's causal path, as PyTorch's _detect_is_causal_mask decides; the values are the
  // same either way. memory_is_causal is passed as given (PyTorch detects nothing there).
  Tensor forward(const Tensor& tgt, const Tensor& memory, std::optional<Tensor> tgt_mask = std::nullopt,
                 std::optional<Tensor> memory_mask = std::nullopt,
                 std::optional<Tensor> tgt_key_padding_mask = std::nullopt,
                 std::optional<Tensor> memory_key_padding_mask = std::nullopt,
                 std::optional<bool> tgt_is_causal = std::nullopt, std::optional<bool> memory_is_causal = std::nullopt);
  std::string extra_repr() const override { return ""; }

  std::shared_ptr<ModuleList> layers;  // "layers.0.self_attn.in_proj_weight", ...
  std::shared_ptr<Module> norm;        // "norm.weight", ...; null without a final norm

 protected:
  // Built from its first layer and a clone of the norm, then every layer's values copied in.
  std::shared_ptr<Module> clone_module() const override {
    auto copy = std::make_shared<TransformerDecoder>(layers->at<TransformerDecoderLayer>(0), static_cast<int64_t>(layers->size()),
                                                norm ? norm->clone() : nullptr);
    copy->copy_state_from(*this);
    return copy;
  }
};

}  // namespace colony::nn
