#include "optim/rmsprop.h"

#include <utility>

#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& options)
    : RMSprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults)
    : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void RMSprop::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const RMSpropOptions&>(options);
  detail::check_range(o.lr() >= 0, "RMSprop", "learning rate", o.lr(), "lr >= 0");
  detail::check_range(o.eps() >= 0, "RMSprop", "epsilon value", o.eps(), "eps >= 0");
  detail::check_range(o.momentum() >= 0, "RMSprop", "momentum value", o.momentum(), "momentum >= 0");
  detail::check_range(o.weight_decay() >= 0, "RMSprop", "weight_decay value", o.weight_decay(), "weight_decay >= 0");
  detail::check_range(o.alpha() >= 0, "RMSprop", "alpha value", o.alpha(), "alpha >= 0");
}

void RMSprop::step() {
  detail::RuleStepScope scope("RMSprop::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<RMSpropOptions>();
    raw::RuleStepTensors tensors;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      detail::advance_step(state);
      // Made when first needed, so that a momentum OneCycleLR sets after the first step finds a
      // zero buffer, as one made at the start would be.
      const Tensor* buf = o.momentum() > 0 ? &detail::state_tensor(state, "momentum_buffer", p) : nullptr;
      const Tensor* grad_avg = o.centered() ? &detail::state_tensor(state, "grad_avg", p) : nullptr;
      detail::add_to_step(tensors, p, p.grad(), {&detail::state_tensor(state, "square_avg", p), grad_avg, buf});
    }
    if (tensors.params.empty()) continue;
    raw::rmsprop_step_multi_(tensors, {o.lr(), o.alpha(), o.eps(), o.weight_decay(), o.momentum(), o.centered(),
                                       o.maximize()});
  }
}

}  // namespace colony::optim
