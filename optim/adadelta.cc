#include "optim/adadelta.h"

#include <utility>

#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options)
    : Adadelta(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adadelta::Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& defaults)
    : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void Adadelta::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const AdadeltaOptions&>(options);
  detail::check_range(o.lr() >= 0, "Adadelta", "learning rate", o.lr(), "lr >= 0");
  detail::check_range(o.rho() >= 0 && o.rho() <= 1, "Adadelta", "rho value", o.rho(), "0 <= rho <= 1");
  detail::check_range(o.eps() >= 0, "Adadelta", "epsilon value", o.eps(), "eps >= 0");
  detail::check_range(o.weight_decay() >= 0, "Adadelta", "weight_decay value", o.weight_decay(), "weight_decay >= 0");
}

void Adadelta::step() {
  detail::RuleStepScope scope("Adadelta::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<AdadeltaOptions>();
    raw::RuleStepTensors tensors;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      detail::advance_step(state);
      detail::add_to_step(tensors, p, p.grad(),
                          {&detail::state_tensor(state, "square_avg", p), &detail::state_tensor(state, "acc_delta", p)});
    }
    if (tensors.params.empty()) continue;
    raw::adadelta_step_multi_(tensors, {o.lr(), o.rho(), o.eps(), o.weight_decay(), o.maximize()});
  }
}

}  // namespace colony::optim
