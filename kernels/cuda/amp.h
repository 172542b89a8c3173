// CUDA twin of kernels/cpu/amp.h (same functor).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

// Host arrays describe device buffers; found_inf is a device float. Multi-tensor: one launch per
// group of up to 48 tensors of one dtype, nothing read back.
void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes, float inv_scale,
                       float* found_inf, void* stream);

}  // namespace colony::kernels::cuda
