// Tensor views as the kernels see them (kernels::StridedLayout), and the checks an op makes before
// writing into an existing tensor.
#pragma once

#include "kernels/common/layout.h"
#include "tensor/tensor.h"

namespace colony {

// t's sizes and strides. Throws naming `op` when t has more than kernels::kMaxDims dimensions.
kernels::StridedLayout kernel_layout(const Tensor& t, const char* op);
// t broadcast to `shape` (t's shape must broadcast to it): stride 0 on added and expanded dims.
kernels::StridedLayout broadcast_layout(const Tensor& t, const Shape& shape, const char* op);

// Refuses a destination in which several elements share one memory location (an expanded view), as
// PyTorch does for in-place writes and copy_.
void check_no_internal_overlap(const Tensor& t, const char* op);
// True when a and b view the same storage but not as the identical view, so an elementwise write
// into one may change elements of the other before they are read.
bool partially_overlaps(const Tensor& a, const Tensor& b);

}  // namespace colony
