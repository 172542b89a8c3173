// Adamax with PyTorch's update rule (torch.optim.Adamax, single-tensor path):
//   g = -g (maximize);  g += weight_decay * p
//   exp_avg = lerp(exp_avg, g, 1 - beta1);  exp_inf = max(beta2 * exp_inf, |g| + eps)
//   p -= lr / (1 - beta1^t) * exp_avg / exp_inf
// State: step, exp_avg, exp_inf. OneCycleLR cycles beta1, as torch's does.
#pragma once

#include <utility>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct AdamaxOptions : detail::OptionsBase<AdamaxOptions> {
  static constexpr const char* kName = "AdamaxOptions";
  // AdamaxOptions() leaves lr unset (2e-3 unless a group inherits the optimizer's).
  AdamaxOptions() = default;
  AdamaxOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 2e-3;
  COLONY_OPTIM_BETAS(AdamaxOptions, 0.9, 0.999)
  COLONY_OPTIM_ARG(double, eps) = 1e-8;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("beta1", s.beta1_);
    visit("beta2", s.beta2_);
    visit("eps", s.eps_);
    visit("weight_decay", s.weight_decay_);
    visit("maximize", s.maximize_);
  }
};

class Adamax : public Optimizer {
 public:
  Adamax(std::vector<Tensor> params, const AdamaxOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, AdamaxOptions(..)} its own options.
  Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& defaults);
  void step() override;
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
