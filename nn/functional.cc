// The composite functional ops: written with differentiable autograd ops, so their gradients come
// from those ops' formulas. Convolution, pooling and batch norm have fused nodes
// (functional_conv.cc), cross-entropy and nll_loss one fused node each (autograd/nn_ops.h).
#include "nn/functional.h"

#include <stdexcept>

#include "autograd/nn_ops.h"
#include "autograd/ops.h"

namespace colony::nn::functional {
namespace {

void check_class_target(const char* op, const Tensor& input, const Tensor& target) {
  if (input.dim() < 1) throw std::invalid_argument(std::string(op) + ": input must have a class dimension, got a 0-d tensor");
  if (target.dtype() != kInt64 && target.dtype() != kInt32) {
    throw std::invalid_argument(std::string(op) + ": expected class-index targets of dtype int64 or int32, got " +
                                dtype_name(target.dtype()));
  }
  int64_t n = input.dim() == 1 ? 1 : input.size(0);
  Shape expected;
  if (input.dim() >= 2) {
    expected.push_back(n);
    for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.size(d));
  }
  if (target.sizes() != expected) {
    throw std::invalid_argument(std::string(op) + ": expected target of shape " + shape_str(expected) + " for input " +
                                shape_str(input.sizes()) + ", got " + shape_str(target.sizes()));
  }
  if (input.device() != target.device()) {
    throw std::invalid_argument(std::string(op) + ": input is on " + input.device().str() + " but target is on " +
                                target.device().str());
  }
}

// Moves the class dim last and flattens: [N, C, d...] -> [N*d..., C]; targets to [N*d...].
std::pair<Tensor, Tensor> as_rows(const Tensor& input, const Tensor& target) {
  if (input.dim() == 1) return {unsqueeze(input, 0), unsqueeze(target, 0)};
  if (input.dim() == 2) return {input, target};
  std::vector<int64_t> perm = {0};
  for (int64_t d = 2; d < input.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return {reshape(permute(input, perm), {-1, input.size(1)}), reshape(target, {-1})};
}

raw::CrossEntropyOptions loss_options(Reduction r, int64_t ignore_index) {
  raw::CrossEntropyOptions o;
  o.ignore_index = ignore_index;
  o.reduction = r == Reduction::None ? raw::LossReduction::None
                : r == Reduction::Sum ? raw::LossReduction::Sum
                                      : raw::LossReduction::Mean;
  return o;
}

// The fused loss over [rows, C] and int64 targets, shaped like target for Reduction::None.
Tensor fused_loss(const Tensor& input, const Tensor& target, const raw::CrossEntropyOptions& o) {
  auto [rows, targets] = as_rows(input, target);
  if (targets.dtype() != kInt64) targets = raw::to(targets, targets.device(), kInt64);
  Tensor loss = colony::cross_entropy_loss(rows, targets, o);
  return o.reduction == raw::LossReduction::None ? reshape(loss, target.sizes()) : loss;
}

}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) { return colony::linear(input, weight, bias); }

Tensor relu(const Tensor& input) { return colony::relu(input); }
Tensor sigmoid(const Tensor& input) { return colony::sigmoid(input); }
Tensor tanh(const Tensor& input) { return colony::tanh(input); }

Tensor dropout(const Tensor& input, double p, bool training, Generator* gen) {
  if (p < 0 || p > 1) throw std::invalid_argument("dropout: probability has to be between 0 and 1, but got " + std::to_string(p));
  if (!training || p == 0) return input;
  if (p == 1) return input * raw::zeros_like(input);
  Tensor keep = raw::bernoulli(raw::full(input.sizes(), 1.0 - p, TensorOptions(input.dtype()).device(input.device())), gen);
  return input * raw::mul(keep, 1.0 / (1.0 - p));
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

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  check_class_target("nll_loss", input, target);
  raw::CrossEntropyOptions o = loss_options(options.reduction(), options.ignore_index());
  o.log_probs = true;
  return fused_loss(input, target, o);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  check_class_target("cross_entropy", input, target);
  double eps = options.label_smoothing();
  if (eps < 0 || eps > 1) throw std::invalid_argument("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(eps));
  raw::CrossEntropyOptions o = loss_options(options.reduction(), options.ignore_index());
  o.label_smoothing = eps;
  return fused_loss(input, target, o);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return colony::mse_loss(input, target, loss_options(reduction, -100).reduction);
}

}  // namespace colony::nn::functional
