#include "kernels/common/sort.h"

#include <cub/device/device_segmented_sort.cuh>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// The workspace's parts, each aligned for cub: keys in and out, positions in and out, the row
// offsets, then cub's own temporary storage.
struct Layout {
  size_t keys_in = 0, keys_out = 0, pos_in = 0, pos_out = 0, offsets = 0, temp = 0, temp_bytes = 0, total = 0;
};

size_t align_up(size_t b) { return (b + 255) / 256 * 256; }

template <typename K>
size_t cub_temp_bytes(int64_t rows, int64_t n, bool descending) {
  size_t bytes = 0;
  cudaError_t err = descending ? cub::DeviceSegmentedSort::StableSortPairsDescending(
                                     nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                                     static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr), rows * n,
                                     rows, static_cast<const int64_t*>(nullptr), static_cast<const int64_t*>(nullptr))
                               : cub::DeviceSegmentedSort::StableSortPairs(
                                     nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                                     static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr), rows * n,
                                     rows, static_cast<const int64_t*>(nullptr), static_cast<const int64_t*>(nullptr));
  if (err != cudaSuccess) throw std::runtime_error(std::string("sort: cub workspace query failed: ") + cudaGetErrorString(err));
  return bytes;
}

template <typename K>
Layout layout_for(int64_t rows, int64_t n, bool descending) {
  Layout l;
  const size_t items = static_cast<size_t>(rows * n);
  size_t at = 0;
  l.keys_in = at;
  at += align_up(items * sizeof(K));
  l.keys_out = at;
  at += align_up(items * sizeof(K));
  l.pos_in = at;
  at += align_up(items * sizeof(int64_t));
  l.pos_out = at;
  at += align_up(items * sizeof(int64_t));
  l.offsets = at;
  at += align_up(static_cast<size_t>(rows + 1) * sizeof(int64_t));
  l.temp = at;
  l.temp_bytes = cub_temp_bytes<K>(rows, n, descending);
  l.total = at + align_up(l.temp_bytes);
  return l;
}

template <typename T, typename K>
__global__ void keys_kernel(const T* x, K* keys, int64_t* pos, int64_t* offsets, int64_t rows, int64_t n) {
  COLONY_GRID_LOOP(i, rows * n) {
    keys[i] = sort_key(x[i]);
    pos[i] = i % n;
    if (i % n == 0) offsets[i / n] = i;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) offsets[rows] = rows * n;
}

template <typename T>
__global__ void take_kernel(const T* x, const int64_t* pos, T* values, int64_t* indices, int64_t rows, int64_t n,
                            int64_t k) {
  COLONY_GRID_LOOP(i, rows * k) {
    const int64_t r = i / k, p = pos[r * n + i % k];
    indices[i] = p;
    values[i] = x[r * n + p];
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void SortWorkspaceBytes::cuda(DType dtype, int64_t rows, int64_t n, bool descending, size_t* bytes, void*) {
  using namespace cuda;  // NOLINT: the helpers above
  *bytes = 0;
  if (rows * n == 0) return;
  COLONY_DISPATCH_ALL(dtype, "sort", [&] { *bytes = layout_for<sort_key_t<scalar_t>>(rows, n, descending).total; });
}

void SortRows::cuda(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t n, int64_t k,
                    bool descending, void* workspace, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (rows * n == 0 || k == 0) return;
  auto s = as_stream(stream);
  COLONY_DISPATCH_ALL(dtype, "sort", [&] {
    using K = sort_key_t<scalar_t>;
    const Layout l = layout_for<K>(rows, n, descending);
    if (workspace == nullptr) throw std::invalid_argument("sort: needs a device workspace (SortWorkspaceBytes)");
    auto* base = static_cast<char*>(workspace);
    auto* keys_in = reinterpret_cast<K*>(base + l.keys_in);
    auto* keys_out = reinterpret_cast<K*>(base + l.keys_out);
    auto* pos_in = reinterpret_cast<int64_t*>(base + l.pos_in);
    auto* pos_out = reinterpret_cast<int64_t*>(base + l.pos_out);
    auto* offsets = reinterpret_cast<int64_t*>(base + l.offsets);
    const auto* xp = static_cast<const scalar_t*>(x);
    keys_kernel<<<grid_blocks(rows * n, kThreads), kThreads, 0, s>>>(xp, keys_in, pos_in, offsets, rows, n);
    after_launch("sort");
    size_t temp_bytes = l.temp_bytes;
    cudaError_t err =
        descending ? cub::DeviceSegmentedSort::StableSortPairsDescending(base + l.temp, temp_bytes, keys_in, keys_out,
                                                                         pos_in, pos_out, rows * n, rows, offsets,
                                                                         offsets + 1, s)
                   : cub::DeviceSegmentedSort::StableSortPairs(base + l.temp, temp_bytes, keys_in, keys_out, pos_in,
                                                               pos_out, rows * n, rows, offsets, offsets + 1, s);
    if (err != cudaSuccess) throw std::runtime_error(std::string("sort: cub segmented sort failed: ") + cudaGetErrorString(err));
    take_kernel<<<grid_blocks(rows * k, kThreads), kThreads, 0, s>>>(xp, pos_out, static_cast<scalar_t*>(values),
                                                                      indices, rows, n, k);
  });
  after_launch("sort");
}

}  // namespace colony::kernels
