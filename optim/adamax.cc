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
    auto by_step = detail::batch_by_step(group.params, [this](const Tensor& p) -> auto& { return state_of(p); },
                                         {"exp_avg", "exp_inf"});
    for (auto& [step, tensors] : by_step) {
      const double clr = o.lr() / (1 - std::pow(o.beta1(), step));
      raw::adamax_step_multi_(tensors, {clr, o.beta1(), o.beta2(), o.eps(), o.weight_decay(), o.maximize()});
    }
  }
}

}  // namespace colony::optim
