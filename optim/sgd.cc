#include "optim/sgd.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "log/trace.h"
#include "tensor/cuda_graph.h"
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

// One float64 per (group, device) whose steps a graph captured, and the value last written there.
struct SGD::DeviceLr {
  SGD* owner;
  std::map<std::pair<size_t, int>, Tensor> tensors;
  std::map<std::pair<size_t, int>, double> written;
};

// The device copy of group `group`'s lr for a step being captured on `device`. It is made inside
// the capture (so from the graph's private pool) and filled by the graph's replay prologue, not by
// a captured kernel: a captured fill would write the capture-time value at every replay.
const double* SGD::captured_lr(size_t group, Device device) {
  if (!device_lr_) device_lr_ = std::make_shared<DeviceLr>(DeviceLr{this, {}, {}});
  const auto key = std::make_pair(group, device.index);
  auto it = device_lr_->tensors.find(key);
  if (it == device_lr_->tensors.end()) {
    it = device_lr_->tensors.emplace(key, raw::empty({1}, TensorOptions(kFloat64).device(device))).first;
    device_lr_->written[key] = std::nan("");
  }
  std::weak_ptr<DeviceLr> weak = device_lr_;
  cuda::CUDAGraph::capturing()->add_replay_prologue([weak, key] {
    auto lrs = weak.lock();
    if (!lrs) return;
    const double lr = lrs->owner->lr(key.first);
    double& written = lrs->written[key];
    if (lr == written) return;  // unchanged: no launch
    raw::fill_(lrs->tensors[key], lr);
    written = lr;
  });
  return static_cast<const double*>(it->second.data_ptr_raw());
}

void SGD::step() {
  trace::Scope span("optimizer.step", "compute");
  NoGradGuard no_grad;
  const bool capturing = cuda::CUDAGraph::capturing() != nullptr;
  for (size_t gi = 0; gi < param_groups().size(); ++gi) {
    ParamGroup& group = param_groups()[gi];
    const auto& o = group.options.as<SGDOptions>();
    kernels::SgdParams s{o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(), false, o.maximize()};
    if (capturing) {
      Device device = kCPU;
      for (const Tensor& p : group.params) {
        if (!p.grad().defined()) continue;
        if (!device.is_cpu() && p.device() != device) {
          throw std::runtime_error("SGD::step: a captured step needs each group's parameters on one device, "
                                   "group " + std::to_string(gi) + " has " + device.str() + " and " +
                                   p.device().str());
        }
        device = p.device();
      }
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
