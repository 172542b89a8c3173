#include "optim/nadam.h"

#include <cmath>
#include <map>
#include <utility>

#include "ops/raw_ops.h"
#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {

NAdam::NAdam(std::vector<Tensor> params, const NAdamOptions& options)
    : NAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

NAdam::NAdam(std::vector<ParamGroup> groups, const NAdamOptions& defaults) : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void NAdam::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const NAdamOptions&>(options);
  detail::check_adam_family_ranges(o, "NAdam");
  detail::check_range(o.momentum_decay() >= 0, "NAdam", "momentum_decay value", o.momentum_decay(),
                      "momentum_decay >= 0");
}

void NAdam::step() {
  detail::RuleStepScope scope("NAdam::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<NAdamOptions>();
    const double beta1 = o.beta1(), beta2 = o.beta2(), lr = o.lr();
    // The momentum cache at step t, as torch computes it.
    auto mu_at = [&](double t) { return beta1 * (1.0 - 0.5 * std::pow(0.96, t * o.momentum_decay())); };
    // The scalars depend on each parameter's step count and mu_product (which OneCycleLR's beta1
    // changes shape): one fused update per pair.
    std::map<std::pair<double, double>, raw::RuleStepTensors> batches;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      const double step = detail::advance_step(state);
      Tensor& product = state["mu_product"];
      if (!product.defined()) product = raw::ones({}, TensorOptions(kFloat64));
      if (!product.device().is_cpu() || product.dtype() != kFloat64) product = raw::to(product, kCPU, kFloat64);
      const double mu_product = product.item<double>() * mu_at(step);
      raw::fill_(product, mu_product);
      detail::add_to_step(batches[{step, mu_product}], p, p.grad(),
                          {&detail::state_tensor(state, "exp_avg", p), &detail::state_tensor(state, "exp_avg_sq", p)});
    }
    for (auto& [key, tensors] : batches) {
      const auto [step, mu_product] = key;
      const double mu = mu_at(step), mu_next = mu_at(step + 1);
      const double grad_coef = -lr * (1.0 - mu) / (1.0 - mu_product);
      const double avg_coef = (-lr * mu_next) / (1.0 - mu_product * mu_next);
      raw::nadam_step_multi_(tensors, {lr, beta1, beta2, o.eps(), o.weight_decay(), o.decoupled_weight_decay(),
                                       o.maximize(), 1 - std::pow(beta2, step), grad_coef, avg_coef});
    }
  }
}

}  // namespace colony::optim
