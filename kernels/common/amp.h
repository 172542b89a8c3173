// Mixed-precision support kernels (GradScaler): the entry points, declared once for both devices
// (kernel.h), defined in kernels/cpu/amp.cc and kernels/cuda/amp.cu. scale, growth_tracker and
// found_inf are float32 / int32 / float32 on the kernel's device (the host arrays of
// unscale_and_check describe buffers there). CUDA: unscale_and_check is multi-tensor
// (kernels/cuda/multi_tensor.cuh), one launch per dtype for up to 24 tensors and 320 chunks of 64K
// elements, nothing read back; update_scale is one thread.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// grads[i] (numel[i] contiguous elements of dtypes[i]) *= inverse_scale(scale); *found_inf = 1
// when any element of any of them is inf or NaN (left as it is otherwise, so one flag gathers
// many calls).
COLONY_KERNEL(UnscaleAndCheck, int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
              const float* scale, float* found_inf);
// The scale and growth count updated from the flag: update_scale (kernels/common/amp_functors.h).
COLONY_KERNEL(UpdateScale, float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
              double backoff_factor, int64_t growth_interval);

}  // namespace colony::kernels
