// RMSprop with PyTorch's update rule (torch.optim.RMSprop, single-tensor path):
//   g = -g (maximize);  g += weight_decay * p
//   square_avg = alpha * square_avg + (1 - alpha) * g^2
//   avg = sqrt(square_avg - grad_avg^2) with grad_avg = lerp(grad_avg, g, 1 - alpha) (centered),
//         sqrt(square_avg) otherwise;  avg += eps
//   momentum > 0: buf = momentum * buf + g / avg;  p -= lr * buf.   Else p -= lr * g / avg.
// State: step, square_avg, momentum_buffer (momentum > 0), grad_avg (centered). OneCycleLR cycles
// `momentum`, as torch's does.
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct RMSpropOptions : detail::OptionsBase<RMSpropOptions> {
  static constexpr const char* kName = "RMSpropOptions";
  // RMSpropOptions() leaves lr unset (1e-2 unless a group inherits the optimizer's).
  RMSpropOptions() = default;
  RMSpropOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-2;
  COLONY_OPTIM_ARG(double, alpha) = 0.99;
  COLONY_OPTIM_ARG(double, eps) = 1e-8;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(double, momentum) = 0.0;
  COLONY_OPTIM_ARG(bool, centered) = false;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("alpha", s.alpha_);
    visit("eps", s.eps_);
    visit("weight_decay", s.weight_decay_);
    visit("momentum", s.momentum_);
    visit("centered", s.centered_);
    visit("maximize", s.maximize_);
  }
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, RMSpropOptions(..)} its own options.
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults);
  void step() override;
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
