// The raw ops behind GradScaler: checks, then one kernel call (over all the gradients, or for the
// one scale).
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/amp.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "ops/raw_optim_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
void amp_unscale_and_check_(const std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& scale) {
  const char* op = "amp_unscale_and_check_";
  check_one_element(found_inf, kFloat32, op, "found_inf");
  check_one_element(scale, kFloat32, op, "scale", &found_inf);
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
  run_kernel<kernels::UnscaleAndCheck>(found_inf.device(), static_cast<int64_t>(ptrs.size()), ptrs.data(), numel.data(),
                                       dtypes.data(), scale.data_ptr<float>(), found_inf.data_ptr<float>());
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

void amp_update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf, double growth_factor,
                       double backoff_factor, int64_t growth_interval) {
  const char* op = "amp_update_scale_";
  check_one_element(scale, kFloat32, op, "scale");
  check_one_element(growth_tracker, kInt32, op, "growth_tracker", &scale);
  check_one_element(found_inf, kFloat32, op, "found_inf", &scale);
  run_kernel<kernels::UpdateScale>(scale.device(), scale.data_ptr<float>(), growth_tracker.data_ptr<int32_t>(),
                                   found_inf.data_ptr<float>(), growth_factor, backoff_factor, growth_interval);
  scale.storage()->bump_version();
  growth_tracker.storage()->bump_version();
}

}  // namespace colony::raw
