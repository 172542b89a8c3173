// The pieces nn::TransformerEncoderLayer and nn::TransformerDecoderLayer are built from, one
// definition of each, as PyTorch's two layers share them (torch/nn/modules/transformer.py: the
// children made from the same arguments, _sa_block / _mha_block, _ff_block, _get_activation_fn,
// _get_clones, _get_seq_len, _detect_is_causal_mask): the children made from the layer options,
// the attention and feed-forward blocks, one residual step in either norm order, the input
// checks, and the deep copies a stack is made of. Internal to nn/ (nn.h does not include it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/containers.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "nn/normalization.h"
#include "nn/skip_init.h"
#include "nn/transformer.h"

namespace colony::nn::transformer_blocks {

// Throws std::invalid_argument naming `layer` ("TransformerDecoderLayer: ...") unless d_model and
// nhead are positive, nhead divides d_model, dim_feedforward is positive and the activation is
// "relu" or "gelu".
void check_options(const char* layer, const TransformerLayerOptions& o);

// The children, made from the options as PyTorch's layers make them (biases and eps included).
std::shared_ptr<MultiheadAttention> make_attention(const TransformerLayerOptions& o);
std::shared_ptr<Linear> make_linear(int64_t in_features, int64_t out_features, const TransformerLayerOptions& o);
std::shared_ptr<LayerNorm> make_norm(const TransformerLayerOptions& o);
std::shared_ptr<Dropout> make_dropout(const TransformerLayerOptions& o);

// `activation` ("relu" or "gelu", the exact erf form as PyTorch's F.gelu) applied to x.
Tensor activation(const std::string& activation, const Tensor& x);

// PyTorch's _sa_block (memory is x: the packed projection's one product) and _mha_block (memory
// is the encoder's output): attention of x over memory without weights (the fused kernel), then
// `dropout`.
Tensor attention_block(MultiheadAttention& attention, Dropout& dropout, const Tensor& x, const Tensor& memory,
                       const std::optional<Tensor>& mask, const std::optional<Tensor>& key_padding_mask,
                       bool is_causal);

// PyTorch's _ff_block: out(linear2(dropout(activation(linear1(x))))).
Tensor feed_forward_block(const std::string& activation, Linear& linear1, Dropout& dropout, Linear& linear2,
                          Dropout& out, const Tensor& x);

// One residual step around `block`: x + block(norm(x)) with norm_first, norm(x + block(x))
// without (post-norm, the original Transformer's order).
template <typename Block>
Tensor residual(const Tensor& x, LayerNorm& norm, bool norm_first, Block&& block) {
  return norm_first ? x + block(norm.forward(x)) : norm.forward(x + block(x));
}

// Throws std::invalid_argument naming `who` and `what` ("TransformerDecoderLayer: memory must
// be ...") unless x is a sequence the layers take: batched [L, N, E] (batch_first [N, L, E]) or
// unbatched [L, E], with E = d_model.
void check_sequence(const char* who, const char* what, const Tensor& x, int64_t d_model, bool batch_first);

// PyTorch's _detect_is_causal_mask with _get_seq_len, as its encoder and decoder stacks call it:
// the hint when one is given; otherwise whether `mask` is the causal mask of x's sequence length
// (is_causal_mask: it reads the mask, so a CUDA mask costs a synchronization).
bool detect_is_causal(const std::optional<Tensor>& mask, std::optional<bool> is_causal, const Tensor& x,
                      bool batch_first);

// PyTorch's _get_clones: num_layers deep copies of `layer` in a ModuleList, each with the source's
// parameter values (so the copies begin equal), on its device, in its dtype, with its
// requires_grad flags and its training mode. The copies are built without initialization
// (utils::skip_init): like deepcopy, copying draws nothing from the generator. `layer` itself is not registered anywhere; later
// changes to it do not reach the copies. `who` names the stack in the error for num_layers < 1.
template <typename Layer>
std::shared_ptr<ModuleList> clone_layers(const char* who, const Layer& layer, int64_t num_layers) {
  if (num_layers <= 0) {
    throw std::invalid_argument(std::string(who) + ": num_layers must be positive, got " + std::to_string(num_layers));
  }
  const NamedTensors source = layer.state_dict();
  const std::vector<Tensor> source_params = layer.parameters();
  auto layers = std::make_shared<ModuleList>();
  for (int64_t i = 0; i < num_layers; ++i) {
    auto copy = utils::skip_init<Layer>(layer.options);
    // The copy takes the source's device and dtype before its values, then its flags and mode.
    const Tensor& first = source.front().second;
    copy->to(first.device(), first.dtype());
    copy->load_state_dict(source);
    std::vector<Tensor> params = copy->parameters();
    for (size_t p = 0; p < params.size(); ++p) params[p].requires_grad_(source_params[p].requires_grad());
    copy->train(layer.is_training());
    layers->push_back(copy);
  }
  return layers;
}

}  // namespace colony::nn::transformer_blocks
