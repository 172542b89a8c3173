#include "optim/sgd.h"

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "log/trace.h"
#include "ops/cuda_graph.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"
#include "ops/raw_optim_ops.h"

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

void SGD::step() { step_impl(Tensor()); }

void SGD::step_unless(const Tensor& found_inf) {
  if (!found_inf.defined()) throw std::invalid_argument("SGD::step_unless: found_inf is undefined");
  step_impl(found_inf);
}

void SGD::step_impl(const Tensor& found_inf) {
  trace::Scope span("optimizer.step", "compute");
  NoGradGuard no_grad;
  const bool capturing = cuda::CUDAGraph::capturing() != nullptr;
  // Read on the host at most once per step, and only when a momentum buffer starts (below).
  std::optional<bool> skipped_on_host;
  for (size_t gi = 0; gi < param_groups().size(); ++gi) {
    ParamGroup& group = param_groups()[gi];
    const auto& o = group.options.as<SGDOptions>();
    kernels::SgdParams s{o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(), false, o.maximize()};
    if (capturing) {
      const Device device = captured_device(gi, "SGD::step");
      if (device.is_cuda()) s.lr_ptr = captured_lr(gi, device);
    }
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
        if (first && capturing) {
          // The first step copies the gradient into the buffer; captured, every replay would.
          throw std::runtime_error("SGD::step: a momentum buffer would be created inside a CUDA graph capture; "
                                   "run at least one eager step first (make_graphed_step's warm-up does)");
        }
        if (first && found_inf.defined()) {
          // The first step sets the buffer to the gradient; skipped on the device it would leave
          // the buffer unset, so this one step reads the flag on the host instead.
          if (!skipped_on_host) skipped_on_host = found_inf.item<float>() != 0.0f;
          if (*skipped_on_host) continue;
        }
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
      raw::sgd_step_multi_(params[first], grads[first], bufs[first], s, found_inf);
    }
  }
}

}  // namespace colony::optim
