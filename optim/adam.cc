#include "optim/adam.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "log/trace.h"
#include "ops/cuda_graph.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"
#include "ops/raw_optim_ops.h"

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

void Adam::step() { step_impl(Tensor()); }

void Adam::step_unless(const Tensor& found_inf) {
  if (!found_inf.defined()) throw std::invalid_argument("Adam::step_unless: found_inf is undefined");
  step_impl(found_inf);
}

void Adam::step_impl(const Tensor& found_inf) {
  trace::Scope span("optimizer.step", "compute");
  NoGradGuard no_grad;
  const bool capturing = cuda::CUDAGraph::capturing() != nullptr;
  for (size_t gi = 0; gi < param_groups().size(); ++gi) {
    ParamGroup& group = param_groups()[gi];
    AdamOptions o = numbers(group.options.get());
    const bool amsgrad = o.amsgrad();
    if (capturing && !o.capturable()) {
      throw std::runtime_error("Adam::step: captured in a CUDA graph, but group " + std::to_string(gi) +
                               " keeps its step count on the host, so every replay would take the capture's step "
                               "number; construct the optimizer with AdamOptions(lr).capturable(true) (or "
                               "AdamWOptions)");
    }
    if (found_inf.defined() && !o.capturable()) {
      // The step counts live on the host: the flag is read there (one wait for the device).
      if (found_inf.item<float>() != 0.0f) continue;
    }
    struct Lists {
      std::vector<Tensor> params, grads, m, v, vmax, steps;
    };
    // Host step counts: parameters at the same step share the bias corrections, one multi-tensor
    // update per step count (normally one for the whole group). Capturable: one update, each
    // parameter's count read and advanced on its device.
    std::map<double, Lists> by_step;
    for (Tensor& p : group.params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      grad = raw::contiguous(grad);
      auto& state = state_of(p);
      const Device step_device = o.capturable() ? p.device() : kCPU;
      if (state.empty()) {
        if (capturing) {
          throw std::runtime_error("Adam::step: the optimizer state would be created inside a CUDA graph capture; "
                                   "run at least one eager step first (make_graphed_step's warm-up does)");
        }
        state["step"] = raw::zeros({}, TensorOptions(kFloat64).device(step_device));
        state["exp_avg"] = raw::zeros_like(p);
        state["exp_avg_sq"] = raw::zeros_like(p);
        if (amsgrad) state["max_exp_avg_sq"] = raw::zeros_like(p);
      }
      Tensor& step = state["step"];
      if (step.device() != step_device) {
        // A checkpoint loaded onto the parameter's device, or capturable switched: the count moves
        // once, outside any capture.
        if (capturing) {
          throw std::runtime_error("Adam::step: a step count is on " + step.device().str() + ", expected " +
                                   step_device.str() + "; run an eager step before the capture");
        }
        step = raw::to(step, step_device, kFloat64);
      }
      double key = 0;
      if (!o.capturable()) {
        key = step.item<double>() + 1;  // a CPU scalar: no wait for the device
        raw::fill_(step, key);
      }
      Lists& l = by_step[key];
      l.params.push_back(p);
      l.grads.push_back(grad);
      l.m.push_back(state["exp_avg"]);
      l.v.push_back(state["exp_avg_sq"]);
      if (amsgrad) l.vmax.push_back(state["max_exp_avg_sq"]);
      if (o.capturable()) l.steps.push_back(step);
    }
    if (by_step.empty()) continue;
    kernels::AdamParams a{o.lr(), o.beta1(), o.beta2(), o.eps(), o.weight_decay(), decoupled_, amsgrad, o.maximize(),
                          1, 1};
    if (capturing) {
      const Device device = captured_device(gi, "Adam::step");
      if (device.is_cuda()) a.lr_ptr = captured_lr(gi, device);
    }
    for (auto& [step, l] : by_step) {
      if (!o.capturable()) {
        a.bias_correction1 = 1 - std::pow(o.beta1(), step);
        a.bias_correction2_sqrt = std::sqrt(1 - std::pow(o.beta2(), step));
      }
      raw::adam_step_multi_(l.params, l.grads, l.m, l.v, l.vmax, a, o.capturable() ? found_inf : Tensor(), l.steps);
    }
  }
}

}  // namespace colony::optim
