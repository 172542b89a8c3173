// CUDA pooling: the contracts of kernels/cpu/pool.h on contiguous device planes, queued on
// `stream` (a cudaStream_t). float32, float64, float16 and bfloat16 (compared and summed in
// compute_t). Two differences from the CPU, both for speed without a host round trip:
//  - max_pool2d_backward adds with atomics (windows may overlap), so with overlapping windows the
//    order of the additions, and the float rounding, can vary between runs; an index outside its
//    plane is skipped rather than reported.
//  - the average-pooling backward passes gather (each input sums the outputs whose windows hold
//    it), so they are deterministic.
#pragma once

#include <cstdint>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

void max_pool2d_forward(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices, void* stream);
void max_pool2d_backward(DType dtype, const Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                         void* grad_x, void* stream);

void avg_pool2d_forward(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                        const void* x, void* y, void* stream);
void avg_pool2d_backward(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                         const void* grad_y, void* grad_x, void* stream);

void adaptive_avg_pool2d_forward(DType dtype, const Pool2dGeometry& g, const void* x, void* y, void* stream);
void adaptive_avg_pool2d_backward(DType dtype, const Pool2dGeometry& g, const void* grad_y, void* grad_x,
                                  void* stream);

}  // namespace colony::kernels::cuda
