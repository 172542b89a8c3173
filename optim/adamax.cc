#include "optim/adamax.h"

#include <cmath>
#include <map>
#include <utility>

#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {

Adamax::Adamax(std::vector<Tensor> params, const AdamaxOptions& options)
    : Adamax(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adamax::Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& defaults) : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void Adamax::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const AdamaxOptions&>(options);
  detail::check_adam_family_ranges(o, "Adamax");
}

void Adamax::step() {
  detail::RuleStepScope scope("Adamax::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<AdamaxOptions>();
    // The bias correction depends on each parameter's step count: one fused update per count.
    std::map<double, raw::RuleStepTensors> by_step;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      const double step = detail::advance_step(state);
      detail::add_to_step(by_step[step], p, p.grad(),
                          {&detail::state_tensor(state, "exp_avg", p), &detail::state_tensor(state, "exp_inf", p)});
    }
    for (auto& [step, tensors] : by_step) {
      const double clr = o.lr() / (1 - std::pow(o.beta1(), step));
      raw::adamax_step_multi_(tensors, {clr, o.beta1(), o.beta2(), o.eps(), o.weight_decay(), o.maximize()});
    }
  }
}

}  // namespace colony::optim
