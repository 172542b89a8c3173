// RAdam with PyTorch's update rule (torch.optim.RAdam, single-tensor path):
//   g = -g (maximize);  p *= 1 - lr * weight_decay (decoupled_weight_decay) | g += weight_decay * p
//   exp_avg = lerp(exp_avg, g, 1 - beta1);  exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g^2
//   rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
//   rho_t > 5:  p -= exp_avg / (1 - beta1^t) * lr * sqrt(1 - beta2^t) / (sqrt(exp_avg_sq) + eps) * rect,
//               rect = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
//   otherwise:  p -= exp_avg / (1 - beta1^t) * lr
// State: step, exp_avg, exp_avg_sq. OneCycleLR cycles beta1, as torch's does.
#pragma once

#include <utility>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct RAdamOptions : detail::OptionsBase<RAdamOptions> {
  static constexpr const char* kName = "RAdamOptions";
  // RAdamOptions() leaves lr unset (1e-3 unless a group inherits the optimizer's).
  RAdamOptions() = default;
  RAdamOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-3;
  COLONY_OPTIM_BETAS(RAdamOptions, 0.9, 0.999)
  COLONY_OPTIM_ARG(double, eps) = 1e-8;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
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
    visit("decoupled_weight_decay", s.decoupled_weight_decay_);
    visit("maximize", s.maximize_);
  }
};

class RAdam : public Optimizer {
 public:
  RAdam(std::vector<Tensor> params, const RAdamOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, RAdamOptions(..)} its own options.
  RAdam(std::vector<ParamGroup> groups, const RAdamOptions& defaults);
  void step() override;
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
