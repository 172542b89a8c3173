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

HyperParams AdamOptions::to_map() const {
  return {{"lr", lr()},
          {"beta1", beta1()},
          {"beta2", beta2()},
          {"eps", eps()},
          {"weight_decay", weight_decay()},
          {"amsgrad", amsgrad() ? 1.0 : 0.0},
          {"maximize", maximize() ? 1.0 : 0.0}};
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options) : Adam(std::move(params), options, false) {}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o, bool decoupled)
    : Optimizer(std::move(params), o.to_map()), decoupled_(decoupled) {
  for (const auto& g : param_groups()) check_options(g.options);
}

// PyTorch's checks, written so that NaN fails them too (every comparison with NaN is false).
void Adam::check_options(const HyperParams& o) const {
  Optimizer::check_options(o);
  const double lr = o.at("lr"), eps = o.at("eps"), b1 = o.at("beta1"), b2 = o.at("beta2"), wd = o.at("weight_decay");
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
    const HyperParams& o = group.options;
    bool amsgrad = o.at("amsgrad") != 0;
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
      kernels::AdamParams a{o.at("lr"),
                            o.at("beta1"),
                            o.at("beta2"),
                            o.at("eps"),
                            o.at("weight_decay"),
                            decoupled_,
                            amsgrad,
                            o.at("maximize") != 0,
                            1 - std::pow(o.at("beta1"), step),
                            std::sqrt(1 - std::pow(o.at("beta2"), step))};
      raw::adam_step_multi_(l.params, l.grads, l.m, l.v, l.vmax, a);
    }
  }
}

}  // namespace colony::optim
