#include "optim/adam.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "log/trace.h"
#include "tensor/cuda_graph.h"
#include "tensor/grad_mode.h"
#include "tensor/raw_ops.h"
#include "tensor/raw_optim_ops.h"

namespace colony::optim {

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults)
    : Optimizer(std::move(groups), defaults), decoupled_(false) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

Adam::Adam(std::vector<ParamGroup> groups, const AdamWOptions& defaults)
    : Optimizer(std::move(groups), defaults), decoupled_(true) {
  for (const auto& g : param_groups()) check_options(g.options.get());
}

AdamOptions Adam::numbers(const OptimizerOptions& options) {
  if (const auto* w = dynamic_cast<const AdamWOptions*>(&options)) return w->as_adam();
  return dynamic_cast<const AdamOptions&>(options);
}

// PyTorch's checks, written so that NaN fails them too (every comparison with NaN is false).
void Adam::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const AdamOptions o = numbers(options);
  const double lr = o.lr(), eps = o.eps(), b1 = o.beta1(), b2 = o.beta2(), wd = o.weight_decay();
  if (!(lr >= 0)) throw std::invalid_argument("Adam: invalid learning rate " + std::to_string(lr));
  if (!(eps >= 0)) throw std::invalid_argument("Adam: invalid epsilon value " + std::to_string(eps));
  if (!(b1 >= 0 && b1 < 1)) throw std::invalid_argument("Adam: invalid beta parameter at index 0: " + std::to_string(b1));
  if (!(b2 >= 0 && b2 < 1)) throw std::invalid_argument("Adam: invalid beta parameter at index 1: " + std::to_string(b2));
  if (!(wd >= 0)) throw std::invalid_argument("Adam: invalid weight_decay value " + std::to_string(wd));
}

void Adam::step() {
  trace::Scope span("optimizer.step", "compute");
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const AdamOptions o = numbers(group.options.get());
    const bool amsgrad = o.amsgrad();
    // Parameters at the same step share the bias corrections: one multi-tensor update per step
    // count (normally one for the whole group).
    struct Lists {
      std::vector<Tensor> params, grads, m, v, vmax;
    };
    std::map<double, Lists> by_step;
    for (Tensor& p : group.params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      grad = raw::contiguous(grad);
      auto& state = state_of(p);
      if (state.empty()) {
        state["step"] = raw::scalar_tensor(0.0, kFloat64);
        state["exp_avg"] = raw::zeros_like(p);
        state["exp_avg_sq"] = raw::zeros_like(p);
        if (amsgrad) state["max_exp_avg_sq"] = raw::zeros_like(p);
      }
      // Bias corrections come from this host-side count, so a captured step would replay the
      // capture's step number forever: refuse rather than train differently from eager mode.
      if (cuda::CUDAGraph::capturing() != nullptr) {
        throw std::runtime_error("Adam::step: cannot be captured in a CUDA graph yet (its step count and bias "
                                 "corrections live on the host); use SGD, or run Adam eagerly");
      }
      // A CPU scalar: reading it costs no device synchronization.
      double step = state["step"].item<double>() + 1;
      raw::fill_(state["step"], step);
      Lists& l = by_step[step];
      l.params.push_back(p);
      l.grads.push_back(grad);
      l.m.push_back(state["exp_avg"]);
      l.v.push_back(state["exp_avg_sq"]);
      if (amsgrad) l.vmax.push_back(state["max_exp_avg_sq"]);
    }
    for (auto& [step, l] : by_step) {
      kernels::AdamParams a{o.lr(),
                            o.beta1(),
                            o.beta2(),
                            o.eps(),
                            o.weight_decay(),
                            decoupled_,
                            amsgrad,
                            o.maximize(),
                            1 - std::pow(o.beta1(), step),
                            std::sqrt(1 - std::pow(o.beta2(), step))};
      raw::adam_step_multi_(l.params, l.grads, l.m, l.v, l.vmax, a);
    }
  }
}

}  // namespace colony::optim
