// The character-level GPT's optimizer and training step, shared by char_gpt (training and
// --benchmark) and benchmarks/gpt_cpu so that both time the same work: accum_steps micro-batches of
// forward (under autocast) and backward (scaled when float16 needs a GradScaler), the gradients'
// global norm clipped, then AdamW's step with nanoGPT's parameter groups.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "colony.h"
#include "examples/char_gpt/gpt.h"
#include "examples/lenet_cifar10/amp_mode.h"

namespace char_gpt {

// nanoGPT's AdamW groups: weight decay on the 2-D weights (matrices and embeddings) only. The groups
// set only their weight decay and inherit the betas and the rate from the optimizer's defaults.
inline std::vector<optim::ParamGroup> adamw_groups(const std::vector<Tensor>& params, double weight_decay) {
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : params) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  return {{decay, optim::AdamWOptions().weight_decay(weight_decay)}, {no_decay, optim::AdamWOptions().weight_decay(0.0)}};
}

struct StepConfig {
  int accum_steps = 1;    // micro-batches per optimizer step
  double grad_clip = 1.0; // the gradients' global norm is clipped to this; 0: no clipping
  lenet::AmpMode amp;     // autocast (and a GradScaler under fp16)
  Device device = kCPU;   // where the micro-batches are moved to
};

class TrainStep {
 public:
  // ddp wraps model (with no process group it simply runs it); zero, when not null, is the
  // optimizer sharded under ddp, whose clipping sees every rank's shard.
  TrainStep(GPT& model, dist::DistributedDataParallel& ddp, optim::Optimizer& optimizer, optim::GradScaler& scaler,
            dist::ZeroRedundancyOptimizer* zero, StepConfig config)
      : model_(model), ddp_(ddp), opt_(optimizer), scaler_(scaler), zero_(zero), c_(config) {}

  // One optimizer step on micro_batch(0) ... micro_batch(accum_steps - 1). Returns the step's
  // loss: the mean over its micro-batches.
  double operator()(const std::function<data::TokenBatch(int)>& micro_batch) {
    opt_.zero_grad();
    double step_loss = 0;
    for (int micro = 0; micro < c_.accum_steps; ++micro) {
      // Gradients are averaged over the ranks once, after the last micro-batch.
      std::optional<dist::DistributedDataParallel::NoSyncGuard> local;
      if (micro + 1 < c_.accum_steps) local.emplace(ddp_.no_sync());
      data::TokenBatch b = micro_batch(micro);
      Tensor loss;
      {
        AutocastGuard autocast(c_.device.type, c_.amp.dtype, c_.amp.enabled);
        loss = lm_loss(ddp_.forward(b.x.to(c_.device)), b.y.to(c_.device));
        if (c_.accum_steps > 1) loss = loss / static_cast<double>(c_.accum_steps);
      }
      scaler_.scale(loss).backward();
      step_loss += loss.item<double>();
    }
    if (c_.grad_clip > 0) {
      scaler_.unscale_(opt_);
      if (zero_) zero_->clip_grad_norm_(c_.grad_clip);
      else nn::utils::clip_grad_norm_(model_.parameters(), c_.grad_clip);
    }
    scaler_.step(opt_);
    scaler_.update();
    return step_loss;
  }

 private:
  GPT& model_;
  dist::DistributedDataParallel& ddp_;
  optim::Optimizer& opt_;
  optim::GradScaler& scaler_;
  dist::ZeroRedundancyOptimizer* zero_;
  StepConfig c_;
};

}  // namespace char_gpt
