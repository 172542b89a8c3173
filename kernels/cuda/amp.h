// CUDA twin of kernels/cpu/amp.h (same functor).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

// Host arrays describe device buffers; scale and found_inf are device floats. Multi-tensor
// (kernels/cuda/multi_tensor.cuh): one launch per dtype for up to 24 tensors and 320 chunks of
// 64K elements, nothing read back.
void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                       const float* scale, float* found_inf, void* stream);
// One thread; scale, growth_tracker and found_inf are device memory.
void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                  double backoff_factor, int64_t growth_interval, void* stream);

}  // namespace colony::kernels::cuda
