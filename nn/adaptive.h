// nn::AdaptiveLogSoftmaxWithLoss (torch.nn.AdaptiveLogSoftmaxWithLoss; Grave et al. 2016,
// "Efficient softmax approximation for GPUs"): the classes split by `cutoffs` into a frequent
// shortlist, scored by the head together with one logit per tail cluster, and the clusters, each
// scored by its own two-layer projection (in_features -> in_features / div_value^(i+1) -> cluster
// size). torch's parameters, names and init (`head.weight`, `tail.0.0.weight`, `tail.0.1.weight`,
// ...), so a torch state dict loads and gives torch's numbers.
//
//   nn::AdaptiveLogSoftmaxWithLoss asm_(nn::AdaptiveLogSoftmaxWithLossOptions(64, 1000, {100, 400}));
//   nn::ASMoutput r = asm_.forward(hidden, target);   // r.output [N]: log p(target), r.loss: mean NLL
#pragma once

#include <memory>
#include <vector>

#include "base/arg.h"
#include "nn/containers.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace colony::nn {

struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  COLONY_ARG(int64_t, in_features);
  COLONY_ARG(int64_t, n_classes);
  COLONY_ARG(std::vector<int64_t>, cutoffs);
  COLONY_ARG(double, div_value) = 4.0;
  COLONY_ARG(bool, head_bias) = false;
};

// torch's _ASMoutput named tuple (libtorch's ASMoutput): the log-probability of each target, and
// the mean of their negatives.
struct ASMoutput {
  Tensor output;
  Tensor loss;
};

class AdaptiveLogSoftmaxWithLoss : public Module {
  COLONY_CLONEABLE
 public:
  // Refuses cutoffs that are empty, unsorted, repeated, or outside [1, n_classes - 1], with torch's
  // message.
  explicit AdaptiveLogSoftmaxWithLoss(const AdaptiveLogSoftmaxWithLossOptions& options);
  // input [N, in_features] with target [N], or input [in_features] with a 0-d target (then output is
  // 0-d). Targets are read on the host (one synchronization on CUDA), as torch's loop over the
  // clusters reads them; one outside [0, n_classes - 1] is refused with torch's message.
  ASMoutput forward(const Tensor& input, const Tensor& target);
  // log p(c | input) for every class: [N, n_classes].
  Tensor log_prob(const Tensor& input);
  // argmax of log_prob, per row ([N], int64), reading the tails only for the rows whose head's best
  // is a cluster, as torch's. Not differentiable.
  Tensor predict(const Tensor& input);
  void reset_parameters();

  AdaptiveLogSoftmaxWithLossOptions options;
  std::vector<int64_t> cutoffs;  // options' cutoffs and n_classes at the end, as torch's self.cutoffs
  int64_t shortlist_size = 0, n_clusters = 0, head_size = 0;
  std::shared_ptr<Linear> head;
  std::shared_ptr<ModuleList> tail;  // Sequential(Linear(in, hsz, bias=false), Linear(hsz, osz, bias=false)) each

 private:
  Tensor full_log_prob(const Tensor& input, const Tensor& head_output);
  Tensor cluster_forward(int64_t i, const Tensor& input);
};

}  // namespace colony::nn
