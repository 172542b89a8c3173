#include "nn/loss_margin.h"

#include <stdexcept>
#include <string>

namespace colony::nn {
namespace F = functional;

Tensor MarginRankingLoss::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return F::margin_ranking_loss(input1, input2, target, options);
}

Tensor HingeEmbeddingLoss::forward(const Tensor& input, const Tensor& target) {
  return F::hinge_embedding_loss(input, target, options);
}

Tensor SoftMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return F::soft_margin_loss(input, target, options);
}

MultiLabelSoftMarginLoss::MultiLabelSoftMarginLoss(const MultiLabelSoftMarginLossOptions& options) : options(options) {
  weight = register_buffer("weight", options.weight());
}

Tensor MultiLabelSoftMarginLoss::forward(const Tensor& input, const Tensor& target) {
  MultiLabelSoftMarginLossOptions o = options;
  return F::multilabel_soft_margin_loss(input, target, o.weight(weight));
}

// p and margin are refused when the module is built, as torch's constructor refuses p.
MultiMarginLoss::MultiMarginLoss(const MultiMarginLossOptions& options) : options(options) {
  if (options.p() != 1 && options.p() != 2) {
    throw std::invalid_argument("MultiMarginLoss: only p == 1 and p == 2 supported, got " + std::to_string(options.p()));
  }
  weight = register_buffer("weight", options.weight());
}

Tensor MultiMarginLoss::forward(const Tensor& input, const Tensor& target) {
  MultiMarginLossOptions o = options;
  return F::multi_margin_loss(input, target, o.weight(weight));
}

Tensor MultiLabelMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return F::multilabel_margin_loss(input, target, options);
}

Tensor TripletMarginLoss::forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
  return F::triplet_margin_loss(anchor, positive, negative, options);
}

TripletMarginWithDistanceLoss::TripletMarginWithDistanceLoss(const TripletMarginWithDistanceLossOptions& options)
    : options(options) {
  if (!(options.margin() > 0)) {
    throw std::invalid_argument("TripletMarginWithDistanceLoss: margin must be greater than 0, got " +
                                std::to_string(options.margin()));
  }
}

Tensor TripletMarginWithDistanceLoss::forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
  return F::triplet_margin_with_distance_loss(anchor, positive, negative, options);
}

Tensor PoissonNLLLoss::forward(const Tensor& log_input, const Tensor& target) {
  return F::poisson_nll_loss(log_input, target, options);
}

Tensor GaussianNLLLoss::forward(const Tensor& input, const Tensor& target, const Tensor& var) {
  return F::gaussian_nll_loss(input, target, var, options);
}

}  // namespace colony::nn
