// Mixed-precision support kernels (GradScaler) on the CPU.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// grads[i] (numel[i] contiguous elements of dtypes[i]) *= inverse_scale(scale); *found_inf = 1
// when any element of any of them is inf or NaN (left as it is otherwise, so one flag gathers
// many calls).
void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                       const float* scale, float* found_inf);
// update_scale (kernels/common/amp_functors.h).
void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                  double backoff_factor, int64_t growth_interval);

}  // namespace colony::kernels::cpu
