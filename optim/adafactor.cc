#include "optim/adafactor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "autograd/ops.h"
#include "ops/raw_ops.h"
#include "optim/rule_step.h"

namespace colony::optim {
namespace {

// torch's ValueError for an option out of range: "<what> should be <bound> but is: <value>".
void check(bool ok, const char* what, const char* bound, double value) {
  if (ok) return;
  std::ostringstream message;
  message << what << " should be " << bound << " but is: " << value;
  throw std::invalid_argument(message.str());
}

double dtype_eps(DType t) {
  switch (t) {
    case DType::Float64: return std::numeric_limits<double>::epsilon();
    case DType::Float16: return 0.0009765625;  // torch.finfo(torch.float16).eps
    case DType::BFloat16: return 0.0078125;    // torch.finfo(torch.bfloat16).eps
    default: return std::numeric_limits<float>::epsilon();
  }
}

// state[name]: zeros of p's shape with dim `dim` (-1 or -2) made 1, when p has none yet.
Tensor& factor_state(std::map<std::string, Tensor>& state, const char* name, const Tensor& p, int64_t dim) {
  Tensor& t = state[name];
  if (!t.defined()) {
    Shape shape = p.sizes();
    shape[shape.size() + dim] = 1;
    t = raw::zeros(shape, TensorOptions(p.dtype()).device(p.device()));
  }
  return t;
}

}  // namespace

Adafactor::Adafactor(std::vector<Tensor> params, const AdafactorOptions& options)
    : Adafactor(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adafactor::Adafactor(std::vector<ParamGroup> groups, const AdafactorOptions& defaults)
    : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

void Adafactor::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const AdafactorOptions&>(options);
  check(o.lr() >= 0, "Learning rate", ">= 0", o.lr());
  check(o.beta2_decay() <= 0, "beta2_decay", "<= 0", o.beta2_decay());
  if (!o.eps1_is_dtype_eps()) check(o.eps1() >= 0, "epsilon1", ">= 0", o.eps1());
  check(o.eps2() >= 0, "epsilon2", ">= 0", o.eps2());
  check(o.d() >= 1, "Clipping threshold d", ">= 1", o.d());
  check(o.weight_decay() >= 0, "weight_decay", ">= 0", o.weight_decay());
}

void Adafactor::step() {
  detail::RuleStepScope scope("Adafactor::step");
  for (ParamGroup& group : param_groups()) {
    const auto& o = group.options.as<AdafactorOptions>();
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      const Tensor grad = o.maximize() ? colony::neg(p.grad()) : p.grad();
      auto& state = state_of(p);
      const double step = detail::advance_step(state);
      const double eps1 = o.eps1_is_dtype_eps() ? dtype_eps(p.dtype()) : o.eps1();
      const double one_minus_beta2 = std::pow(step, o.beta2_decay());
      const double rho = std::min(o.lr(), 1.0 / std::sqrt(step));
      const double root_numel = std::sqrt(static_cast<double>(p.numel()));
      const double alpha = std::max(o.eps2(), colony::norm(p).item<double>() / root_numel) * rho;
      if (o.weight_decay() != 0) p.mul_(1 - o.lr() * o.weight_decay());
      Tensor var_estimate;
      if (p.dim() > 1) {
        Tensor& row_var = factor_state(state, "row_var", p, -1);
        Tensor& col_var = factor_state(state, "col_var", p, -2);
        const Tensor row_mean = colony::norm(grad, 2.0, {-1}, true).square() / static_cast<double>(grad.size(-1));
        const Tensor col_mean = colony::norm(grad, 2.0, {-2}, true).square() / static_cast<double>(grad.size(-2));
        row_var.copy_(colony::lerp(row_var, row_mean, one_minus_beta2));
        col_var.copy_(colony::lerp(col_var, col_mean, one_minus_beta2));
        var_estimate = colony::matmul(row_var, col_var) / colony::mean(row_var, {-2}, true).clamp(eps1, std::nullopt);
      } else {
        Tensor& variance = detail::state_tensor(state, "variance", p);
        variance.copy_(colony::lerp(variance, grad * grad, one_minus_beta2));
        var_estimate = variance;
      }
      const Tensor update = var_estimate.clamp(eps1 * eps1, std::nullopt).rsqrt() * grad;
      const double denom = std::max(1.0, colony::norm(update).item<double>() / (root_numel * o.d()));
      p.add_(update, -alpha / denom);
    }
  }
}

}  // namespace colony::optim
