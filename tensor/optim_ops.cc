#include "tensor/raw_optim_ops.h"

#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/cpu/optim.h"
#include "tensor/cuda.h"
#include "tensor/stream.h"
#ifdef COLONY_WITH_CUDA
#include "kernels/cuda/optim.h"
#endif

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

#ifdef COLONY_WITH_CUDA
// Indices of the CUDA parameters, by (device, dtype): each bucket is one multi-tensor call.
std::map<std::pair<int, int>, std::vector<size_t>> cuda_buckets(const std::vector<Tensor>& params) {
  std::map<std::pair<int, int>, std::vector<size_t>> buckets;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].is_cuda()) buckets[{params[i].device().index, static_cast<int>(params[i].dtype())}].push_back(i);
  }
  return buckets;
}
#endif

}  // namespace

void sgd_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& bufs,
                     const kernels::SgdParams& s) {
  const bool momentum = s.momentum != 0;
  check_lists("sgd_step", params.size(), {{"gradients", grads.size()}});
  if (momentum) check_lists("sgd_step", params.size(), {{"momentum buffers", bufs.size()}});
  Tensor none;
  for (size_t i = 0; i < params.size(); ++i) {
    check_like("sgd_step", "parameter", params[i], params[i]);
    check_like("sgd_step", "gradient", params[i], grads[i]);
    if (momentum) check_like("sgd_step", "momentum buffer", params[i], bufs[i]);
    if (params[i].is_cpu()) sgd_step_(params[i], grads[i], momentum ? bufs[i] : none, s);
  }
#ifdef COLONY_WITH_CUDA
  for (const auto& [key, idx] : cuda_buckets(params)) {
    std::vector<void*> p, b;
    std::vector<const void*> g;
    std::vector<int64_t> n;
    for (size_t i : idx) {
      p.push_back(params[i].data_ptr_raw());
      g.push_back(grads[i].data_ptr_raw());
      if (momentum) b.push_back(bufs[i].data_ptr_raw());
      n.push_back(params[i].numel());
    }
    const Tensor& first = params[idx.front()];
    cuda::DeviceGuard guard(first.device().index);
    kernels::cuda::sgd_step_multi(first.dtype(), p, g, b, n, s, current_stream(first.device()).handle());
    for (size_t i : idx) params[i].storage()->bump_version();
  }
#endif
}

void adam_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& m,
                      std::vector<Tensor>& v, std::vector<Tensor>& vmax, const kernels::AdamParams& a) {
  check_lists("adam_step", params.size(), {{"gradients", grads.size()}, {"exp_avg", m.size()}, {"exp_avg_sq", v.size()}});
  if (a.amsgrad) check_lists("adam_step", params.size(), {{"max_exp_avg_sq", vmax.size()}});
  Tensor none;
  for (size_t i = 0; i < params.size(); ++i) {
    check_like("adam_step", "parameter", params[i], params[i]);
    check_like("adam_step", "gradient", params[i], grads[i]);
    check_like("adam_step", "exp_avg", params[i], m[i]);
    check_like("adam_step", "exp_avg_sq", params[i], v[i]);
    if (a.amsgrad) check_like("adam_step", "max_exp_avg_sq", params[i], vmax[i]);
    if (params[i].is_cpu()) adam_step_(params[i], grads[i], m[i], v[i], a.amsgrad ? vmax[i] : none, a);
  }
#ifdef COLONY_WITH_CUDA
  for (const auto& [key, idx] : cuda_buckets(params)) {
    std::vector<void*> p, mp, vp, xp;
    std::vector<const void*> g;
    std::vector<int64_t> n;
    for (size_t i : idx) {
      p.push_back(params[i].data_ptr_raw());
      g.push_back(grads[i].data_ptr_raw());
      mp.push_back(m[i].data_ptr_raw());
      vp.push_back(v[i].data_ptr_raw());
      if (a.amsgrad) xp.push_back(vmax[i].data_ptr_raw());
      n.push_back(params[i].numel());
    }
    const Tensor& first = params[idx.front()];
    cuda::DeviceGuard guard(first.device().index);
    kernels::cuda::adam_step_multi(first.dtype(), p, g, mp, vp, xp, n, a, current_stream(first.device()).handle());
    for (size_t i : idx) params[i].storage()->bump_version();
  }
#endif
}

void sgd_step_(Tensor& param, const Tensor& grad, Tensor& buf, const kernels::SgdParams& s) {
  check_like("sgd_step", "parameter", param, param);
  check_like("sgd_step", "gradient", param, grad);
  if (s.momentum != 0) check_like("sgd_step", "momentum buffer", param, buf);
  void* b = s.momentum != 0 ? buf.data_ptr_raw() : nullptr;
  if (param.is_cpu()) {
    kernels::cpu::sgd_step(param.dtype(), param.numel(), param.data_ptr_raw(), grad.data_ptr_raw(), b, s);
  } else {
#ifdef COLONY_WITH_CUDA
    cuda::DeviceGuard guard(param.device().index);
    kernels::cuda::sgd_step(param.dtype(), param.numel(), param.data_ptr_raw(), grad.data_ptr_raw(), b, s,
                            current_stream(param.device()).handle());
#endif
  }
  param.storage()->bump_version();
}

void adam_step_(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, Tensor& vmax, const kernels::AdamParams& a) {
  check_like("adam_step", "parameter", param, param);
  check_like("adam_step", "gradient", param, grad);
  check_like("adam_step", "exp_avg", param, m);
  check_like("adam_step", "exp_avg_sq", param, v);
  if (a.amsgrad) check_like("adam_step", "max_exp_avg_sq", param, vmax);
  void* vx = a.amsgrad ? vmax.data_ptr_raw() : nullptr;
  if (param.is_cpu()) {
    kernels::cpu::adam_step(param.dtype(), param.numel(), param.data_ptr_raw(), grad.data_ptr_raw(), m.data_ptr_raw(),
                            v.data_ptr_raw(), vx, a);
  } else {
#ifdef COLONY_WITH_CUDA
    cuda::DeviceGuard guard(param.device().index);
    kernels::cuda::adam_step(param.dtype(), param.numel(), param.data_ptr_raw(), grad.data_ptr_raw(), m.data_ptr_raw(),
                             v.data_ptr_raw(), vx, a, current_stream(param.device()).handle());
#endif
  }
  param.storage()->bump_version();
}

}  // namespace colony::raw
