// 2-D convolution on CUDA through cuDNN's convolution API: the contracts of kernels/cpu/conv.h on
// contiguous NCHW device arrays, queued on `stream` (a cudaStream_t). float32 (TF32 tensor cores
// when cudnn_allow_tf32(), on by default as in PyTorch; never a float16 down-conversion), float64,
// float16 and bfloat16 (both accumulating in float32).
//
// The algorithm for each (operation, shape, dtype, device, switches of backend_flags.h) is chosen
// once and cached: by cuDNN's heuristics (cudnnGet*Algorithm_v7), or with cudnn_benchmark() by
// timing them all (cudnnFind*AlgorithmEx); with cudnn_deterministic() only deterministic ones. The
// first candidate that runs within the workspace it asks for is kept. One cuDNN handle per thread
// and device. An input, output or weight of more than 2^31 - 1 elements (the limit of cuDNN's 4-d
// descriptors) is std::invalid_argument saying so (check_cudnn_element_limit, cudnn_policy.h).
#pragma once

#include <cstddef>
#include <functional>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

// Returns `bytes` of device memory valid until the convolution call that asked for it returns
// (work queued on the same stream may still use it; stream-ordered reuse makes that safe).
using WorkspaceAllocator = std::function<void*(size_t bytes)>;

void conv2d_forward(DType dtype, const Conv2dGeometry& g, const void* x, const void* w, const void* bias, void* y,
                    void* stream, const WorkspaceAllocator& workspace);

// grad_x, grad_w, grad_b may each be null (not wanted); the others are overwritten.
void conv2d_backward(DType dtype, const Conv2dGeometry& g, const void* grad_y, const void* x, const void* w,
                     void* grad_x, void* grad_w, void* grad_b, void* stream, const WorkspaceAllocator& workspace);

}  // namespace colony::kernels::cuda
