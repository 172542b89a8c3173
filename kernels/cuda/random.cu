#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/common/dispatch.h"
#include "kernels/common/random_fill.h"
#include "kernels/cuda/random.h"

namespace colony::kernels::cuda {
namespace {

template <typename T>
__global__ void fill_random_kernel(T* out, int64_t n, bool normal, double a, double b, uint64_t seed,
                                   uint64_t offset) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    out[i] = random_value_at<T>(normal, a, b, seed, offset, i);
  }
}

}  // namespace

void fill_random(DType dtype, void* out, int64_t n, bool normal, double a, double b, uint64_t seed,
                 uint64_t offset, void* stream) {
  if (n == 0) return;
  int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535) blocks = 65535;
  COLONY_DISPATCH_FLOATING(dtype, "random", [&] {
    fill_random_kernel<scalar_t><<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<scalar_t*>(out), n, normal, a, b, seed, offset);
  });
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("fill_random kernel: ") + cudaGetErrorString(err));
}

}  // namespace colony::kernels::cuda
