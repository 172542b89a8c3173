// Portable qualifiers for code shared by the CPU kernels and the nvcc-compiled CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define COLONY_HOST_DEVICE __host__ __device__
#define COLONY_DEVICE_INLINE __device__ __forceinline__
#else
#define COLONY_HOST_DEVICE
#endif

#define COLONY_INLINE COLONY_HOST_DEVICE inline
