// CUDA twins of kernels/cpu/optim.h (same functors), and their multi-tensor forms: one launch
// updates up to 24 tensors (kernels/common/multi_tensor.h), so an optimizer step over a model's
// parameters costs a launch or two instead of one per parameter.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/optim_functors.h"

namespace colony::kernels::cuda {

void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s, void* stream);
void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax, const AdamParams& a,
               void* stream);

// Parallel lists, one entry per tensor, all of `dtype` on the current device: bufs entries are
// null (or the list empty) without momentum, vmax likewise without amsgrad. Every tensor gets the
// same SgdParams / AdamParams (group tensors by first_step / step count before calling), unless
// `steps` lists each tensor's step count (float64 on the device): then the bias corrections come
// from it (adam_params_for) and it advances after the update, unless a.found_inf skips the step.
void sgd_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                    const std::vector<void*>& bufs, const std::vector<int64_t>& numels, const SgdParams& s,
                    void* stream);
void adam_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                     const std::vector<void*>& m, const std::vector<void*>& v, const std::vector<void*>& vmax,
                     const std::vector<void*>& steps, const std::vector<int64_t>& numels, const AdamParams& a,
                     void* stream);

}  // namespace colony::kernels::cuda
