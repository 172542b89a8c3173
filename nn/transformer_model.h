// nn::Transformer (torch.nn.Transformer): the encoder-decoder model of "Attention Is All You Need"
// for translation or summarization: a TransformerEncoder over the source with a final LayerNorm,
// whose output (memory) a TransformerDecoder with a final LayerNorm attends to while reading the
// target. State dict keys are PyTorch's ("encoder.layers.0.self_attn.in_proj_weight", ...,
// "encoder.norm.weight", "decoder.layers.0.multihead_attn.in_proj_weight", ...,
// "decoder.norm.bias"), and the parameters are drawn as PyTorch draws them (every layer of a stack
// starts as a copy of one, then xavier_uniform_ on every parameter with more than one dim).
// Not supported (PyTorch's arguments): custom_encoder, custom_decoder, a callable activation.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/arg.h"
#include "nn/module.h"
#include "nn/transformer.h"
#include "nn/transformer_decoder.h"

namespace colony::nn {

struct TransformerOptions {
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8, int64_t num_encoder_layers = 6,
                     int64_t num_decoder_layers = 6)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  COLONY_ARG(int64_t, d_model);
  COLONY_ARG(int64_t, nhead);
  COLONY_ARG(int64_t, num_encoder_layers);
  COLONY_ARG(int64_t, num_decoder_layers);
  COLONY_ARG(int64_t, dim_feedforward) = 2048;
  COLONY_ARG(double, dropout) = 0.1;
  COLONY_ARG(std::string, activation) = "relu";  // "relu" or "gelu"
  COLONY_ARG(double, layer_norm_eps) = 1e-5;
  COLONY_ARG(bool, batch_first) = false;
  COLONY_ARG(bool, norm_first) = false;
  COLONY_ARG(bool, bias) = true;

 public:
  // The options every encoder and decoder layer is made with.
  TransformerLayerOptions layer_options() const;
};

class Transformer : public Module {
  COLONY_CLONEABLE
 public:
  // Throws std::invalid_argument for a layer option out of range (as the layers do) or a layer
  // count below 1.
  explicit Transformer(const TransformerOptions& options = {});

  // src [S, N, E] and tgt [T, N, E] (batch_first: [N, S, E] and [N, T, E]; unbatched [S, E] and
  // [T, E]), E = d_model, with one batch size; src_mask [S, S], tgt_mask [T, T], memory_mask
  // [T, S] (or [N * nhead, ., .]), bool (true = not allowed) or additive; the key padding masks
  // [N, S], [N, T], [N, S] (true = ignored). src_is_causal / tgt_is_causal: the hints that
  // src_mask / tgt_mask are the causal mask, detected when not given (the encoder and decoder
  // stacks' rule); memory_is_causal is passed as given. Returns [T, N, E] (tgt's shape).
  Tensor forward(const Tensor& src, const Tensor& tgt, std::optional<Tensor> src_mask = std::nullopt,
                 std::optional<Tensor> tgt_mask = std::nullopt, std::optional<Tensor> memory_mask = std::nullopt,
                 std::optional<Tensor> src_key_padding_mask = std::nullopt,
                 std::optional<Tensor> tgt_key_padding_mask = std::nullopt,
                 std::optional<Tensor> memory_key_padding_mask = std::nullopt,
                 std::optional<bool> src_is_causal = std::nullopt, std::optional<bool> tgt_is_causal = std::nullopt,
                 std::optional<bool> memory_is_causal = std::nullopt);
  // PyTorch's Transformer._reset_parameters: xavier_uniform_ on every parameter with dim > 1 (the
  // biases and norms keep their layers' initialization). The constructor calls it.
  void reset_parameters();
  // PyTorch's static Transformer.generate_square_subsequent_mask (nn::generate_square_subsequent_mask).
  static Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {}) {
    return nn::generate_square_subsequent_mask(sz, options);
  }
  std::string extra_repr() const override { return ""; }

  TransformerOptions options;
  std::shared_ptr<TransformerEncoder> encoder;  // "encoder.layers.0....", "encoder.norm...."
  std::shared_ptr<TransformerDecoder> decoder;  // "decoder.layers.0....", "decoder.norm...."
};

}  // namespace colony::nn
