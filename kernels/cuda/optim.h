// CUDA twins of kernels/cpu/optim.h (same functors).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/optim_functors.h"

namespace colony::kernels::cuda {

void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s, void* stream);
void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax, const AdamParams& a,
               void* stream);

}  // namespace colony::kernels::cuda
