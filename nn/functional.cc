// The composite functional ops: written with differentiable autograd ops, so their gradients come
// from those ops' formulas. Convolution, pooling and batch norm have fused nodes
// (functional_conv.cc); the losses are in functional_loss.cc.
#include "nn/functional.h"

#include <stdexcept>

#include "autograd/ops.h"

namespace colony::nn::functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) { return colony::linear(input, weight, bias); }

Tensor relu(const Tensor& input) { return colony::relu(input); }
Tensor sigmoid(const Tensor& input) { return colony::sigmoid(input); }
Tensor tanh(const Tensor& input) { return colony::tanh(input); }

Tensor dropout(const Tensor& input, double p, bool training, Generator* gen) {
  if (p < 0 || p > 1) throw std::invalid_argument("dropout: probability has to be between 0 and 1, but got " + std::to_string(p));
  if (!training || p == 0) return input;
  if (p == 1) return input * raw::zeros_like(input);
  // The mask: uniforms u < 1 - p in input's dtype (raw::bernoulli_, the draws and comparison
  // bernoulli(full(1 - p)) makes, without writing and reading the tensor of 1 - p), scaled in place.
  Tensor keep = raw::empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
  raw::bernoulli_(keep, 1.0 - p, gen);
  keep.mul_(1.0 / (1.0 - p));
  return input * keep;
}

Tensor dropout(const Tensor& input, const DropoutFuncOptions& options) {
  Tensor out = functional::dropout(input, options.p(), options.training());
  if (!options.inplace() || out.is_same(input)) return out;
  Tensor self = input;
  self.mul_(0.0).add_(out);  // recorded: the gradient reaches `out` and nothing of the old value
  return self;
}

Tensor relu(const Tensor& input, const ReLUFuncOptions& options) {
  if (!options.inplace()) return functional::relu(input);
  Tensor self = input;
  return self.relu_();
}

Tensor softmax(const Tensor& input, int64_t dim) { return colony::softmax(input, dim); }
Tensor log_softmax(const Tensor& input, int64_t dim) { return colony::log_softmax(input, dim); }
Tensor flatten(const Tensor& input, int64_t start_dim, int64_t end_dim) { return colony::flatten(input, start_dim, end_dim); }

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, Generator* gen) {
  return colony::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa,
                                              gen);
}

}  // namespace colony::nn::functional
