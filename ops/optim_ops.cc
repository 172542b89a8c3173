#include "ops/raw_optim_ops.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/common/optim.h"
#include "ops/op_checks.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

void check_like(const char* op, const char* what, const Tensor& param, const Tensor& t) {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": " + what + " is undefined");
  if (t.sizes() != param.sizes() || t.dtype() != param.dtype() || t.device() != param.device()) {
    throw std::invalid_argument(std::string(op) + ": " + what + " is " + dtype_name(t.dtype()) + " " +
                                shape_str(t.sizes()) + " on " + t.device().str() + ", parameter is " +
                                dtype_name(param.dtype()) + " " + shape_str(param.sizes()) + " on " + param.device().str());
  }
  if (!t.is_contiguous()) throw std::invalid_argument(std::string(op) + ": " + what + " must be contiguous");
}

void check_lists(const char* op, size_t n, std::initializer_list<std::pair<const char*, size_t>> lists) {
  for (const auto& [name, size] : lists) {
    if (size != n) {
      throw std::invalid_argument(std::string(op) + ": " + std::to_string(n) + " parameters but " +
                                  std::to_string(size) + " " + name);
    }
  }
}

// The parameters by (device, dtype), each group one multi-tensor call. A model has one or two
// groups, so a linear search is all it needs.
struct Group {
  Device device;
  DType dtype;
  std::vector<size_t> idx;
};

// found_inf, when defined, is one float32 on the device of every parameter; its address, or null.
const float* found_inf_ptr(const char* op, const Tensor& found_inf, const std::vector<Tensor>& params) {
  if (!found_inf.defined()) return nullptr;
  check_one_element(found_inf, kFloat32, op, "found_inf");
  for (const Tensor& p : params) {
    if (p.device() != found_inf.device()) {
      throw std::invalid_argument(std::string(op) + ": found_inf is on " + found_inf.device().str() +
                                  ", a parameter on " + p.device().str() + " (one call per device)");
    }
  }
  return found_inf.data_ptr<float>();
}

std::vector<Group> groups(const std::vector<Tensor>& params) {
  std::vector<Group> out;
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Group& g) {
      return g.device == params[i].device() && g.dtype == params[i].dtype();
    });
    if (it == out.end()) it = out.insert(out.end(), Group{params[i].device(), params[i].dtype(), {}});
    it->idx.push_back(i);
  }
  return out;
}

}  // namespace

void sgd_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& bufs,
                     const kernels::SgdParams& options, const Tensor& found_inf) {
  kernels::SgdParams s = options;
  s.found_inf = found_inf_ptr("sgd_step", found_inf, params);
  const bool momentum = s.momentum != 0;
  check_lists("sgd_step", params.size(), {{"gradients", grads.size()}});
  if (momentum) check_lists("sgd_step", params.size(), {{"momentum buffers", bufs.size()}});
  for (size_t i = 0; i < params.size(); ++i) {
    check_like("sgd_step", "parameter", params[i], params[i]);
    check_like("sgd_step", "gradient", params[i], grads[i]);
    if (momentum) check_like("sgd_step", "momentum buffer", params[i], bufs[i]);
  }
  for (const Group& group : groups(params)) {
    const std::vector<size_t>& idx = group.idx;
    std::vector<void*> p, b;
    std::vector<const void*> g;
    std::vector<int64_t> n;
    for (size_t i : idx) {
      p.push_back(params[i].data_ptr_raw());
      g.push_back(grads[i].data_ptr_raw());
      if (momentum) b.push_back(bufs[i].data_ptr_raw());
      n.push_back(params[i].numel());
    }
    run_kernel<kernels::SgdStepMulti>(group.device, group.dtype, p, g, b, n, s);
    for (size_t i : idx) params[i].storage()->bump_version();
  }
}

void adam_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& m,
                      std::vector<Tensor>& v, std::vector<Tensor>& vmax, const kernels::AdamParams& options,
                      const Tensor& found_inf, const std::vector<Tensor>& steps) {
  kernels::AdamParams a = options;
  a.found_inf = found_inf_ptr("adam_step", found_inf, params);
  check_lists("adam_step", params.size(), {{"gradients", grads.size()}, {"exp_avg", m.size()}, {"exp_avg_sq", v.size()}});
  if (a.amsgrad) check_lists("adam_step", params.size(), {{"max_exp_avg_sq", vmax.size()}});
  if (!steps.empty()) check_lists("adam_step", params.size(), {{"step counts", steps.size()}});
  for (size_t i = 0; i < params.size(); ++i) {
    if (!steps.empty()) {
      check_one_element(steps[i], kFloat64, "adam_step", "step count " + std::to_string(i), &params[i]);
    }
    check_like("adam_step", "parameter", params[i], params[i]);
    check_like("adam_step", "gradient", params[i], grads[i]);
    check_like("adam_step", "exp_avg", params[i], m[i]);
    check_like("adam_step", "exp_avg_sq", params[i], v[i]);
    if (a.amsgrad) check_like("adam_step", "max_exp_avg_sq", params[i], vmax[i]);
  }
  for (const Group& group : groups(params)) {
    const std::vector<size_t>& idx = group.idx;
    std::vector<void*> p, mp, vp, xp, sp;
    std::vector<const void*> g;
    std::vector<int64_t> n;
    for (size_t i : idx) {
      p.push_back(params[i].data_ptr_raw());
      g.push_back(grads[i].data_ptr_raw());
      mp.push_back(m[i].data_ptr_raw());
      vp.push_back(v[i].data_ptr_raw());
      if (a.amsgrad) xp.push_back(vmax[i].data_ptr_raw());
      if (!steps.empty()) sp.push_back(steps[i].data_ptr_raw());
      n.push_back(params[i].numel());
    }
    run_kernel<kernels::AdamStepMulti>(group.device, group.dtype, p, g, mp, vp, xp, sp, n, a);
    for (size_t i : idx) {
      params[i].storage()->bump_version();
      if (!steps.empty()) steps[i].storage()->bump_version();
    }
  }
}

namespace {

template <typename Kernel, typename Params>
void rule_step_multi_(const char* op, RuleStepTensors& t, const Params& k) {
  const size_t n = t.params.size();
  check_lists(op, n, {{"gradients", t.grads.size()}});
  for (const std::vector<Tensor>& states : t.states) {
    if (!states.empty()) check_lists(op, n, {{"states", states.size()}});
  }
  for (size_t i = 0; i < n; ++i) {
    check_like(op, "parameter", t.params[i], t.params[i]);
    check_like(op, "gradient", t.params[i], t.grads[i]);
    for (const std::vector<Tensor>& states : t.states) {
      if (!states.empty()) check_like(op, "state", t.params[i], states[i]);
    }
  }
  for (const Group& group : groups(t.params)) {
    kernels::OptimTensorLists l;
    for (size_t i : group.idx) {
      l.params.push_back(t.params[i].data_ptr_raw());
      l.grads.push_back(t.grads[i].data_ptr_raw());
      for (int s = 0; s < kernels::kMaxOptimStates; ++s) {
        if (!t.states[s].empty()) l.states[s].push_back(t.states[s][i].data_ptr_raw());
      }
      l.sizes.push_back(t.params[i].numel());
    }
    run_kernel<Kernel>(group.device, group.dtype, l, k);
    for (size_t i : group.idx) {
      t.params[i].storage()->bump_version();
      for (std::vector<Tensor>& states : t.states) {
        if (!states.empty()) states[i].storage()->bump_version();
      }
    }
  }
}

}  // namespace

void rmsprop_step_multi_(RuleStepTensors& t, const kernels::RmspropParams& k) {
  rule_step_multi_<kernels::RmspropStepMulti>("rmsprop_step", t, k);
}
void adagrad_step_multi_(RuleStepTensors& t, const kernels::AdagradParams& k) {
  rule_step_multi_<kernels::AdagradStepMulti>("adagrad_step", t, k);
}
void adamax_step_multi_(RuleStepTensors& t, const kernels::AdamaxParams& k) {
  rule_step_multi_<kernels::AdamaxStepMulti>("adamax_step", t, k);
}
void nadam_step_multi_(RuleStepTensors& t, const kernels::NadamParams& k) {
  rule_step_multi_<kernels::NadamStepMulti>("nadam_step", t, k);
}
void radam_step_multi_(RuleStepTensors& t, const kernels::RadamParams& k) {
  rule_step_multi_<kernels::RadamStepMulti>("radam_step", t, k);
}
void adadelta_step_multi_(RuleStepTensors& t, const kernels::AdadeltaParams& k) {
  rule_step_multi_<kernels::AdadeltaStepMulti>("adadelta_step", t, k);
}
void rprop_step_multi_(RuleStepTensors& t, const kernels::RpropParams& k) {
  rule_step_multi_<kernels::RpropStepMulti>("rprop_step", t, k);
}
void asgd_step_multi_(RuleStepTensors& t, const kernels::AsgdParams& k) {
  rule_step_multi_<kernels::AsgdStepMulti>("asgd_step", t, k);
}

void sgd_step_(Tensor& param, const Tensor& grad, Tensor& buf, const kernels::SgdParams& s) {
  check_like("sgd_step", "parameter", param, param);
  check_like("sgd_step", "gradient", param, grad);
  if (s.momentum != 0) check_like("sgd_step", "momentum buffer", param, buf);
  void* b = s.momentum != 0 ? buf.data_ptr_raw() : nullptr;
  run_kernel<kernels::SgdStep>(param.device(), param.dtype(), param.numel(), param.data_ptr_raw(), grad.data_ptr_raw(),
                               b, s);
  param.storage()->bump_version();
}

void adam_step_(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, Tensor& vmax, const kernels::AdamParams& a) {
  check_like("adam_step", "parameter", param, param);
  check_like("adam_step", "gradient", param, grad);
  check_like("adam_step", "exp_avg", param, m);
  check_like("adam_step", "exp_avg_sq", param, v);
  if (a.amsgrad) check_like("adam_step", "max_exp_avg_sq", param, vmax);
  void* vx = a.amsgrad ? vmax.data_ptr_raw() : nullptr;
  run_kernel<kernels::AdamStep>(param.device(), param.dtype(), param.numel(), param.data_ptr_raw(), grad.data_ptr_raw(),
                                m.data_ptr_raw(), v.data_ptr_raw(), vx, a);
  param.storage()->bump_version();
}

}  // namespace colony::raw
