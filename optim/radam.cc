#include "optim/radam.h"

#include <cmath>
#include <map>
#include <utility>

#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {

RAdam::RAdam(std::vector<Tensor> params, const RAdamOptions& options)
    : RAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, const RAdamOptions& defaults) : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void RAdam::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const RAdamOptions&>(options);
  detail::check_adam_family_ranges(o, "RAdam");
}

void RAdam::step() {
  detail::RuleStepScope scope("RAdam::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<RAdamOptions>();
    // The scalars depend on each parameter's step count: one fused update per count.
    auto by_step = detail::batch_by_step(group.params, [this](const Tensor& p) -> auto& { return state_of(p); },
                                         {"exp_avg", "exp_avg_sq"});
    const double beta1 = o.beta1(), beta2 = o.beta2();
    for (auto& [step, tensors] : by_step) {
      const double bias_correction1 = 1 - std::pow(beta1, step);
      const double bias_correction2 = 1 - std::pow(beta2, step);
      // The length of the approximated simple moving average, and its limit (torch's rho_t, rho_inf).
      const double rho_inf = 2 / (1 - beta2) - 1;
      const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
      const double rect =
          std::pow((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5);
      raw::radam_step_multi_(tensors, {o.lr(), beta1, beta2, o.eps(), o.weight_decay(), o.decoupled_weight_decay(),
                                       o.maximize(), bias_correction1, std::pow(bias_correction2, 0.5), rect,
                                       rho_t > 5.0});
    }
  }
}

}  // namespace colony::optim
