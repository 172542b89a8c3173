#include "kernels/common/cumsum.h"

#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

// One thread per (outer, inner) column walks the axis; neighbouring threads take neighbouring
// columns, so with inner > 1 every step is a coalesced read and write.
template <typename T, typename Out>
__global__ void cumsum_columns_kernel(const T* x, Out* y, int64_t outer, int64_t dim, int64_t inner, bool reverse) {
  using Acc = cumsum_acc_t<T>;
  COLONY_GRID_LOOP(c, outer * inner) {
    const int64_t base = (c / inner) * dim * inner + c % inner;
    Acc acc = Acc(0);
    for (int64_t step = 0; step < dim; ++step) {
      const int64_t r = reverse ? dim - 1 - step : step;
      acc += static_cast<Acc>(static_cast<compute_t<T>>(x[base + r * inner]));
      y[base + r * inner] = static_cast<Out>(acc);
    }
  }
}

// The axis last (inner == 1): one block of kThreads per row scans it in tiles of kThreads
// elements, each tile by a shared-memory Hillis-Steele scan plus the running total of the tiles
// before it, so a long row is not left to one thread. reverse: the row read from its end (position
// i of the scan is element dim - 1 - i).
constexpr int kThreads = 256;

template <typename T, typename Out>
__global__ void cumsum_rows_kernel(const T* x, Out* y, int64_t rows, int64_t dim, bool reverse) {
  using Acc = cumsum_acc_t<T>;
  __shared__ Acc tile[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * dim;
    Out* yr = y + row * dim;
    Acc carry = Acc(0);
    for (int64_t start = 0; start < dim; start += kThreads) {
      const int64_t i = start + threadIdx.x;
      const int64_t at = reverse ? dim - 1 - i : i;
      tile[threadIdx.x] = i < dim ? static_cast<Acc>(static_cast<compute_t<T>>(xr[at])) : Acc(0);
      __syncthreads();
      for (int offset = 1; offset < kThreads; offset <<= 1) {
        Acc add = threadIdx.x >= offset ? tile[threadIdx.x - offset] : Acc(0);
        __syncthreads();
        tile[threadIdx.x] += add;
        __syncthreads();
      }
      if (i < dim) yr[at] = static_cast<Out>(carry + tile[threadIdx.x]);
      carry += tile[kThreads - 1];
      __syncthreads();  // every thread has read the tile's total before the next tile overwrites it
    }
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void Cumsum::cuda(DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner, bool reverse,
                  void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (outer * dim * inner == 0) return;
  auto s = as_stream(stream);
  COLONY_DISPATCH_ALL(dtype, "cumsum", [&] {
    using Out = std::conditional_t<std::is_same_v<cumsum_acc_t<scalar_t>, int64_t>, int64_t, scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* yp = static_cast<Out*>(y);
    if (inner == 1) {
      cumsum_rows_kernel<scalar_t, Out><<<row_grid_blocks(outer, 1), kThreads, 0, s>>>(xp, yp, outer, dim, reverse);
    } else {
      cumsum_columns_kernel<scalar_t, Out>
          <<<grid_blocks(outer * inner, kThreads), kThreads, 0, s>>>(xp, yp, outer, dim, inner, reverse);
    }
  });
  after_launch("cumsum");
}

}  // namespace colony::kernels
