// The margin, ranking, triplet and likelihood loss modules of torch.nn, each holding its options
// (libtorch's names) and calling its F:: function (nn/functional_loss_margin.cc), as loss.h's do:
//
//   nn::TripletMarginLoss criterion(nn::TripletMarginLossOptions().margin(0.5).swap(true));
//   Tensor loss = criterion.forward(anchor, positive, negative);
//
// A weight (MultiLabelSoftMarginLoss, MultiMarginLoss) is a "weight" buffer, as torch registers
// it. Printed as torch prints them: the name and "()".
#pragma once

#include "nn/functional.h"
#include "nn/module.h"

namespace colony::nn {

using MarginRankingLossOptions = functional::MarginRankingLossFuncOptions;
using HingeEmbeddingLossOptions = functional::HingeEmbeddingLossFuncOptions;
using SoftMarginLossOptions = functional::SoftMarginLossFuncOptions;
using MultiLabelSoftMarginLossOptions = functional::MultilabelSoftMarginLossFuncOptions;
using MultiMarginLossOptions = functional::MultiMarginLossFuncOptions;
using MultiLabelMarginLossOptions = functional::MultilabelMarginLossFuncOptions;
using TripletMarginLossOptions = functional::TripletMarginLossFuncOptions;
using TripletMarginWithDistanceLossOptions = functional::TripletMarginWithDistanceLossFuncOptions;
using PoissonNLLLossOptions = functional::PoissonNLLLossFuncOptions;
using GaussianNLLLossOptions = functional::GaussianNLLLossFuncOptions;

class MarginRankingLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit MarginRankingLoss(const MarginRankingLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  MarginRankingLossOptions options;
};

class HingeEmbeddingLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit HingeEmbeddingLoss(const HingeEmbeddingLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
  HingeEmbeddingLossOptions options;
};

class SoftMarginLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit SoftMarginLoss(const SoftMarginLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
  SoftMarginLossOptions options;
};

class MultiLabelSoftMarginLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit MultiLabelSoftMarginLoss(const MultiLabelSoftMarginLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  MultiLabelSoftMarginLossOptions options;
  Tensor weight;  // the "weight" buffer, undefined when unset
};

class MultiMarginLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit MultiMarginLoss(const MultiMarginLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  MultiMarginLossOptions options;
  Tensor weight;  // the "weight" buffer, undefined when unset
};

class MultiLabelMarginLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit MultiLabelMarginLoss(const MultiLabelMarginLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
  MultiLabelMarginLossOptions options;
};

class TripletMarginLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit TripletMarginLoss(const TripletMarginLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  TripletMarginLossOptions options;
};

class TripletMarginWithDistanceLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit TripletMarginWithDistanceLoss(const TripletMarginWithDistanceLossOptions& options = {});
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  TripletMarginWithDistanceLossOptions options;
};

class PoissonNLLLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit PoissonNLLLoss(const PoissonNLLLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& log_input, const Tensor& target);
  PoissonNLLLossOptions options;
};

class GaussianNLLLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit GaussianNLLLoss(const GaussianNLLLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var);
  GaussianNLLLossOptions options;
};

}  // namespace colony::nn
