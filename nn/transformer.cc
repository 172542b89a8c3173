#include "nn/transformer.h"

#include <limits>
#include <stdexcept>
#include <utility>

#include "nn/activation.h"
#include "nn/functional.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

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

Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  if (sz < 0) throw std::invalid_argument("generate_square_subsequent_mask: sz must be >= 0, got " + std::to_string(sz));
  if (!is_floating(options.dtype())) {
    throw std::invalid_argument(std::string("generate_square_subsequent_mask: the mask is additive (-inf and 0), so "
                                            "its dtype must be floating, got ") +
                                dtype_name(options.dtype()));
  }
  return raw::full({sz, sz}, -std::numeric_limits<double>::infinity(), options).triu(1);
}

bool is_causal_mask(const Tensor& mask, int64_t len) {
  if (mask.dim() != 2 || mask.size(0) != len || mask.size(1) != len) return false;
  const TensorOptions like = TensorOptions(mask.dtype()).device(mask.device());
  if (mask.dtype() == kBool) return raw::equal(mask, raw::ones({len, len}, like).triu(1));
  return is_floating(mask.dtype()) && raw::equal(mask, generate_square_subsequent_mask(len, like));
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& encoder_layer, int64_t num_layers,
                                       std::shared_ptr<Module> final_norm) {
  build(encoder_layer, num_layers);
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderOptions& o) {
  build(TransformerEncoderLayer(o.encoder_layer()), o.num_layers());
  if (o.norm()) norm = register_module("norm", o.norm());
}

void TransformerEncoder::build(const TransformerEncoderLayer& encoder_layer, int64_t num_layers) {
  if (num_layers <= 0) {
    throw std::invalid_argument("TransformerEncoder: num_layers must be positive, got " + std::to_string(num_layers));
  }
  const NamedTensors source = encoder_layer.state_dict();
  const std::vector<Tensor> source_params = encoder_layer.parameters();
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < num_layers; ++i) {
    auto layer = std::make_shared<TransformerEncoderLayer>(encoder_layer.options);
    // The copy takes the source's device and dtype before its values, then its flags and mode.
    const Tensor& first = source.front().second;
    layer->to(first.device(), first.dtype());
    layer->load_state_dict(source);
    std::vector<Tensor> params = layer->parameters();
    for (size_t p = 0; p < params.size(); ++p) params[p].requires_grad_(source_params[p].requires_grad());
    layer->train(encoder_layer.is_training());
    layers->push_back(layer);
  }
}

Tensor TransformerEncoder::forward(const Tensor& src, std::optional<Tensor> mask,
                                   std::optional<Tensor> src_key_padding_mask, std::optional<bool> is_causal) {
  if (!is_causal && mask && mask->defined() && src.defined() && (src.dim() == 2 || src.dim() == 3)) {
    // The sequence dim: 0 for [S, N, E] and [S, E], 1 for batch_first [N, S, E].
    const bool batch_first = layers->at<TransformerEncoderLayer>(0).options.batch_first();
    const int64_t len = src.size(src.dim() == 3 && batch_first ? 1 : 0);
    if (is_causal_mask(*mask, len)) is_causal = true;
  }
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i) {
    x = layers->at<TransformerEncoderLayer>(i).forward(x, mask, src_key_padding_mask, is_causal);
  }
  return norm ? norm->forward(x) : x;
}

}  // namespace colony::nn
