// Grid sampling on CUDA (kernels/common/grid_sample.h): one thread per (batch element, output
// point), which computes the point's taps once (grid_taps) and loops over the channels, as torch's
// kernel. The backward adds the input's gradient with atomics, as torch's does (no gather is
// possible here: which output points read an input element depends on the grid's values), so the
// order of those additions, and the last bits of grad_input, can vary from run to run; the grid's
// gradient is one thread's sum and is the same every run.
#include <cuda_runtime.h>

#include "kernels/common/dispatch.h"
#include "kernels/common/grid_sample.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T, GridSampleMode kMode, int kDims>
__global__ void grid_sample_forward_kernel(GridSampleGeometry g, const T* input, const T* grid, T* output) {
  const int64_t points = g.out_points();
  COLONY_GRID_LOOP(e, g.batch * points) {
    const int64_t n = e / points, p = e % points;
    GridTaps<T, kMode, kDims> taps;
    grid_taps<T, kMode, kDims, false>(g, grid + e * kDims, taps);
    grid_sample_point(g, taps, input + n * g.channels * g.in_points(), output + n * g.channels * points + p);
  }
}

template <typename T>
struct AtomicAdd {
  __device__ void operator()(T* address, T v) const { atomic_add(address, v); }
};

template <typename T, GridSampleMode kMode, int kDims>
__global__ void grid_sample_backward_kernel(GridSampleGeometry g, const T* grad_output, const T* input, const T* grid,
                                            T* grad_input, T* grad_grid) {
  const int64_t points = g.out_points(), in_batch = g.channels * g.in_points();
  COLONY_GRID_LOOP(e, g.batch * points) {
    const int64_t n = e / points, p = e % points;
    GridTaps<T, kMode, kDims> taps;
    grid_taps<T, kMode, kDims, true>(g, grid + e * kDims, taps);
    grid_sample_point_backward(g, taps, grad_output + n * g.channels * points + p, input + n * in_batch,
                               grad_input != nullptr ? grad_input + n * in_batch : nullptr,
                               grad_grid != nullptr ? grad_grid + e * kDims : nullptr, AtomicAdd<T>{});
  }
}

template <typename T, GridSampleMode kMode, int kDims>
void launch_forward(const GridSampleGeometry& g, const void* input, const void* grid, void* output, void* stream) {
  const int64_t n = g.batch * g.out_points();
  grid_sample_forward_kernel<T, kMode, kDims><<<grid_blocks(n, kThreads), kThreads, 0, as_stream(stream)>>>(
      g, static_cast<const T*>(input), static_cast<const T*>(grid), static_cast<T*>(output));
}

template <typename T, GridSampleMode kMode, int kDims>
void launch_backward(const GridSampleGeometry& g, const void* grad_output, const void* input, const void* grid,
                     void* grad_input, void* grad_grid, void* stream) {
  const int64_t n = g.batch * g.out_points();
  grid_sample_backward_kernel<T, kMode, kDims><<<grid_blocks(n, kThreads), kThreads, 0, as_stream(stream)>>>(
      g, static_cast<const T*>(grad_output), static_cast<const T*>(input), static_cast<const T*>(grid),
      static_cast<T*>(grad_input), static_cast<T*>(grad_grid));
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void GridSampleForward::cuda(DType dtype, const GridSampleGeometry& g, const void* input, const void* grid,
                             void* output, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (g.batch * g.channels * g.out_points() == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "grid_sampler", [&] {
    using T = scalar_t;
    if (g.dims == 3) {
      if (g.mode == GridSampleMode::Nearest) {
        launch_forward<T, GridSampleMode::Nearest, 3>(g, input, grid, output, stream);
      } else if (g.mode == GridSampleMode::Bicubic) {
        launch_forward<T, GridSampleMode::Bicubic, 3>(g, input, grid, output, stream);
      } else {
        launch_forward<T, GridSampleMode::Bilinear, 3>(g, input, grid, output, stream);
      }
    } else if (g.mode == GridSampleMode::Nearest) {
      launch_forward<T, GridSampleMode::Nearest, 2>(g, input, grid, output, stream);
    } else if (g.mode == GridSampleMode::Bicubic) {
      launch_forward<T, GridSampleMode::Bicubic, 2>(g, input, grid, output, stream);
    } else {
      launch_forward<T, GridSampleMode::Bilinear, 2>(g, input, grid, output, stream);
    }
  });
  after_launch("grid_sampler");
}

void GridSampleBackward::cuda(DType dtype, const GridSampleGeometry& g, const void* grad_output, const void* input,
                              const void* grid, void* grad_input, void* grad_grid, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (g.batch * g.out_points() == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "grid_sampler backward", [&] {
    using T = scalar_t;
    if (g.dims == 3) {
      if (g.mode == GridSampleMode::Nearest) {
        launch_backward<T, GridSampleMode::Nearest, 3>(g, grad_output, input, grid, grad_input, grad_grid, stream);
      } else if (g.mode == GridSampleMode::Bicubic) {
        launch_backward<T, GridSampleMode::Bicubic, 3>(g, grad_output, input, grid, grad_input, grad_grid, stream);
      } else {
        launch_backward<T, GridSampleMode::Bilinear, 3>(g, grad_output, input, grid, grad_input, grad_grid, stream);
      }
    } else if (g.mode == GridSampleMode::Nearest) {
      launch_backward<T, GridSampleMode::Nearest, 2>(g, grad_output, input, grid, grad_input, grad_grid, stream);
    } else if (g.mode == GridSampleMode::Bicubic) {
      launch_backward<T, GridSampleMode::Bicubic, 2>(g, grad_output, input, grid, grad_input, grad_grid, stream);
    } else {
      launch_backward<T, GridSampleMode::Bilinear, 2>(g, grad_output, input, grid, grad_input, grad_grid, stream);
    }
  });
  after_launch("grid_sampler backward");
}

}  // namespace colony::kernels
