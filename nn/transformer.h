// nn::TransformerEncoderLayer (torch.nn.TransformerEncoderLayer): self-attention and a
// feed-forward block, each with dropout, a residual connection and LayerNorm, after (post-norm)
// or before (norm_first) the block. Its children and parameters are PyTorch's, in PyTorch's
// order (self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2), so state dicts
// match. The self-attention runs the fused kernel (need_weights false).
// nn::TransformerEncoder (torch.nn.TransformerEncoder): num_layers copies of one layer in
// `layers` (a ModuleList), then an optional final norm.
// The decoder side is nn/transformer_decoder.h, the encoder-decoder model nn/transformer_model.h;
// the pieces the layers share are nn/transformer_blocks.h.
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

namespace colony::nn {

// The options of both layers, which PyTorch's TransformerEncoderLayer and TransformerDecoderLayer
// take alike (libtorch's TransformerEncoderLayerOptions and TransformerDecoderLayerOptions, below).
struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
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
using TransformerEncoderLayerOptions = TransformerLayerOptions;
using TransformerDecoderLayerOptions = TransformerLayerOptions;

class TransformerEncoderLayer : public Module {
  COLONY_CLONEABLE
 public:
  // Throws std::invalid_argument for an unknown activation, nhead not dividing d_model, or a
  // size that is not positive.
  explicit TransformerEncoderLayer(const TransformerEncoderLayerOptions& options);
  TransformerEncoderLayer(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayer(TransformerEncoderLayerOptions(d_model, nhead)) {}

  // src [S, N, E] (batch_first: [N, S, E]; unbatched [S, E]), E = d_model; src_mask [S, S] or
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
};

// PyTorch's nn.Transformer.generate_square_subsequent_mask: [sz, sz], -inf above the diagonal and 0
// on and below it (the causal mask, additive). Floating dtypes only.
Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});
// True when `mask` is the causal mask of a sequence of `len` (PyTorch's _detect_is_causal_mask,
// which compares it with the mask above): generate_square_subsequent_mask(len) in the mask's
// dtype, or a bool mask (true = not allowed) true exactly above the diagonal. Reads the mask's
// values, so a CUDA mask costs a synchronization.
bool is_causal_mask(const Tensor& mask, int64_t len);

struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayerOptions encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  COLONY_ARG(TransformerEncoderLayerOptions, encoder_layer);
  COLONY_ARG(int64_t, num_layers);
  // Applied to the last layer's output (PyTorch's norm=, usually a LayerNorm; any module whose
  // forward takes and returns one Tensor). Null: none.
  COLONY_ARG(std::shared_ptr<Module>, norm);
};

class TransformerEncoder : public Module {
 public:
  // PyTorch's form: num_layers deep copies of `encoder_layer`, so every layer starts with its
  // parameters (copy.deepcopy in PyTorch: the layers begin equal), on its device, in its dtype and
  // mode. `encoder_layer` itself is not registered; later changes to it do not reach the copies.
  TransformerEncoder(const TransformerEncoderLayer& encoder_layer, int64_t num_layers,
                     std::shared_ptr<Module> norm = nullptr);
  // libtorch's form: one layer made from the options, then copied as above.
  explicit TransformerEncoder(const TransformerEncoderOptions& options);

  // src, mask and src_key_padding_mask as TransformerEncoderLayer::forward takes them, passed to
  // every layer. When is_causal is not given and mask is exactly the causal mask
  // (generate_square_subsequent_mask, or a bool mask true above the diagonal), the layers take the
  // fused kernel's causal path, as PyTorch detects it; the values are the same either way.
  Tensor forward(const Tensor& src, std::optional<Tensor> mask = std::nullopt,
                 std::optional<Tensor> src_key_padding_mask = std::nullopt, std::optional<bool> is_causal = std::nullopt);
  std::string extra_repr() const override { return ""; }

  std::shared_ptr<ModuleList> layers;  // "layers.0.self_attn.in_proj_weight", ...
  std::shared_ptr<Module> norm;        // "norm.weight", ...; null without a final norm

 protected:
  // Built from its first layer and a clone of the norm, then every layer's values copied in.
  std::shared_ptr<Module> clone_module() const override {
    auto copy = std::make_shared<TransformerEncoder>(layers->at<TransformerEncoderLayer>(0), static_cast<int64_t>(layers->size()),
                                                norm ? norm->clone() : nullptr);
    copy->copy_state_from(*this);
    return copy;
  }
};

}  // namespace colony::nn
