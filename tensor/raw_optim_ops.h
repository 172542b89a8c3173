// Fused optimizer updates as raw in-place ops (not recorded by autograd): check that the state
// tensors match the parameter, then run kernels::cpu or kernels::cuda.
#pragma once

#include "kernels/common/optim_functors.h"
#include "tensor/tensor.h"

namespace colony::raw {

// param, grad and momentum_buffer (when momentum != 0) must have the same shape, dtype and device
// and be contiguous.
void sgd_step_(Tensor& param, const Tensor& grad, Tensor& momentum_buffer, const kernels::SgdParams& s);
void adam_step_(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq, Tensor& max_exp_avg_sq,
                const kernels::AdamParams& a);

}  // namespace colony::raw
