#include "nn/transformer_decoder.h"

#include <stdexcept>
#include <utility>

#include "nn/transformer_blocks.h"

namespace colony::nn {

namespace blocks = transformer_blocks;

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerDecoderLayerOptions& o) : options(o) {
  blocks::check_options("TransformerDecoderLayer", o);
  // PyTorch's registration order, which is the state dict's.
  self_attn = register_module("self_attn", blocks::make_attention(o));
  multihead_attn = register_module("multihead_attn", blocks::make_attention(o));
  linear1 = register_module("linear1", blocks::make_linear(o.d_model(), o.dim_feedforward(), o));
  dropout = register_module("dropout", blocks::make_dropout(o));
  linear2 = register_module("linear2", blocks::make_linear(o.dim_feedforward(), o.d_model(), o));
  norm1 = register_module("norm1", blocks::make_norm(o));
  norm2 = register_module("norm2", blocks::make_norm(o));
  norm3 = register_module("norm3", blocks::make_norm(o));
  dropout1 = register_module("dropout1", blocks::make_dropout(o));
  dropout2 = register_module("dropout2", blocks::make_dropout(o));
  dropout3 = register_module("dropout3", blocks::make_dropout(o));
}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory, std::optional<Tensor> tgt_mask,
                                        std::optional<Tensor> memory_mask, std::optional<Tensor> tgt_key_padding_mask,
                                        std::optional<Tensor> memory_key_padding_mask,
                                        std::optional<bool> tgt_is_causal, std::optional<bool> memory_is_causal) {
  const char* who = "TransformerDecoderLayer";
  blocks::check_sequence(who, "tgt", tgt, options.d_model(), options.batch_first());
  blocks::check_sequence(who, "memory", memory, options.d_model(), options.batch_first());
  if (memory.dim() != tgt.dim()) {
    throw std::invalid_argument(std::string(who) + ": tgt " + shape_str(tgt.sizes()) + " and memory " +
                                shape_str(memory.sizes()) + " must both be batched (3-D) or both unbatched (2-D)");
  }
  const int batch_dim = options.batch_first() ? 0 : 1;
  if (tgt.dim() == 3 && memory.size(batch_dim) != tgt.size(batch_dim)) {
    throw std::invalid_argument(std::string(who) + ": tgt " + shape_str(tgt.sizes()) + " and memory " +
                                shape_str(memory.sizes()) + " must have one batch size (dim " +
                                std::to_string(batch_dim) + (options.batch_first() ? ", batch_first)" : ")"));
  }
  const bool norm_first = options.norm_first();
  Tensor x = blocks::residual(tgt, *norm1, norm_first, [&](const Tensor& h) {
    return blocks::attention_block(*self_attn, *dropout1, h, h, tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal.value_or(false));
  });
  x = blocks::residual(x, *norm2, norm_first, [&](const Tensor& h) {
    return blocks::attention_block(*multihead_attn, *dropout2, h, memory, memory_mask, memory_key_padding_mask,
                                   memory_is_causal.value_or(false));
  });
  return blocks::residual(x, *norm3, norm_first, [&](const Tensor& h) {
    return blocks::feed_forward_block(options.activation(), *linear1, *dropout, *linear2, *dropout3, h);
  });
}

TransformerDecoder::TransformerDecoder(const TransformerDecoderLayer& decoder_layer, int64_t num_layers,
                                       std::shared_ptr<Module> final_norm) {
  layers = register_module("layers", blocks::clone_layers("TransformerDecoder", decoder_layer, num_layers));
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

TransformerDecoder::TransformerDecoder(const TransformerDecoderOptions& o)
    : TransformerDecoder(TransformerDecoderLayer(o.decoder_layer()), o.num_layers(), o.norm()) {}

Tensor TransformerDecoder::forward(const Tensor& tgt, const Tensor& memory, std::optional<Tensor> tgt_mask,
                                   std::optional<Tensor> memory_mask, std::optional<Tensor> tgt_key_padding_mask,
                                   std::optional<Tensor> memory_key_padding_mask, std::optional<bool> tgt_is_causal,
                                   std::optional<bool> memory_is_causal) {
  const bool batch_first = layers->at<TransformerDecoderLayer>(0).options.batch_first();
  const bool causal = blocks::detect_is_causal(tgt_mask, tgt_is_causal, tgt, batch_first);
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i) {
    x = layers->at<TransformerDecoderLayer>(i).forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                       memory_key_padding_mask, causal, memory_is_causal);
  }
  return norm ? norm->forward(x) : x;
}

}  // namespace colony::nn
