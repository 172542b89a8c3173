#include "optim/adagrad.h"

#include <map>
#include <utility>

#include "ops/raw_ops.h"
#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& options)
    : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults)
    : Optimizer(std::move(groups), defaults) {
  NoGradGuard no_grad;
  for (const auto& g : param_groups()) {
    const auto& o = g.options.as<AdagradOptions>();
    check_options(o);
    for (const Tensor& p : g.params) init_state(p, o);
  }
}

void Adagrad::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const AdagradOptions&>(options);
  detail::check_range(o.lr() >= 0, "Adagrad", "learning rate", o.lr(), "lr >= 0");
  detail::check_range(o.lr_decay() >= 0, "Adagrad", "lr_decay value", o.lr_decay(), "lr_decay >= 0");
  detail::check_range(o.weight_decay() >= 0, "Adagrad", "weight_decay value", o.weight_decay(), "weight_decay >= 0");
  detail::check_range(o.initial_accumulator_value() >= 0, "Adagrad", "initial_accumulator_value value",
                      o.initial_accumulator_value(), "initial_accumulator_value >= 0");
  detail::check_range(o.eps() >= 0, "Adagrad", "epsilon value", o.eps(), "eps >= 0");
}

void Adagrad::init_state(const Tensor& param, const AdagradOptions& options) {
  auto& state = state_of(param);
  if (!state.count("step")) state["step"] = raw::zeros({}, TensorOptions(kFloat64));
  detail::state_tensor(state, "sum", param, options.initial_accumulator_value());
}

void Adagrad::step() {
  detail::RuleStepScope scope("Adagrad::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<AdagradOptions>();
    // The decayed rate depends on each parameter's step count: one fused update per count.
    for (const Tensor& p : group.params) {
      if (p.grad().defined()) init_state(p, o);  // "sum" filled with the group's initial_accumulator_value
    }
    auto by_step = detail::batch_by_step(group.params, [this](const Tensor& p) -> auto& { return state_of(p); },
                                         {"sum"});
    for (auto& [step, tensors] : by_step) {
      const double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
      raw::adagrad_step_multi_(tensors, {clr, o.eps(), o.weight_decay(), o.maximize()});
    }
  }
}

}  // namespace colony::optim
