// CUDA twin of kernels/cpu/amp.h (same functor).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

// Host arrays describe device buffers; found_inf is a device float. Multi-tensor: one launch per
// group of up to 48 tensors of one dtype, nothing read back.
void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                       const float* scale, float* found_inf, void* stream);
// One thread; scale, growth_tracker and found_inf are device memory.
void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                  double backoff_factor, int64_t growth_interval, void* stream);

}  // namespace colony::kernels::cuda
