// Rprop with PyTorch's update rule (torch.optim.Rprop, single-tensor path; the math is RpropRule in
// kernels/common/optim_functors.h):
//   g = -g (maximize);  factor = etaplus, etaminus or 1 as sign(g * prev) is > 0, < 0 or 0
//   step_size = clamp(step_size * factor, step_size_min, step_size_max)
//   g = 0 where factor == etaminus;  p -= sign(g) * step_size;  prev = g
// State: step, prev (zeros), step_size (filled with the group's lr when the parameter first steps).
#pragma once

#include <utility>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct RpropOptions : detail::OptionsBase<RpropOptions> {
  static constexpr const char* kName = "RpropOptions";
  // RpropOptions() leaves lr unset (1e-2 unless a group inherits the optimizer's).
  RpropOptions() = default;
  RpropOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-2;
  // etas (etaminus, etaplus) = (0.5, 1.2) and step_sizes (min, max) = (1e-6, 50), as torch's pairs;
  // a checkpoint names each half ("etaminus", "etaplus", "step_size_min", "step_size_max").
  COLONY_OPTIM_ARG(double, etaminus) = 0.5;
  COLONY_OPTIM_ARG(double, etaplus) = 1.2;
  COLONY_OPTIM_ARG(double, step_size_min) = 1e-6;
  COLONY_OPTIM_ARG(double, step_size_max) = 50;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  RpropOptions& etas(std::pair<double, double> e) {
    etaminus(e.first);
    return etaplus(e.second);
  }
  std::pair<double, double> etas() const { return {etaminus_, etaplus_}; }
  RpropOptions& step_sizes(std::pair<double, double> s) {
    step_size_min(s.first);
    return step_size_max(s.second);
  }
  std::pair<double, double> step_sizes() const { return {step_size_min_, step_size_max_}; }

  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("etaminus", s.etaminus_);
    visit("etaplus", s.etaplus_);
    visit("step_size_min", s.step_size_min_);
    visit("step_size_max", s.step_size_max_);
    visit("maximize", s.maximize_);
  }
};

class Rprop : public Optimizer {
 public:
  Rprop(std::vector<Tensor> params, const RpropOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, RpropOptions(..)} its own options.
  Rprop(std::vector<ParamGroup> groups, const RpropOptions& defaults);
  void step() override;
  // torch's checks: lr >= 0 and 0 < etaminus < 1 < etaplus ("Rprop: Invalid eta values: 1.5, 1.2,
  // expected 0 < etaminus < 1 < etaplus"); torch checks no step sizes, nor does Colony.
  void check_options(const OptimizerOptions& options) const override;
};

}  // namespace colony::optim
