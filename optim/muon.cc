#include "optim/muon.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "autograd/ops.h"
#include "optim/rule_step.h"

namespace colony::optim {
namespace {

constexpr const char* kAdjustNames[] = {"original", "match_rms_adamw", "spectral_unclamped"};

void check(bool ok, const char* what, const char* bound, double value) {
  if (ok) return;
  std::ostringstream message;
  message << what << " should be " << bound << " but is: " << value;
  throw std::invalid_argument(message.str());
}

// torch's _adjust_lr: the rate scaled for the shape [A, B].
double adjusted_lr(double lr, int64_t adjust, const Tensor& p) {
  const double a = static_cast<double>(p.size(0)), b = static_cast<double>(p.size(1));
  switch (adjust) {
    case 1: return lr * 0.2 * std::sqrt(std::max(a, b));
    case 2: return lr * std::sqrt(a / b);
    default: return lr * std::sqrt(std::max(1.0, a / b));
  }
}

void check_two_dims(const ParamGroup& group) {
  for (const Tensor& p : group.params) {
    if (p.dim() == 2) continue;
    std::ostringstream message;
    message << "Muon only supports 2D parameters whereas we found a parameter with size: [";
    for (int64_t d = 0; d < p.dim(); ++d) message << (d ? ", " : "") << p.size(d);
    message << "]";
    throw std::invalid_argument(message.str());
  }
}

}  // namespace

MuonOptions& MuonOptions::adjust_lr_fn(const std::string& name) {
  for (int64_t i = 0; i < 3; ++i) {
    if (name == kAdjustNames[i]) return adjust_lr(i);
  }
  throw std::invalid_argument("Adjust learning rate function " + name + " is not supported");
}

std::string MuonOptions::adjust_lr_fn() const { return kAdjustNames[std::clamp<int64_t>(adjust_lr_, 0, 2)]; }

Tensor zeropower_via_newtonschulz(const Tensor& update, std::array<double, 3> ns_coefficients, int64_t ns_steps,
                                  double eps) {
  if (ns_steps >= 100) throw std::invalid_argument("Number of steps must be less than 100 for computational efficiency");
  if (update.dim() != 2) throw std::invalid_argument("Input tensor gradient must be a 2D matrix");
  const auto [a, b, c] = ns_coefficients;
  const bool tall = update.size(0) > update.size(1);
  Tensor x = update.to(kBFloat16);
  if (tall) x = x.t();
  x = x / colony::norm(x).clamp(eps, std::nullopt);
  for (int64_t i = 0; i < ns_steps; ++i) {
    const Tensor gram = colony::matmul(x, x.t());
    const Tensor gram_update = colony::addmm(gram, gram, gram, b, c);
    x = colony::addmm(x, gram_update, x, a);
  }
  return tall ? x.t() : x;
}

Muon::Muon(std::vector<Tensor> params, const MuonOptions& options)
    : Muon(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Muon::Muon(std::vector<ParamGroup> groups, const MuonOptions& defaults) : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) {
    check_options(g.options.get());
    check_two_dims(g);
  }
}

void Muon::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const MuonOptions&>(options);
  check(o.lr() >= 0, "Learning rate", ">= 0", o.lr());
  check(o.momentum() >= 0, "momentum", ">= 0", o.momentum());
  check(o.weight_decay() >= 0, "weight decay", ">= 0", o.weight_decay());
  check(o.eps() >= 0, "eps", ">= 0", o.eps());
  check(o.ns_steps() >= 0, "ns_steps", ">= 0", static_cast<double>(o.ns_steps()));
  if (o.ns_steps() >= 100) throw std::invalid_argument("Number of steps must be less than 100 for computational efficiency");
  if (o.adjust_lr() < 0 || o.adjust_lr() > 2) {
    throw std::invalid_argument("Adjust learning rate function " + std::to_string(o.adjust_lr()) + " is not supported");
  }
}

void Muon::step() {
  detail::RuleStepScope scope("Muon::step");
  for (ParamGroup& group : param_groups()) {
    check_two_dims(group);  // add_param_group may have brought others
    const auto& o = group.options.as<MuonOptions>();
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      const Tensor& grad = p.grad();
      Tensor& buf = detail::state_tensor(state_of(p), "momentum_buffer", p);
      buf.copy_(colony::lerp(buf, grad, 1 - o.momentum()));
      const Tensor update = o.nesterov() ? colony::lerp(grad, buf, o.momentum()) : buf;
      const Tensor ortho = zeropower_via_newtonschulz(update, o.ns_coefficients(), o.ns_steps(), o.eps());
      p.mul_(1 - o.lr() * o.weight_decay());
      p.add_(ortho.to(p.dtype()), -adjusted_lr(o.lr(), o.adjust_lr(), p));
    }
  }
}

}  // namespace colony::optim
