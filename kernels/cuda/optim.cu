#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/optim.h"

namespace colony::kernels::cuda {
namespace {

template <typename T>
__global__ void sgd_kernel(int64_t n, T* p, const T* g, T* buf, SgdParams s) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    T unused{};
    sgd_update(p[i], g[i], buf ? buf[i] : unused, s);
  }
}

template <typename T>
__global__ void adam_kernel(int64_t n, T* p, const T* g, T* m, T* v, T* vmax, AdamParams a) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    T unused{};
    adam_update(p[i], g[i], m[i], v[i], vmax ? vmax[i] : unused, a);
  }
}

unsigned blocks_for(int64_t n) {
  int64_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 4096 ? 4096 : b));
}

void check_launch(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + " kernel: " + cudaGetErrorString(err));
}

}  // namespace

void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s, void* stream) {
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "sgd_step", [&] {
    sgd_kernel<scalar_t><<<blocks_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad), static_cast<scalar_t*>(buf), s);
  });
  check_launch("sgd_step");
}

void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax, const AdamParams& a,
               void* stream) {
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "adam_step", [&] {
    adam_kernel<scalar_t><<<blocks_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad), static_cast<scalar_t*>(m),
        static_cast<scalar_t*>(v), static_cast<scalar_t*>(vmax), a);
  });
  check_launch("adam_step");
}

}  // namespace colony::kernels::cuda
