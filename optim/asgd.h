// ASGD with PyTorch's update rule (torch.optim.ASGD, single-tensor path; the math is AsgdRule in
// kernels/common/optim_functors.h):
//   g = -g (maximize);  g += weight_decay * p
//   p = p * (1 - lambd * eta) - eta * g
//   ax = p while mu == 1, else ax += (p - ax) * mu
//   eta = lr / (1 + lambd * lr * step)^alpha;  mu = 1 / max(1, step - t0)
// State: step, eta (the group's lr at first), mu (1), ax (zeros). step, eta and mu are float64
// scalars on the host (torch keeps eta and mu in the default dtype, float32 unless
// torch.set_default_dtype(torch.float64), so a float32 run differs from torch's in the last bits).
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct ASGDOptions : detail::OptionsBase<ASGDOptions> {
  static constexpr const char* kName = "ASGDOptions";
  // ASGDOptions() leaves lr unset (1e-2 unless a group inherits the optimizer's).
  ASGDOptions() = default;
  ASGDOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-2;
  COLONY_OPTIM_ARG(double, lambd) = 1e-4;
  COLONY_OPTIM_ARG(double, alpha) = 0.75;
  COLONY_OPTIM_ARG(double, t0) = 1e6;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("lambd", s.lambd_);
    visit("alpha", s.alpha_);
    visit("t0", s.t0_);
    visit("weight_decay", s.weight_decay_);
    visit("maximize", s.maximize_);
  }
};

class ASGD : public Optimizer {
 public:
  ASGD(std::vector<Tensor> params, const ASGDOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, ASGDOptions(..)} its own options.
  ASGD(std::vector<ParamGroup> groups, const ASGDOptions& defaults);
  void step() override;
  // torch's checks: lr, lambd, alpha and weight_decay >= 0.
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
