#include "kernels/common/mode.h"

#include <cuda_runtime.h>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 128;

// One thread per row walks its sorted row once (the sort before it is the op's real cost).
template <typename T>
__global__ void mode_rows_kernel(const T* sorted, const int64_t* order, T* values, int64_t* indices, int64_t rows,
                                 int64_t n) {
  COLONY_GRID_LOOP(r, rows) { mode_of_sorted_row(sorted + r * n, order + r * n, n, values + r, indices + r); }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void ModeOfSortedRows::cuda(DType dtype, const void* sorted, const int64_t* order, void* values, int64_t* indices,
                            int64_t rows, int64_t n, void* stream) {
  using namespace cuda;  // NOLINT: the kernel above
  if (rows == 0) return;
  COLONY_DISPATCH_ALL(dtype, "mode", [&] {
    mode_rows_kernel<<<grid_blocks(rows, kThreads), kThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(sorted), order, static_cast<scalar_t*>(values), indices, rows, n);
  });
  after_launch("mode");
}

}  // namespace colony::kernels
