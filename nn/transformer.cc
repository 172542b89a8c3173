#include "nn/transformer.h"

#include <limits>
#include <stdexcept>
#include <utility>

#include "nn/transformer_blocks.h"
#include "ops/raw_ops.h"

namespace colony::nn {

namespace blocks = transformer_blocks;

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& o) : options(o) {
  blocks::check_options("TransformerEncoderLayer", o);
  // PyTorch's registration order, which is the state dict's.
  self_attn = register_module("self_attn", blocks::make_attention(o));
  linear1 = register_module("linear1", blocks::make_linear(o.d_model(), o.dim_feedforward(), o));
  dropout = register_module("dropout", blocks::make_dropout(o));
  linear2 = register_module("linear2", blocks::make_linear(o.dim_feedforward(), o.d_model(), o));
  norm1 = register_module("norm1", blocks::make_norm(o));
  norm2 = register_module("norm2", blocks::make_norm(o));
  dropout1 = register_module("dropout1", blocks::make_dropout(o));
  dropout2 = register_module("dropout2", blocks::make_dropout(o));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, std::optional<Tensor> src_mask,
                                        std::optional<Tensor> src_key_padding_mask, std::optional<bool> is_causal_arg) {
  blocks::check_sequence("TransformerEncoderLayer", "src", src, options.d_model(), options.batch_first());
  const bool is_causal = is_causal_arg.value_or(false);
  Tensor x = blocks::residual(src, *norm1, options.norm_first(), [&](const Tensor& h) {
    return blocks::attention_block(*self_attn, *dropout1, h, h, src_mask, src_key_padding_mask, is_causal);
  });
  return blocks::residual(x, *norm2, options.norm_first(), [&](const Tensor& h) {
    return blocks::feed_forward_block(options.activation(), *linear1, *dropout, *linear2, *dropout2, h);
  });
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
  layers = register_module("layers", blocks::clone_layers("TransformerEncoder", encoder_layer, num_layers));
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderOptions& o)
    : TransformerEncoder(TransformerEncoderLayer(o.encoder_layer()), o.num_layers(), o.norm()) {}

Tensor TransformerEncoder::forward(const Tensor& src, std::optional<Tensor> mask,
                                   std::optional<Tensor> src_key_padding_mask, std::optional<bool> is_causal) {
  const bool batch_first = layers->at<TransformerEncoderLayer>(0).options.batch_first();
  const bool causal = blocks::detect_is_causal(mask, is_causal, src, batch_first);
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i) {
    x = layers->at<TransformerEncoderLayer>(i).forward(x, mask, src_key_padding_mask, causal);
  }
  return norm ? norm->forward(x) : x;
}

}  // namespace colony::nn
