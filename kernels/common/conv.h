// 2-D and 3-D convolution (cross-correlation, as in PyTorch) and their three gradients on
// contiguous NCHW / NCDHW arrays: the kernel entry points, declared once for both devices (kernel.h).
//
// 3-D (Conv3dForward, Conv3dBackward): on the CPU kernels/cpu/conv3d.cc (vol2col and GEMM, float32
// and float64; callers widen 16-bit operands, ops/cpu_widen.h); on CUDA the same cuDNN path as 2-D
// below, with 5-d descriptors (the same dtypes, algorithm choice, cache, workspaces and limit).
//
// 2-D:
//
//  - CPU (kernels/cpu/conv_entry.cc): kernels/cpu/conv.h's direct and im2col kernels with the
//    algorithm chosen for the shape (ConvAlgorithm::Auto); float32 and float64, and bfloat16 where
//    kernels::cpu::conv2d_native_16bit says so (callers widen other 16-bit operands, ops/cpu_widen.h).
//  - CUDA (kernels/cuda/cudnn_conv.cc): cuDNN's convolution API. float32 (TF32 tensor cores when
//    cudnn_allow_tf32(), on by default as in PyTorch; never a float16 down-conversion), float64,
//    float16 and bfloat16 (both accumulating in float32). The algorithm for each (operation, shape,
//    dtype, device, switches of backend_flags.h) is chosen once and cached: by cuDNN's heuristics
//    (cudnnGet*Algorithm_v7), or with cudnn_benchmark() by timing them all (cudnnFind*AlgorithmEx);
//    with cudnn_deterministic() only deterministic ones. The first candidate that runs within the
//    workspace it asks for is kept; the workspaces are KernelScratch (runtime/cuda/workspaces.h), from
//    the caching allocator, not tensors of the op layer. One cuDNN handle per thread and device. An
//    input, output or weight of more than 2^31 - 1 elements (the limit of cuDNN's 4-d descriptors)
//    is std::invalid_argument saying so (check_cudnn_element_limit, cudnn_policy.h).
#pragma once

#include "kernels/common/conv_geometry.h"
#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// y = conv(x, w) + bias (bias may be null).
COLONY_KERNEL(Conv2dForward, DType dtype, const Conv2dGeometry& g, const void* x, const void* w, const void* bias,
              void* y);

// Gradients of sum(grad_y * conv(x, w) + bias) with respect to x, w and bias. Each of grad_x,
// grad_w, grad_b may be null when not wanted (a first layer needs no grad_x); the others are
// overwritten. x is only read when grad_w is wanted, w only when grad_x is.
COLONY_KERNEL(Conv2dBackward, DType dtype, const Conv2dGeometry& g, const void* grad_y, const void* x, const void* w,
              void* grad_x, void* grad_w, void* grad_b);

// y = conv3d(x, w) + bias (bias may be null).
COLONY_KERNEL(Conv3dForward, DType dtype, const Conv3dGeometry& g, const void* x, const void* w, const void* bias,
              void* y);

// Conv2dBackward's contract for the 3-D convolution.
COLONY_KERNEL(Conv3dBackward, DType dtype, const Conv3dGeometry& g, const void* grad_y, const void* x, const void* w,
              void* grad_x, void* grad_w, void* grad_b);

}  // namespace colony::kernels
