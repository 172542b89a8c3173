// Fused optimizer updates as raw in-place ops (not recorded by autograd): check that the state
// tensors match the parameter, then run kernels::cpu or kernels::cuda.
#pragma once

#include <vector>

#include "kernels/common/optim_functors.h"
#include "tensor/tensor.h"

namespace colony::raw {

// param, grad and momentum_buffer (when momentum != 0) must have the same shape, dtype and device
// and be contiguous.
void sgd_step_(Tensor& param, const Tensor& grad, Tensor& momentum_buffer, const kernels::SgdParams& s);
void adam_step_(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq, Tensor& max_exp_avg_sq,
                const kernels::AdamParams& a);

// The same updates over lists of parameters (parallel lists; momentum_buffers / max_exp_avg_sqs
// may be empty when momentum is 0 / amsgrad is off), all with the same hyper-parameters. CUDA
// parameters are updated by multi-tensor kernels, one launch per (device, dtype) and up to 24
// tensors; CPU ones by the per-tensor loop above.
void sgd_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     std::vector<Tensor>& momentum_buffers, const kernels::SgdParams& s);
void adam_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& exp_avgs,
                      std::vector<Tensor>& exp_avg_sqs, std::vector<Tensor>& max_exp_avg_sqs,
                      const kernels::AdamParams& a);

// Loss scaling (PyTorch's _amp_foreach_non_finite_check_and_unscale_): multiplies every gradient by
// inv_scale in place, in one pass, and sets found_inf (a 1-element float32 tensor on the gradients'
// device) to 1 when any element of any gradient is inf or NaN; found_inf is never read back here, so
// nothing waits for the device. Gradients: floating, all on found_inf's device; a non-contiguous one
// is unscaled through a contiguous copy.
void amp_unscale_and_check_(const std::vector<Tensor>& grads, Tensor& found_inf, double inv_scale);

}  // namespace colony::raw
