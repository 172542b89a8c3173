#include "optim/rprop.h"

#include <sstream>
#include <stdexcept>
#include <utility>

#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {

Rprop::Rprop(std::vector<Tensor> params, const RpropOptions& options)
    : Rprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Rprop::Rprop(std::vector<ParamGroup> groups, const RpropOptions& defaults) : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void Rprop::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const RpropOptions&>(options);
  detail::check_range(o.lr() >= 0, "Rprop", "learning rate", o.lr(), "lr >= 0");
  if (!(0 < o.etaminus() && o.etaminus() < 1 && 1 < o.etaplus())) {
    std::ostringstream message;
    message << "Rprop: Invalid eta values: " << o.etaminus() << ", " << o.etaplus()
            << ", expected 0 < etaminus < 1 < etaplus";
    throw std::invalid_argument(message.str());
  }
}

void Rprop::step() {
  detail::RuleStepScope scope("Rprop::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<RpropOptions>();
    raw::RuleStepTensors tensors;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      detail::advance_step(state);
      detail::add_to_step(tensors, p, p.grad(),
                          {&detail::state_tensor(state, "prev", p),
                           &detail::state_tensor(state, "step_size", p, o.lr())});
    }
    if (tensors.params.empty()) continue;
    raw::rprop_step_multi_(tensors, {o.etaminus(), o.etaplus(), o.step_size_min(), o.step_size_max(), o.maximize()});
  }
}

}  // namespace colony::optim
