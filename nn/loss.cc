#include "nn/loss.h"

#include <stdexcept>
#include <string>

namespace colony::nn {
namespace F = functional;

// Options whose values are refused are refused when the module is built, as PyTorch's F:: would
// refuse them at the first call.
CrossEntropyLoss::CrossEntropyLoss(const CrossEntropyLossOptions& options) : options(options) {
  const double eps = options.label_smoothing();
  if (eps < 0 || eps > 1) throw std::invalid_argument("CrossEntropyLoss: label_smoothing must be in [0, 1], got " + std::to_string(eps));
  weight = register_buffer("weight", options.weight());
}

Tensor CrossEntropyLoss::forward(const Tensor& input, const Tensor& target) {
  CrossEntropyLossOptions o = options;
  return F::cross_entropy(input, target, o.weight(weight));
}

NLLLoss::NLLLoss(const NLLLossOptions& options) : options(options) { weight = register_buffer("weight", options.weight()); }

Tensor NLLLoss::forward(const Tensor& input, const Tensor& target) {
  NLLLossOptions o = options;
  return F::nll_loss(input, target, o.weight(weight));
}

Tensor MSELoss::forward(const Tensor& input, const Tensor& target) { return F::mse_loss(input, target, options); }

Tensor CTCLoss::forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                        const Tensor& target_lengths) {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}

Tensor CTCLoss::forward(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                        const std::vector<int64_t>& target_lengths) {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}

Tensor L1Loss::forward(const Tensor& input, const Tensor& target) { return F::l1_loss(input, target, options); }

SmoothL1Loss::SmoothL1Loss(const SmoothL1LossOptions& options) : options(options) {
  if (!(options.beta() >= 0)) throw std::invalid_argument("SmoothL1Loss: beta must be >= 0, got " + std::to_string(options.beta()));
}

Tensor SmoothL1Loss::forward(const Tensor& input, const Tensor& target) { return F::smooth_l1_loss(input, target, options); }

HuberLoss::HuberLoss(const HuberLossOptions& options) : options(options) {
  if (!(options.delta() > 0)) throw std::invalid_argument("HuberLoss: delta must be > 0, got " + std::to_string(options.delta()));
}

Tensor HuberLoss::forward(const Tensor& input, const Tensor& target) { return F::huber_loss(input, target, options); }

BCELoss::BCELoss(const BCELossOptions& options) : options(options) { weight = register_buffer("weight", options.weight()); }

Tensor BCELoss::forward(const Tensor& input, const Tensor& target) {
  BCELossOptions o = options;
  return F::binary_cross_entropy(input, target, o.weight(weight));
}

BCEWithLogitsLoss::BCEWithLogitsLoss(const BCEWithLogitsLossOptions& options) : options(options) {
  weight = register_buffer("weight", options.weight());
  pos_weight = register_buffer("pos_weight", options.pos_weight());
}

Tensor BCEWithLogitsLoss::forward(const Tensor& input, const Tensor& target) {
  BCEWithLogitsLossOptions o = options;
  return F::binary_cross_entropy_with_logits(input, target, o.weight(weight).pos_weight(pos_weight));
}

Tensor KLDivLoss::forward(const Tensor& input, const Tensor& target) { return F::kl_div(input, target, options); }

Tensor CosineEmbeddingLoss::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return F::cosine_embedding_loss(input1, input2, target, options);
}

Tensor CosineSimilarity::forward(const Tensor& input1, const Tensor& input2) {
  return F::cosine_similarity(input1, input2, options);
}

Tensor PairwiseDistance::forward(const Tensor& input1, const Tensor& input2) {
  return F::pairwise_distance(input1, input2, options);
}

}  // namespace colony::nn
