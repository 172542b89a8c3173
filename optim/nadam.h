// NAdam with PyTorch's update rule (torch.optim.NAdam, single-tensor path):
//   g = -g (maximize);  p *= 1 - lr * weight_decay (decoupled_weight_decay) | g += weight_decay * p
//   mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));  mu_product *= mu_t
//   exp_avg = lerp(exp_avg, g, 1 - beta1);  exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g^2
//   denom = sqrt(exp_avg_sq / (1 - beta2^t)) + eps
//   p -= lr * (1 - mu_t) / (1 - mu_product) * g / denom
//   p -= lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * exp_avg / denom
// State: step, mu_product (a float64 scalar; torch's is float32 unless the default dtype is
// float64), exp_avg, exp_avg_sq. OneCycleLR cycles beta1, as torch's does.
#pragma once

#include <utility>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct NAdamOptions : detail::OptionsBase<NAdamOptions> {
  static constexpr const char* kName = "NAdamOptions";
  // NAdamOptions() leaves lr unset (2e-3 unless a group inherits the optimizer's).
  NAdamOptions() = default;
  NAdamOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 2e-3;
  COLONY_OPTIM_BETAS(NAdamOptions, 0.9, 0.999)
  COLONY_OPTIM_ARG(double, eps) = 1e-8;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(double, momentum_decay) = 4e-3;
  COLONY_OPTIM_ARG(bool, decoupled_weight_decay) = false;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("beta1", s.beta1_);
    visit("beta2", s.beta2_);
    visit("eps", s.eps_);
    visit("weight_decay", s.weight_decay_);
    visit("momentum_decay", s.momentum_decay_);
    visit("decoupled_weight_decay", s.decoupled_weight_decay_);
    visit("maximize", s.maximize_);
  }
};

class NAdam : public Optimizer {
 public:
  NAdam(std::vector<Tensor> params, const NAdamOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, NAdamOptions(..)} its own options.
  NAdam(std::vector<ParamGroup> groups, const NAdamOptions& defaults);
  void step() override;
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
