// Copy with dtype conversion between any two of the eight dtypes, and fill, on one device: the
// entry points, declared once for both devices (kernel.h), defined in kernels/cpu/copy.cc and
// kernels/cuda/copy.cu. (Byte transfers between the host and a device are the runtime's:
// Backend::memcpy, runtime/device_backend.h.)
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/layout.h"

namespace colony::kernels {

// dst[i] = convert(src[i]) (kernels/common/convert.h). src's layout has dst's sizes (broadcast dims
// stride 0); dst must not overlap itself or src unless it is exactly src.
COLONY_KERNEL(Copy, DType src_dtype, const void* src, const StridedLayout& src_layout, DType dst_dtype, void* dst,
              const StridedLayout& dst_layout);

// Every element of out = value converted like a copy from float64.
COLONY_KERNEL(Fill, DType dtype, void* out, const StridedLayout& out_layout, double value);

}  // namespace colony::kernels
