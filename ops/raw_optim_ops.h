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
// tensors; CPU ones by the per-tensor loop above (SGD) or one pass over all of them (Adam).
//
// For a step that must not depend on the host (captured in a CUDA graph, or whose skip GradScaler
// decides on the device): found_inf, when defined (a 1-element float32 tensor on the parameters'
// device), skips the whole step where the kernels run when it is nonzero; Adam's `steps`, when not
// empty, holds each parameter's step count (a 1-element float64 tensor on its device), from which
// the kernels take the bias corrections and which they advance (not when skipped).
void sgd_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     std::vector<Tensor>& momentum_buffers, const kernels::SgdParams& s,
                     const Tensor& found_inf = Tensor());
void adam_step_multi_(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& exp_avgs,
                      std::vector<Tensor>& exp_avg_sqs, std::vector<Tensor>& max_exp_avg_sqs,
                      const kernels::AdamParams& a, const Tensor& found_inf = Tensor(),
                      const std::vector<Tensor>& steps = {});

// RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD (the rules of kernels/common/optim_functors.h,
// which names each rule's states): every parameter with its gradient and states[k], the rule's
// k-th state tensor of each parameter (an empty list when the step does not use it), all of the
// parameter's shape, dtype and device, contiguous. One multi-tensor update per (device, dtype),
// every parameter with the same scalars.
struct RuleStepTensors {
  std::vector<Tensor> params, grads;
  std::vector<Tensor> states[kernels::kMaxOptimStates];
};
void rmsprop_step_multi_(RuleStepTensors& tensors, const kernels::RmspropParams& k);
void adagrad_step_multi_(RuleStepTensors& tensors, const kernels::AdagradParams& k);
void adamax_step_multi_(RuleStepTensors& tensors, const kernels::AdamaxParams& k);
void nadam_step_multi_(RuleStepTensors& tensors, const kernels::NadamParams& k);
void radam_step_multi_(RuleStepTensors& tensors, const kernels::RadamParams& k);
void adadelta_step_multi_(RuleStepTensors& tensors, const kernels::AdadeltaParams& k);
void rprop_step_multi_(RuleStepTensors& tensors, const kernels::RpropParams& k);
void asgd_step_multi_(RuleStepTensors& tensors, const kernels::AsgdParams& k);

// Loss scaling (PyTorch's _amp_foreach_non_finite_check_and_unscale_): multiplies every gradient by
// the reciprocal of `scale` (a 1-element float32 tensor) in place, in one pass, and sets found_inf
// (a 1-element float32 tensor) to 1 when any element of any gradient is inf or NaN. Both live on
// the gradients' device and are never read back here, so nothing waits for the device.
// Gradients: floating, all on found_inf's device; a non-contiguous one is unscaled through a
// contiguous copy.
void amp_unscale_and_check_(const std::vector<Tensor>& grads, Tensor& found_inf, const Tensor& scale);
// GradScaler's update (PyTorch's _amp_update_scale_), on the scale's device: after an overflow
// (found_inf nonzero) scale *= backoff_factor and the count restarts; after growth_interval clean
// steps in a row scale *= growth_factor (unless that overflows float32). scale: 1-element float32,
// growth_tracker: 1-element int32, found_inf: 1-element float32, all on one device.
void amp_update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf, double growth_factor,
                       double backoff_factor, int64_t growth_interval);

}  // namespace colony::raw
