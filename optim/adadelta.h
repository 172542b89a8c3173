// Adadelta with PyTorch's update rule (torch.optim.Adadelta, single-tensor path):
//   g = -g (maximize);  g += weight_decay * p
//   square_avg = rho * square_avg + (1 - rho) * g^2
//   delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
//   acc_delta = rho * acc_delta + (1 - rho) * delta^2;  p -= lr * delta
// State: step, square_avg, acc_delta.
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct AdadeltaOptions : detail::OptionsBase<AdadeltaOptions> {
  static constexpr const char* kName = "AdadeltaOptions";
  // AdadeltaOptions() leaves lr unset (1.0 unless a group inherits the optimizer's).
  AdadeltaOptions() = default;
  AdadeltaOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1.0;
  COLONY_OPTIM_ARG(double, rho) = 0.9;
  COLONY_OPTIM_ARG(double, eps) = 1e-6;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("rho", s.rho_);
    visit("eps", s.eps_);
    visit("weight_decay", s.weight_decay_);
    visit("maximize", s.maximize_);
  }
};

class Adadelta : public Optimizer {
 public:
  Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, AdadeltaOptions(..)} its own options.
  Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& defaults);
  void step() override;
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
