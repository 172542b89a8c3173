// Fused optimizer steps over contiguous float32/float64 buffers, one pass per parameter instead of
// a chain of elementwise ops: the entry points, declared once for both devices (kernel.h), defined
// in kernels/cpu/optim.cc and kernels/cuda/optim.cu.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/optim_functors.h"

namespace colony::kernels {

// n elements; buf may be nullptr when momentum == 0.
COLONY_KERNEL(SgdStep, DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s);
// n elements; vmax may be nullptr without amsgrad.
COLONY_KERNEL(AdamStep, DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax,
              const AdamParams& a);

// The same steps over many tensors of one dtype (sizes[i] elements each; bufs / vmax empty when
// unused; steps, when not empty, each tensor's float64 step count, read for the bias corrections
// (adam_params_for) and advanced unless a.found_inf skips): CUDA updates up to 24 tensors per
// launch (kernels/common/multi_tensor.h), so an optimizer step over a model's parameters costs a
// launch or two instead of one per parameter; the CPU steps SGD's one by one and Adam's in one
// pass over all their elements split across the threads (kernels/cpu/optim.cc). Every tensor gets the
// same SgdParams / AdamParams (group tensors by first_step / step count before calling), unless
// `steps` lists each tensor's step count (on the tensors' device).
COLONY_KERNEL(SgdStepMulti, DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
              const std::vector<void*>& bufs, const std::vector<int64_t>& sizes, const SgdParams& s);
COLONY_KERNEL(AdamStepMulti, DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
              const std::vector<void*>& m, const std::vector<void*>& v, const std::vector<void*>& vmax,
              const std::vector<void*>& steps, const std::vector<int64_t>& sizes, const AdamParams& a);

// The tensors of one step of the rules of optim_functors.h (RmspropRule, ...): parallel lists of
// one dtype, states[k] the k-th state tensor of each parameter (empty when the step does not use
// it: RMSprop's grad_avg when not centered, ...).
struct OptimTensorLists {
  std::vector<void*> params;
  std::vector<const void*> grads;
  std::vector<void*> states[kMaxOptimStates];
  std::vector<int64_t> sizes;
};

// One step of a rule over every listed tensor with the same scalars (group the tensors by step
// count before calling): CUDA updates up to 24 tensors per launch, the CPU runs one pass over all
// their elements split across the threads, as AdamStepMulti.
COLONY_KERNEL(RmspropStepMulti, DType dtype, const OptimTensorLists& lists, const RmspropParams& k);
COLONY_KERNEL(AdagradStepMulti, DType dtype, const OptimTensorLists& lists, const AdagradParams& k);
COLONY_KERNEL(AdamaxStepMulti, DType dtype, const OptimTensorLists& lists, const AdamaxParams& k);
COLONY_KERNEL(NadamStepMulti, DType dtype, const OptimTensorLists& lists, const NadamParams& k);
COLONY_KERNEL(RadamStepMulti, DType dtype, const OptimTensorLists& lists, const RadamParams& k);
COLONY_KERNEL(AdadeltaStepMulti, DType dtype, const OptimTensorLists& lists, const AdadeltaParams& k);
COLONY_KERNEL(RpropStepMulti, DType dtype, const OptimTensorLists& lists, const RpropParams& k);
COLONY_KERNEL(AsgdStepMulti, DType dtype, const OptimTensorLists& lists, const AsgdParams& k);

}  // namespace colony::kernels
