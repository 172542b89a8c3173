// The raw op behind GradScaler::unscale_: checks, then one kernel call over all the gradients.
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor/device_backend.h"
#include "tensor/raw_optim_ops.h"
#include "tensor/raw_ops.h"

namespace colony::raw {

void amp_unscale_and_check_(const std::vector<Tensor>& grads, Tensor& found_inf, double inv_scale) {
  const char* op = "amp_unscale_and_check_";
  if (!found_inf.defined() || found_inf.numel() != 1 || found_inf.dtype() != kFloat32 || !found_inf.is_contiguous()) {
    throw std::invalid_argument(std::string(op) + ": found_inf must be a 1-element float32 tensor, got " +
                                (found_inf.defined() ? std::string(dtype_name(found_inf.dtype())) + " " +
                                                           shape_str(found_inf.sizes())
                                                     : std::string("undefined")));
  }
  std::vector<Tensor> work;  // the tensors the kernel writes (a contiguous copy of a strided gradient)
  std::vector<void*> ptrs;
  std::vector<int64_t> numel;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    if (!g.defined()) throw std::invalid_argument(std::string(op) + ": gradient " + std::to_string(i) + " is undefined");
    if (!is_floating(g.dtype())) {
      throw std::invalid_argument(std::string(op) + ": gradient " + std::to_string(i) + " is " + dtype_name(g.dtype()) +
                                  ", expected a floating dtype");
    }
    if (g.device() != found_inf.device()) {
      throw std::invalid_argument(std::string(op) + ": gradient " + std::to_string(i) + " is on " + g.device().str() +
                                  ", found_inf on " + found_inf.device().str() + " (one call per device)");
    }
    work.push_back(g.is_contiguous() ? g : contiguous(g));
    ptrs.push_back(work.back().data_ptr_raw());
    numel.push_back(g.numel());
    dtypes.push_back(g.dtype());
  }
  backend_for(found_inf.device())
      .unscale_and_check(static_cast<int64_t>(ptrs.size()), ptrs.data(), numel.data(), dtypes.data(),
                         static_cast<float>(inv_scale), found_inf.data_ptr<float>());
  for (size_t i = 0; i < grads.size(); ++i) {
    Tensor g = grads[i];
    if (!work[i].is_same(g)) {
      g.copy_(work[i]);
    } else {
      g.storage()->bump_version();
    }
  }
  found_inf.storage()->bump_version();
}

}  // namespace colony::raw
