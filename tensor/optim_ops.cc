#include "tensor/raw_optim_ops.h"

#include <stdexcept>

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

}  // namespace

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
