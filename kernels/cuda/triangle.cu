#include "kernels/common/triangle.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

template <typename T>
__global__ void triangle_kernel(const T* x, T* y, int64_t n, int64_t rows, int64_t cols, int64_t diagonal,
                                bool lower) {
  COLONY_GRID_LOOP(k, n) {
    int64_t j = k % cols, i = (k / cols) % rows;
    y[k] = triangle_keeps(i, j, diagonal, lower) ? x[k] : T(0);
  }
}

template <typename T>
void launch(const void* x, void* y, int64_t n, int64_t rows, int64_t cols, int64_t diagonal, bool lower,
            cudaStream_t s) {
  constexpr int kThreads = 256;
  triangle_kernel<T><<<grid_blocks(n, kThreads), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n,
                                                                    rows, cols, diagonal, lower);
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void TriangleMask::cuda(int64_t elem_size, const void* x, void* y, int64_t batch, int64_t rows, int64_t cols,
                        int64_t diagonal, bool lower, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const int64_t n = batch * rows * cols;
  if (n == 0) return;
  auto s = as_stream(stream);
  // Zero is all-zero bytes in every dtype, so the element's width is all the kernel needs.
  switch (elem_size) {
    case 1: launch<uint8_t>(x, y, n, rows, cols, diagonal, lower, s); break;
    case 2: launch<uint16_t>(x, y, n, rows, cols, diagonal, lower, s); break;
    case 4: launch<uint32_t>(x, y, n, rows, cols, diagonal, lower, s); break;
    case 8: launch<uint64_t>(x, y, n, rows, cols, diagonal, lower, s); break;
    default: throw std::invalid_argument("tril/triu: unsupported element size " + std::to_string(elem_size));
  }
  after_launch(lower ? "tril" : "triu");
}

}  // namespace colony::kernels
