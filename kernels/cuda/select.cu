#include "kernels/common/select.h"

#include <cuda_runtime.h>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"
#include "runtime/cuda/workspaces.h"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 128;

// One thread per row runs the quickselect both devices share on its row's items in scratch
// (O(n) expected per row): it keeps every row's answer the CPU's, torch's ties included, and fills
// the GPU when there are many rows; a few long rows would leave it mostly idle (median and
// nanmedian then take a stable sort instead: ops/select_ops.cc; kthvalue does not).
template <typename T, typename Item>
__global__ void select_rows_kernel(const T* x, T* values, int64_t* indices, int64_t rows, int64_t n, SelectKind kind,
                                   int64_t k, int64_t all_nan_index, Item* work) {
  COLONY_GRID_LOOP(r, rows) {
    select_row(x + r * n, n, kind, k, all_nan_index, work + r * n, values + r, indices + r);
  }
}

template <typename T, typename Item>
void launch(const void* x, void* values, int64_t* indices, int64_t rows, int64_t n, SelectKind kind, int64_t k,
            int64_t all_nan_index, void* stream) {
  KernelScratch work(static_cast<size_t>(rows * n) * sizeof(Item));  // for this call, from the caching allocator
  select_rows_kernel<T, Item><<<grid_blocks(rows, kThreads), kThreads, 0, as_stream(stream)>>>(
      static_cast<const T*>(x), static_cast<T*>(values), indices, rows, n, kind, k, all_nan_index,
      static_cast<Item*>(work.get()));
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void SelectRows::cuda(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t n,
                      SelectKind kind, int64_t k, int64_t all_nan_index, void* stream) {
  using namespace cuda;  // NOLINT: the kernel above
  if (rows == 0) return;
  COLONY_DISPATCH_ALL(dtype, "select", [&] {
    using Pair = PairItem<sort_key_t<scalar_t>>;
    if constexpr (sizeof(sort_key_t<scalar_t>) == 4) {
      if (n <= (int64_t{1} << 32)) {
        launch<scalar_t, PackedItem>(x, values, indices, rows, n, kind, k, all_nan_index, stream);
        return;
      }
    }
    launch<scalar_t, Pair>(x, values, indices, rows, n, kind, k, all_nan_index, stream);
  });
  after_launch("select");
}

}  // namespace colony::kernels
