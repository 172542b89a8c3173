// 2-D and 3-D max, average, adaptive average and adaptive max pooling, and fractional max pooling,
// over contiguous planes (Pool2dGeometry::planes, Pool3dGeometry::planes = batch * channels), with
// PyTorch's window rules (kernels/common/pool_window.h, where the 2-D geometry is a depth-1 volume):
// the entry points, declared once for both devices (kernel.h), defined in kernels/cpu/pool.cc
// (float32 and float64, planes split over the thread pool; 2-D max pooling also bfloat16, compared
// as float32 and its gradient summed in float32, the same values as widening it) and
// kernels/cuda/pool.cu. Every max pooling's backward (3-D, adaptive, fractional) is
// MaxPool2dBackward's scatter to the indices, over planes of in_volume elements.
//
// CUDA: float32, float64, float16 and bfloat16 (compared and summed in compute_t). Two differences
// from the CPU, both for speed without a host round trip:
//  - max_pool2d_backward adds with atomics (windows may overlap), so with overlapping windows the
//    order of the additions, and the float rounding, can vary between runs; an index outside its
//    plane is skipped rather than reported.
//  - the average-pooling backward passes gather (each input sums the outputs whose windows hold
//    it), so they are deterministic.
#pragma once

#include <cstdint>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/pool_window.h"

namespace colony::kernels {

// y = the window's maximum; indices = its flat position ih * in_w + iw in the input plane. Padding
// never wins; the first maximum in row-major window order is kept, and a NaN beats every number
// (a later NaN replaces an earlier one), as in PyTorch's CPU kernel.
COLONY_KERNEL(MaxPool2dForward, DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices);

// grad_x = 0, then grad_x[plane][indices[o]] += grad_y[o]. The CPU throws std::out_of_range naming
// the bad index when one lies outside its plane.
COLONY_KERNEL(MaxPool2dBackward, DType dtype, const Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
              void* grad_x);

// y = sum of the window's input elements / divisor, where the divisor is divisor_override when
// != 0, else the window's size clipped to the padded input (count_include_pad) or to the input
// (kernels/common/pool_window.h). Dilation is not used (avg_pool2d has none).
COLONY_KERNEL(AvgPool2dForward, DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
              const void* x, void* y);
COLONY_KERNEL(AvgPool2dBackward, DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
              const void* grad_y, void* grad_x);

// Output (oy, ox) averages rows [floor(oy * H / Ho), ceil((oy + 1) * H / Ho)) and likewise columns;
// only planes, in_h, in_w, out_h and out_w of g are used.
COLONY_KERNEL(AdaptiveAvgPool2dForward, DType dtype, const Pool2dGeometry& g, const void* x, void* y);
COLONY_KERNEL(AdaptiveAvgPool2dBackward, DType dtype, const Pool2dGeometry& g, const void* grad_y, void* grad_x);

// Adaptive max pooling: output (oy, ox) is the maximum of adaptive average pooling's window
// (pool_window.h's adaptive_start / adaptive_end), indices its flat position ih * in_w + iw in the
// input plane, with max pooling's tie rule (the first maximum in row-major order; a NaN beats every
// number). Only planes, in_h, in_w, out_h and out_w of g are used. The backward is
// MaxPool2dBackward's scatter of the gradient to the indices.
COLONY_KERNEL(AdaptiveMaxPool2dForward, DType dtype, const Pool2dGeometry& g, const void* x, void* y,
              int64_t* indices);

// The 3-D forms of the above, with the same rules over (depth, row, column) windows; indices are
// flat positions (iz * in_h + iy) * in_w + ix in the input volume.
COLONY_KERNEL(MaxPool3dForward, DType dtype, const Pool3dGeometry& g, const void* x, void* y, int64_t* indices);
COLONY_KERNEL(AvgPool3dForward, DType dtype, const Pool3dGeometry& g, bool count_include_pad, int64_t divisor_override,
              const void* x, void* y);
COLONY_KERNEL(AvgPool3dBackward, DType dtype, const Pool3dGeometry& g, bool count_include_pad, int64_t divisor_override,
              const void* grad_y, void* grad_x);
COLONY_KERNEL(AdaptiveAvgPool3dForward, DType dtype, const Pool3dGeometry& g, const void* x, void* y);
COLONY_KERNEL(AdaptiveAvgPool3dBackward, DType dtype, const Pool3dGeometry& g, const void* grad_y, void* grad_x);
COLONY_KERNEL(AdaptiveMaxPool3dForward, DType dtype, const Pool3dGeometry& g, const void* x, void* y,
              int64_t* indices);

// Fractional max pooling (2-D as depth 1, and 3-D): each plane's windows are kernel_* wide and
// start where pool_window.h's fractional_start puts them, from the plane's samples (same dtype as
// x, `sample_dims` per plane, contiguous by plane): torch's order, (w, h) for 2-D and (t, h, w) for
// 3-D. Max pooling's tie rule and flat indices.
COLONY_KERNEL(FractionalMaxPoolForward, DType dtype, const Pool3dGeometry& g, int sample_dims, const void* samples,
              const void* x, void* y, int64_t* indices);

}  // namespace colony::kernels
