#include "nn/transformer.h"

#include <stdexcept>

#include "nn/activation.h"
#include "nn/functional.h"

namespace colony::nn {

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& o) : options(o) {
  if (o.activation() != "relu" && o.activation() != "gelu") {
    throw std::invalid_argument("TransformerEncoderLayer: activation must be \"relu\" or \"gelu\", got \"" +
                                o.activation() + "\"");
  }
  if (o.dim_feedforward() <= 0) {
    throw std::invalid_argument("TransformerEncoderLayer: dim_feedforward must be positive, got " +
                                std::to_string(o.dim_feedforward()));
  }
  // PyTorch's registration order, which is the state dict's.
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(
                                               MultiheadAttentionOptions(o.d_model(), o.nhead())
                                                   .dropout(o.dropout())
                                                   .bias(o.bias())
                                                   .batch_first(o.batch_first())));
  linear1 = register_module("linear1", std::make_shared<Linear>(LinearOptions(o.d_model(), o.dim_feedforward()).bias(o.bias())));
  dropout = register_module("dropout", std::make_shared<Dropout>(DropoutOptions(o.dropout())));
  linear2 = register_module("linear2", std::make_shared<Linear>(LinearOptions(o.dim_feedforward(), o.d_model()).bias(o.bias())));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(
                                       LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()).bias(o.bias())));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(
                                       LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()).bias(o.bias())));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(DropoutOptions(o.dropout())));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(DropoutOptions(o.dropout())));
}

Tensor TransformerEncoderLayer::self_attention_block(const Tensor& x, const std::optional<Tensor>& mask,
                                                     const std::optional<Tensor>& padding, bool is_causal) {
  Tensor out = std::get<0>(self_attn->forward(x, x, x, padding, /*need_weights=*/false, mask, true, is_causal));
  return dropout1->forward(out);
}

Tensor TransformerEncoderLayer::feed_forward_block(const Tensor& x) {
  Tensor h = linear1->forward(x);
  h = options.activation() == "gelu" ? functional::gelu(h) : functional::relu(h);
  return dropout2->forward(linear2->forward(dropout->forward(h)));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, std::optional<Tensor> src_mask,
                                        std::optional<Tensor> src_key_padding_mask, std::optional<bool> is_causal_arg) {
  const bool is_causal = is_causal_arg.value_or(false);
  Tensor x = src;
  if (options.norm_first()) {
    x = x + self_attention_block(norm1->forward(x), src_mask, src_key_padding_mask, is_causal);
    x = x + feed_forward_block(norm2->forward(x));
  } else {
    x = norm1->forward(x + self_attention_block(x, src_mask, src_key_padding_mask, is_causal));
    x = norm2->forward(x + feed_forward_block(x));
  }
  return x;
}

}  // namespace colony::nn
