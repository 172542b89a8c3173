// 2-D max, average and adaptive average pooling on the CPU, float32 and float64, over contiguous
// planes (Pool2dGeometry::planes = batch * channels), with PyTorch's window rules. Planes are split
// over the thread pool.
#pragma once

#include <cstdint>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// y = the window's maximum; indices = its flat position ih * in_w + iw in the input plane. Padding
// never wins; the first maximum in row-major window order is kept, and a NaN beats every number
// (a later NaN replaces an earlier one), as in PyTorch's CPU kernel.
void max_pool2d_forward(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices);

// grad_x = 0, then grad_x[plane][indices[o]] += grad_y[o]. Throws std::out_of_range naming the bad
// index when one lies outside its plane.
void max_pool2d_backward(DType dtype, const Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                         void* grad_x);

// y = sum of the window's input elements / divisor, where the divisor is divisor_override when
// != 0, else the window's size clipped to the padded input (count_include_pad) or to the input
// (kernels/common/pool_window.h). Dilation is not used (avg_pool2d has none).
void avg_pool2d_forward(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                        const void* x, void* y);
void avg_pool2d_backward(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                         const void* grad_y, void* grad_x);

// Output (oy, ox) averages rows [floor(oy * H / Ho), ceil((oy + 1) * H / Ho)) and likewise columns;
// only planes, in_h, in_w, out_h and out_w of g are used.
void adaptive_avg_pool2d_forward(DType dtype, const Pool2dGeometry& g, const void* x, void* y);
void adaptive_avg_pool2d_backward(DType dtype, const Pool2dGeometry& g, const void* grad_y, void* grad_x);

}  // namespace colony::kernels::cpu
