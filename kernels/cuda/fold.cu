// Unfold (im2col) and fold (col2im) on CUDA (kernels/common/fold.h): one thread per column element
// for unfold (unfold_source), one per image element for fold, which gathers the column elements
// that read it (fold_gather) instead of scatter-adding with atomics: every element is written once
// by one thread in a fixed order, so fold needs no zero fill first and gives the same bits on
// every run.
#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/common/fold.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void unfold_kernel(FoldGeometry g, const T* image, T* columns) {
  COLONY_GRID_LOOP(e, g.column_elements()) {
    const int64_t source = unfold_source(g, e);
    columns[e] = source < 0 ? T(0.0f) : image[source];
  }
}

template <typename T>
__global__ void fold_kernel(FoldGeometry g, const T* columns, T* image) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  COLONY_GRID_LOOP(e, g.image_elements()) { image[e] = T(fold_gather<Acc>(g, columns, e)); }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void UnfoldForward::cuda(DType dtype, const FoldGeometry& g, const void* image, void* columns, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const int64_t n = g.column_elements();
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "unfold", [&] {
    unfold_kernel<scalar_t><<<grid_blocks(n, kThreads), kThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(image), static_cast<scalar_t*>(columns));
  });
  after_launch("unfold");
}

void FoldForward::cuda(DType dtype, const FoldGeometry& g, const void* columns, void* image, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const int64_t n = g.image_elements();
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "fold", [&] {
    fold_kernel<scalar_t><<<grid_blocks(n, kThreads), kThreads, 0, as_stream(stream)>>>(
        g, static_cast<const scalar_t*>(columns), static_cast<scalar_t*>(image));
  });
  after_launch("fold");
}

}  // namespace colony::kernels
