#include "nn/transformer_model.h"

#include <stdexcept>

#include "nn/init.h"
#include "nn/transformer_blocks.h"
#include "tensor/grad_mode.h"

namespace colony::nn {

TransformerLayerOptions TransformerOptions::layer_options() const {
  return TransformerLayerOptions(d_model(), nhead())
      .dim_feedforward(dim_feedforward())
      .dropout(dropout())
      .activation(activation())
      .layer_norm_eps(layer_norm_eps())
      .batch_first(batch_first())
      .norm_first(norm_first())
      .bias(bias());
}

Transformer::Transformer(const TransformerOptions& o) : options(o) {
  const TransformerLayerOptions layer = o.layer_options();
  transformer_blocks::check_options("Transformer", layer);
  // PyTorch's order: the encoder's layer and norm, the encoder, then the decoder's; each stack
  // copies its layer, so its layers start equal until reset_parameters draws the weights again.
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(TransformerEncoderLayer(layer),
                                                                            o.num_encoder_layers(),
                                                                            transformer_blocks::make_norm(layer)));
  decoder = register_module("decoder", std::make_shared<TransformerDecoder>(TransformerDecoderLayer(layer),
                                                                            o.num_decoder_layers(),
                                                                            transformer_blocks::make_norm(layer)));
  reset_parameters();
}

void Transformer::reset_parameters() {
  NoGradGuard no_grad;
  for (Tensor& p : parameters()) {
    if (p.dim() > 1) init::xavier_uniform_(p);
  }
}

Tensor Transformer::forward(const Tensor& src, const Tensor& tgt, std::optional<Tensor> src_mask,
                            std::optional<Tensor> tgt_mask, std::optional<Tensor> memory_mask,
                            std::optional<Tensor> src_key_padding_mask, std::optional<Tensor> tgt_key_padding_mask,
                            std::optional<Tensor> memory_key_padding_mask, std::optional<bool> src_is_causal,
                            std::optional<bool> tgt_is_causal, std::optional<bool> memory_is_causal) {
  // PyTorch's checks, before any work: one batch size, d_model features (and, here, ranks the
  // layers take, which PyTorch leaves to MultiheadAttention).
  const int64_t E = options.d_model();
  transformer_blocks::check_sequence("Transformer", "src", src, E, options.batch_first());
  transformer_blocks::check_sequence("Transformer", "tgt", tgt, E, options.batch_first());
  if (src.dim() != tgt.dim()) {
    throw std::invalid_argument("Transformer: src " + shape_str(src.sizes()) + " and tgt " + shape_str(tgt.sizes()) +
                                " must both be batched (3-D) or both unbatched (2-D)");
  }
  const int batch_dim = options.batch_first() ? 0 : 1;
  if (src.dim() == 3 && src.size(batch_dim) != tgt.size(batch_dim)) {
    throw std::invalid_argument("Transformer: the batch sizes of src " + shape_str(src.sizes()) + " and tgt " +
                                shape_str(tgt.sizes()) + " must be equal (dim " + std::to_string(batch_dim) +
                                (options.batch_first() ? ", batch_first)" : ")"));
  }
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask, src_is_causal);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                          tgt_is_causal, memory_is_causal);
}

}  // namespace colony::nn
