// Mixed-precision support kernels (GradScaler) on the CPU.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// grads[i] (numel[i] contiguous elements of dtypes[i]) *= inv_scale; *found_inf = 1 when any
// element of any of them is inf or NaN (left as it is otherwise, so one flag gathers many calls).
void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes, float inv_scale,
                       float* found_inf);

}  // namespace colony::kernels::cpu
