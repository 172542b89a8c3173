#include "nn/transformer_blocks.h"

#include <stdexcept>
#include <tuple>

#include "nn/activation.h"
#include "nn/functional.h"

namespace colony::nn::transformer_blocks {

void check_options(const char* layer, const TransformerLayerOptions& o) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(std::string(layer) + ": " + what); };
  if (o.d_model() <= 0 || o.nhead() <= 0) {
    fail("d_model and nhead must be positive, got " + std::to_string(o.d_model()) + " and " + std::to_string(o.nhead()));
  }
  if (o.d_model() % o.nhead() != 0) {
    fail("d_model must be divisible by nhead (each head takes d_model / nhead features), got d_model " +
         std::to_string(o.d_model()) + " and nhead " + std::to_string(o.nhead()));
  }
  if (o.dim_feedforward() <= 0) fail("dim_feedforward must be positive, got " + std::to_string(o.dim_feedforward()));
  if (o.activation() != "relu" && o.activation() != "gelu") {
    fail("activation must be \"relu\" or \"gelu\", got \"" + o.activation() + "\"");
  }
}

std::shared_ptr<MultiheadAttention> make_attention(const TransformerLayerOptions& o) {
  return std::make_shared<MultiheadAttention>(
      MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).bias(o.bias()).batch_first(o.batch_first()));
}

std::shared_ptr<Linear> make_linear(int64_t in_features, int64_t out_features, const TransformerLayerOptions& o) {
  return std::make_shared<Linear>(LinearOptions(in_features, out_features).bias(o.bias()));
}

std::shared_ptr<LayerNorm> make_norm(const TransformerLayerOptions& o) {
  return std::make_shared<LayerNorm>(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()).bias(o.bias()));
}

std::shared_ptr<Dropout> make_dropout(const TransformerLayerOptions& o) {
  return std::make_shared<Dropout>(DropoutOptions(o.dropout()));
}

Tensor activation(const std::string& activation, const Tensor& x) {
  // check_options admitted only these two.
  return activation == "gelu" ? functional::gelu(x) : functional::relu(x);
}

Tensor attention_block(MultiheadAttention& attention, Dropout& dropout, const Tensor& x, const Tensor& memory,
                       const std::optional<Tensor>& mask, const std::optional<Tensor>& key_padding_mask,
                       bool is_causal) {
  Tensor out =
      std::get<0>(attention.forward(x, memory, memory, key_padding_mask, /*need_weights=*/false, mask, true, is_causal));
  return dropout.forward(out);
}

Tensor feed_forward_block(const std::string& activation_name, Linear& linear1, Dropout& dropout, Linear& linear2,
                          Dropout& out, const Tensor& x) {
  return out.forward(linear2.forward(dropout.forward(activation(activation_name, linear1.forward(x)))));
}

void check_sequence(const char* who, const char* what, const Tensor& x, int64_t d_model, bool batch_first) {
  const std::string expected = std::string(batch_first ? "[N, L, E]" : "[L, N, E]") +
                               " (batched) or [L, E] (unbatched) with E = d_model = " + std::to_string(d_model);
  if (!x.defined()) throw std::invalid_argument(std::string(who) + ": " + what + " must be defined, " + expected);
  if ((x.dim() != 2 && x.dim() != 3) || x.size(-1) != d_model) {
    throw std::invalid_argument(std::string(who) + ": " + what + " must be " + expected + ", got " +
                                shape_str(x.sizes()));
  }
}

bool detect_is_causal(const std::optional<Tensor>& mask, std::optional<bool> is_causal, const Tensor& x,
                      bool batch_first) {
  if (is_causal) return *is_causal;
  if (!mask || !mask->defined() || !x.defined() || (x.dim() != 2 && x.dim() != 3)) return false;
  // _get_seq_len: dim 0 for [L, N, E] and [L, E], 1 for batch_first [N, L, E].
  const int64_t len = x.size(x.dim() == 3 && batch_first ? 1 : 0);
  return is_causal_mask(*mask, len);
}

}  // namespace colony::nn::transformer_blocks
