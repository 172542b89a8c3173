#include "kernels/common/search.h"

#include <cuda_runtime.h>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// One thread per value: neighbouring threads search the same row (the top of the bisection, the
// same few boundaries for every thread, stays in L1), each with the bisection of search.h.
template <typename T, typename Out>
__global__ void search_sorted_kernel(const T* boundaries, const int64_t* sorter, const T* values, Out* out,
                                     int64_t total, int64_t n, int64_t per_row, bool right) {
  COLONY_GRID_LOOP(i, total) {
    const int64_t r = i / per_row;
    const int64_t* order = sorter != nullptr ? sorter + r * n : nullptr;
    out[i] = static_cast<Out>(
        search_sorted_position(boundaries + r * n, order, n, static_cast<compute_t<T>>(values[i]), right));
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void SearchSorted::cuda(DType dtype, const void* boundaries, const int64_t* sorter, const void* values, void* out,
                        bool out_int32, int64_t rows, int64_t n, int64_t per_row, bool right, void* stream) {
  using namespace cuda;  // NOLINT: the kernel above
  const int64_t total = rows * per_row;
  if (total == 0) return;
  auto s = as_stream(stream);
  COLONY_DISPATCH_NUMERIC(dtype, "searchsorted", [&] {
    const auto* b = static_cast<const scalar_t*>(boundaries);
    const auto* v = static_cast<const scalar_t*>(values);
    const auto blocks = grid_blocks(total, kThreads);
    if (out_int32) {
      search_sorted_kernel<<<blocks, kThreads, 0, s>>>(b, sorter, v, static_cast<int32_t*>(out), total, n, per_row,
                                                       right);
    } else {
      search_sorted_kernel<<<blocks, kThreads, 0, s>>>(b, sorter, v, static_cast<int64_t*>(out), total, n, per_row,
                                                       right);
    }
  });
  after_launch("searchsorted");
}

}  // namespace colony::kernels
