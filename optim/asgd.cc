#include "optim/asgd.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "ops/raw_ops.h"
#include "ops/raw_optim_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {
namespace {

// state[name], a float64 scalar on the host holding `initial` when the parameter has none yet
// (moved to the host when a checkpoint loaded it elsewhere).
double host_scalar(std::map<std::string, Tensor>& state, const char* name, double initial) {
  auto it = state.find(name);
  if (it == state.end()) return initial;
  return raw::to(it->second, kCPU, kFloat64).item<double>();
}

void set_host_scalar(std::map<std::string, Tensor>& state, const char* name, double value) {
  state[name] = raw::scalar_tensor(value, kFloat64);
}

}  // namespace

ASGD::ASGD(std::vector<Tensor> params, const ASGDOptions& options)
    : ASGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

ASGD::ASGD(std::vector<ParamGroup> groups, const ASGDOptions& defaults) : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void ASGD::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const ASGDOptions&>(options);
  detail::check_range(o.lr() >= 0, "ASGD", "learning rate", o.lr(), "lr >= 0");
  detail::check_range(o.lambd() >= 0, "ASGD", "lambd value", o.lambd(), "lambd >= 0");
  detail::check_range(o.alpha() >= 0, "ASGD", "alpha value", o.alpha(), "alpha >= 0");
  detail::check_range(o.weight_decay() >= 0, "ASGD", "weight_decay value", o.weight_decay(), "weight_decay >= 0");
}

void ASGD::step() {
  detail::RuleStepScope scope("ASGD::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<ASGDOptions>();
    // Parameters with the same (eta, mu) share one fused update: all of a group's, unless some
    // missed steps or the rate changed between their first steps.
    std::map<std::pair<double, double>, raw::RuleStepTensors> batches;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      const double eta = host_scalar(state, "eta", o.lr());
      const double mu = host_scalar(state, "mu", 1.0);
      const double step = detail::advance_step(state);
      detail::add_to_step(batches[{eta, mu}], p, p.grad(), {&detail::state_tensor(state, "ax", p)});
      // The next step's eta and mu, from this step's count and the group's rate now (torch's order).
      set_host_scalar(state, "eta", o.lr() / std::pow(1 + o.lambd() * o.lr() * step, o.alpha()));
      set_host_scalar(state, "mu", 1 / std::max(1.0, step - o.t0()));
    }
    for (auto& [scalars, tensors] : batches) {
      raw::asgd_step_multi_(tensors, {scalars.first, o.lambd(), scalars.second, o.weight_decay(), o.maximize()});
    }
  }
}

}  // namespace colony::optim
