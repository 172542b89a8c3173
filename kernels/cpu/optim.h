// Fused optimizer steps over contiguous float32/float64 buffers: one pass per parameter instead of
// a chain of elementwise ops.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/optim_functors.h"

namespace colony::kernels::cpu {

// buf may be nullptr when momentum == 0.
void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s);
// vmax may be nullptr without amsgrad. `step`, when given, is the tensor's step count (float64):
// the bias corrections come from it (adam_params_for) and it advances, unless a.found_inf skips.
void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax, const AdamParams& a,
               double* step = nullptr);

}  // namespace colony::kernels::cpu
