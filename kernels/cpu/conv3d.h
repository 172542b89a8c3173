// 3-D convolution (cross-correlation, as in PyTorch) on the CPU: forward and the three gradients,
// float32 and float64, on contiguous NCDHW arrays (callers widen 16-bit operands, ops/cpu_widen.h).
//
// Volumes are split over the thread pool as conv.h's images are (conv_parts.h: each part owns its
// scratch and a private weight gradient, summed at the end in a fixed order); each volume is a few
// single-threaded products of one group's weights [O / groups, C / groups * kD * kH * kW] with a
// vol2col block: the patches of a band of output rows ((z, y) pairs, every x), about 512 columns
// (conv3d.cc says why; kernels/cpu/gemm.h's products). The input gradient multiplies by the transposed weights
// and scatters the block back (col2vol, vol2col's adjoint); the weight gradient is accumulated
// transposed, [K, O / groups] += block * grad_y^T (the faster side of that product), and transposed
// once at the end. benchmarks/conv3d_bench.cc times it.
#pragma once

#include "kernels/common/conv_geometry.h"
#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// y = conv3d(x, w) + bias (bias may be null).
void conv3d_forward(DType dtype, const Conv3dGeometry& g, const void* x, const void* w, const void* bias, void* y);

// Gradients of sum(grad_y * conv3d(x, w) + bias) with respect to x, w and bias. Each of grad_x,
// grad_w, grad_b may be null when not wanted; the others are overwritten. x is only read when
// grad_w is wanted, w only when grad_x is.
void conv3d_backward(DType dtype, const Conv3dGeometry& g, const void* grad_y, const void* x, const void* w,
                     void* grad_x, void* grad_w, void* grad_b);

}  // namespace colony::kernels::cpu
