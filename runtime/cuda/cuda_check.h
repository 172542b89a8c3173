// The one check of a CUDA runtime call's status, for host code that calls the runtime directly
// (runtime.cc, blas.cc, cudnn_conv.cc): throws std::runtime_error naming the call, and, for a
// device fault, the last op launched on this thread (runtime/cuda/runtime.h: COLONY_CUDA_SYNC).
// Only CUDA builds include it.
#pragma once

#include <cuda_runtime.h>

namespace colony::kernels::cuda {

void check_cuda(cudaError_t err, const char* call);

}  // namespace colony::kernels::cuda
