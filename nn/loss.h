// The loss modules of torch.nn (CrossEntropyLoss, BCEWithLogitsLoss, ...) and CosineSimilarity /
// PairwiseDistance: each holds its options (libtorch's names: CrossEntropyLossOptions is
// F::CrossEntropyFuncOptions) and its forward(input, target) calls the F:: function
// (nn/functional.h), so a module and its function cannot disagree.
//
//   nn::CrossEntropyLoss criterion(nn::CrossEntropyLossOptions().ignore_index(-1).weight(w));
//   Tensor loss = criterion.forward(logits, target);
//
// A per-class weight and pos_weight are registered as buffers, as PyTorch registers them (an
// unset one is not listed), so to(device) moves them and state_dict() holds them. The modules
// print as PyTorch prints them: the name and "()", whatever the options. Their forward takes two
// (or three) tensors, so through an AnyModule they are called as any.forward(input, target).
#pragma once

#include "nn/functional.h"
#include "nn/module.h"

namespace colony::nn {

using CrossEntropyLossOptions = functional::CrossEntropyFuncOptions;
using NLLLossOptions = functional::NLLLossFuncOptions;
using MSELossOptions = functional::MSELossFuncOptions;
using L1LossOptions = functional::L1LossFuncOptions;
using SmoothL1LossOptions = functional::SmoothL1LossFuncOptions;
using HuberLossOptions = functional::HuberLossFuncOptions;
using BCELossOptions = functional::BinaryCrossEntropyFuncOptions;
using BCEWithLogitsLossOptions = functional::BinaryCrossEntropyWithLogitsFuncOptions;
using KLDivLossOptions = functional::KLDivFuncOptions;
using CosineEmbeddingLossOptions = functional::CosineEmbeddingLossFuncOptions;
using CosineSimilarityOptions = functional::CosineSimilarityFuncOptions;
using PairwiseDistanceOptions = functional::PairwiseDistanceFuncOptions;
using CTCLossOptions = functional::CTCLossFuncOptions;

class CrossEntropyLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit CrossEntropyLoss(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  CrossEntropyLossOptions options;
  Tensor weight;  // the "weight" buffer (options.weight()), undefined when unset
};

class NLLLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit NLLLoss(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  NLLLossOptions options;
  Tensor weight;
};

class MSELoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit MSELoss(const MSELossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
  MSELossOptions options;
};

class L1Loss : public Module {
  COLONY_CLONEABLE
 public:
  explicit L1Loss(const L1LossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
  L1LossOptions options;
};

class SmoothL1Loss : public Module {
  COLONY_CLONEABLE
 public:
  explicit SmoothL1Loss(const SmoothL1LossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  SmoothL1LossOptions options;
};

class HuberLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit HuberLoss(const HuberLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  HuberLossOptions options;
};

class BCELoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit BCELoss(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  BCELossOptions options;
  Tensor weight;
};

class BCEWithLogitsLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit BCEWithLogitsLoss(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  BCEWithLogitsLossOptions options;
  Tensor weight;      // the "weight" buffer
  Tensor pos_weight;  // the "pos_weight" buffer
};

class KLDivLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit KLDivLoss(const KLDivLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
  KLDivLossOptions options;
};

class CosineEmbeddingLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit CosineEmbeddingLoss(const CosineEmbeddingLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  CosineEmbeddingLossOptions options;
};

class CosineSimilarity : public Module {
  COLONY_CLONEABLE
 public:
  explicit CosineSimilarity(const CosineSimilarityOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2);
  CosineSimilarityOptions options;
};

class PairwiseDistance : public Module {
  COLONY_CLONEABLE
 public:
  explicit PairwiseDistance(const PairwiseDistanceOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2);
  PairwiseDistanceOptions options;
};

// torch.nn.CTCLoss (F::ctc_loss): forward(log_probs, targets, input_lengths, target_lengths), the
// lengths as tensors or vectors.
class CTCLoss : public Module {
  COLONY_CLONEABLE
 public:
  explicit CTCLoss(const CTCLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                 const std::vector<int64_t>& target_lengths);
  CTCLossOptions options;
};

}  // namespace colony::nn
