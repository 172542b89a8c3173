// CPU copy with dtype conversion between any two of the eight dtypes, and fill.
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/layout.h"

namespace colony::kernels::cpu {

// dst[i] = convert(src[i]) (kernels/common/convert.h). src's layout has dst's sizes (broadcast dims
// stride 0); dst must not overlap itself or src unless it is exactly src.
void copy(DType src_dtype, const void* src, const StridedLayout& src_layout, DType dst_dtype, void* dst,
          const StridedLayout& dst_layout);

// Every element of out = value converted like a copy from float64.
void fill(DType dtype, void* out, const StridedLayout& out_layout, double value);

}  // namespace colony::kernels::cpu
