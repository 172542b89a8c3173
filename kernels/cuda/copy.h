// CUDA copy with dtype conversion and fill, on one device: the contract of kernels/cpu/copy.h,
// queued on `stream` (a cudaStream_t). Cross-device transfers are memcpy (kernels/cuda/runtime.h).
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/layout.h"

namespace colony::kernels::cuda {

void copy(DType src_dtype, const void* src, const StridedLayout& src_layout, DType dst_dtype, void* dst,
          const StridedLayout& dst_layout, void* stream);

void fill(DType dtype, void* out, const StridedLayout& out_layout, double value, void* stream);

}  // namespace colony::kernels::cuda
