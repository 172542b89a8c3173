// Adafactor with PyTorch's update rule (torch.optim.Adafactor, single-tensor path): the second
// moment of a parameter with 2 or more dims is kept factored over its last two dims (a row and a
// column mean of g², Shazeer & Stern 2018), so its state is O(rows + cols), not O(rows * cols).
// Per parameter and step t:
//   g = -g (maximize);  beta2_t' = t^beta2_decay;  rho = min(lr, 1 / sqrt(t))
//   alpha = max(eps2, ||p|| / sqrt(numel)) * rho;  p *= 1 - lr * weight_decay
//   >= 2 dims: row_var = lerp(row_var, mean(g², -1), beta2_t'), col_var likewise over dim -2,
//              v = row_var @ col_var / max(mean(row_var, -2), eps1)
//   1 dim:     variance = lerp(variance, g², beta2_t'), v = variance
//   u = g / sqrt(max(v, eps1²));  p -= alpha / max(1, ||u|| / (sqrt(numel) d)) * u
// eps1 unset (torch's None) is the parameter dtype's machine epsilon. State: step (a float64 scalar
// on the host), row_var [..., rows, 1] and col_var [..., 1, cols], or variance.
#pragma once

#include <optional>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct AdafactorOptions : detail::OptionsBase<AdafactorOptions> {
  static constexpr const char* kName = "AdafactorOptions";
  // AdafactorOptions() leaves lr unset (1e-2 unless a group inherits the optimizer's).
  AdafactorOptions() = default;
  AdafactorOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-2;
  COLONY_OPTIM_ARG(double, beta2_decay) = -0.8;
  // eps (eps1, eps2) = (None, 1e-3), as torch's pair; a checkpoint names each half, eps1's None as
  // eps1_is_dtype_eps = 1.
  COLONY_OPTIM_ARG(double, eps1) = 0.0;
  COLONY_OPTIM_ARG(bool, eps1_is_dtype_eps) = true;
  COLONY_OPTIM_ARG(double, eps2) = 1e-3;
  COLONY_OPTIM_ARG(double, d) = 1.0;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  // eps({std::nullopt, 1e-3}) (torch's default) or eps({1e-30, 1e-3}).
  AdafactorOptions& eps(std::pair<std::optional<double>, double> e) {
    eps1(e.first.value_or(0.0));
    eps1_is_dtype_eps(!e.first.has_value());
    return eps2(e.second);
  }

  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("beta2_decay", s.beta2_decay_);
    visit("eps1", s.eps1_);
    visit("eps1_is_dtype_eps", s.eps1_is_dtype_eps_);
    visit("eps2", s.eps2_);
    visit("d", s.d_);
    visit("weight_decay", s.weight_decay_);
    visit("maximize", s.maximize_);
  }
};

class Adafactor : public Optimizer {
 public:
  Adafactor(std::vector<Tensor> params, const AdafactorOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, AdafactorOptions(..)} its own options.
  Adafactor(std::vector<ParamGroup> groups, const AdafactorOptions& defaults);
  void step() override;
  // torch's checks and words: "Learning rate should be >= 0 but is: -1", beta2_decay <= 0,
  // eps1 >= 0 (when set), eps2 >= 0, d >= 1 ("Clipping threshold d should be >= 1"), weight_decay >= 0.
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
