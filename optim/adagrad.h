// Adagrad with PyTorch's update rule (torch.optim.Adagrad, single-tensor path, dense gradients):
//   g = -g (maximize);  g += weight_decay * p
//   clr = lr / (1 + (t - 1) * lr_decay)
//   sum += g^2;  p -= clr * g / (sqrt(sum) + eps)
// State: step and sum (filled with initial_accumulator_value), made for every parameter when the
// optimizer is built, as torch's are.
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct AdagradOptions : detail::OptionsBase<AdagradOptions> {
  static constexpr const char* kName = "AdagradOptions";
  // AdagradOptions() leaves lr unset (1e-2 unless a group inherits the optimizer's).
  AdagradOptions() = default;
  AdagradOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-2;
  COLONY_OPTIM_ARG(double, lr_decay) = 0.0;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(double, initial_accumulator_value) = 0.0;
  COLONY_OPTIM_ARG(double, eps) = 1e-10;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("lr_decay", s.lr_decay_);
    visit("weight_decay", s.weight_decay_);
    visit("initial_accumulator_value", s.initial_accumulator_value_);
    visit("eps", s.eps_);
    visit("maximize", s.maximize_);
  }
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, AdagradOptions(..)} its own options.
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults);
  void step() override;
  void check_options(const OptimizerOptions& options) const override;

 private:
  // Gives a parameter its step count and sum when it has none (at construction, and for groups
  // added later).
  void init_state(const Tensor& param, const AdagradOptions& options);
};

}  // namespace colony::optim
