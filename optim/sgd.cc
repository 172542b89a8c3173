#include "optim/sgd.h"

#include <stdexcept>
#include <vector>

#include "log/trace.h"
#include "tensor/grad_mode.h"
#include "tensor/raw_ops.h"
#include "tensor/raw_optim_ops.h"

namespace colony::optim {

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options) : Optimizer(std::move(params), options) {
  check_options(param_groups()[0].options.get());
}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults) : Optimizer(std::move(groups), defaults) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

// PyTorch's checks, written so that NaN fails them too (every comparison with NaN is false).
void SGD::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const SGDOptions&>(options);
  if (!(o.lr() >= 0)) throw std::invalid_argument("SGD: invalid learning rate " + std::to_string(o.lr()));
  if (!(o.momentum() >= 0)) throw std::invalid_argument("SGD: invalid momentum value " + std::to_string(o.momentum()));
  if (!(o.weight_decay() >= 0)) {
    throw std::invalid_argument("SGD: invalid weight_decay value " + std::to_string(o.weight_decay()));
  }
  if (o.nesterov() && (o.momentum() <= 0 || o.dampening() != 0)) {
    throw std::invalid_argument("SGD: nesterov momentum requires a momentum and zero dampening");
  }
}

void SGD::step() {
  trace::Scope span("optimizer.step", "compute");
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = group.options.as<SGDOptions>();
    kernels::SgdParams s{o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(), false, o.maximize()};
    // Parameters whose momentum buffer starts now and the others differ in first_step: one
    // multi-tensor update for each kind.
    std::vector<Tensor> params[2], grads[2], bufs[2];
    for (Tensor& p : group.params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      grad = raw::contiguous(grad);
      Tensor buf;
      bool first = false;
      if (s.momentum != 0) {
        auto& state = state_of(p);
        auto it = state.find("momentum_buffer");
        first = it == state.end();
        if (first) it = state.emplace("momentum_buffer", raw::empty_like(p)).first;
        buf = it->second;
      }
      params[first].push_back(p);
      grads[first].push_back(grad);
      bufs[first].push_back(buf);
    }
    for (int first : {0, 1}) {
      if (params[first].empty()) continue;
      s.first_step = first != 0;
      raw::sgd_step_multi_(params[first], grads[first], bufs[first], s);
    }
  }
}

}  // namespace colony::optim
