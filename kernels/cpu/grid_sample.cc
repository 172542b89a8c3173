// Grid sampling on the CPU (kernels/common/grid_sample.h). The forward takes output points in
// blocks of kBlock: the taps of the block's points first (grid_taps, once per point for every
// channel), then channel by channel a pass over the block that writes the channel's outputs at
// stride 1, so the weighted sums run across neighbouring points while the block's input rows stay
// in cache. Blocks of every batch are spread over the thread pool.
//
// The backward is deterministic: when the input's gradient is wanted, one thread owns a batch
// element's whole gradient (torch's CPU kernel splits over the batch too) and adds into it in point
// order, so the result does not depend on the thread count (a batch smaller than the thread count
// leaves threads idle). The grid's gradient alone splits like the forward: each entry is one
// point's sum over its channels.
#include "kernels/common/grid_sample.h"

#include <algorithm>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

// Output points whose taps are computed together before the channel loop.
constexpr int64_t kBlock = 64;
// Multiply-adds a thread's chunk should at least hold, so small samples stay on the calling thread.
constexpr int64_t kGrainWork = 32768;

int64_t grain_of(int64_t work_per_item) { return std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, work_per_item)); }

template <typename T, GridSampleMode kMode, int kDims>
void forward(const GridSampleGeometry& g, const T* input, const T* grid, T* output) {
  using Taps = GridTaps<T, kMode, kDims>;
  const int64_t points = g.out_points(), in_points = g.in_points();
  const int64_t blocks = (points + kBlock - 1) / kBlock;
  cpu::parallel_for(g.batch * blocks, grain_of(kBlock * g.channels * Taps::kCount), [&](int64_t b0, int64_t b1) {
    Taps taps[kBlock];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = b / blocks, p0 = (b % blocks) * kBlock, m = std::min(kBlock, points - p0);
      const T* points_grid = grid + (n * points + p0) * kDims;
      for (int64_t p = 0; p < m; ++p) grid_taps<T, kMode, kDims, false>(g, points_grid + p * kDims, taps[p]);
      const T* in = input + n * g.channels * in_points;
      T* out = output + n * g.channels * points + p0;
      for (int64_t c = 0; c < g.channels; ++c) {
        const T* plane = in + c * in_points;
        T* row = out + c * points;
        for (int64_t p = 0; p < m; ++p) {
          T acc = T(0);
          for (int k = 0; k < Taps::kCount; ++k) {
            const int64_t o = taps[p].offset_of(g, k);
            if (o >= 0) acc += taps[p].weight_of(k) * plane[o];
          }
          row[p] = acc;
        }
      }
    }
  });
}

template <typename T, GridSampleMode kMode, int kDims>
void backward(const GridSampleGeometry& g, const T* grad_output, const T* input, const T* grid, T* grad_input,
              T* grad_grid) {
  using Taps = GridTaps<T, kMode, kDims>;
  const int64_t points = g.out_points(), in_points = g.in_points();
  const auto add = [](T* address, T v) { *address += v; };
  // Points [p0, p1) of batch element n.
  const auto run = [&](int64_t n, int64_t p0, int64_t p1) {
    const T* go = grad_output + n * g.channels * points;
    const T* in = input + n * g.channels * in_points;
    T* gin = grad_input != nullptr ? grad_input + n * g.channels * in_points : nullptr;
    Taps taps;
    for (int64_t p = p0; p < p1; ++p) {
      grid_taps<T, kMode, kDims, true>(g, grid + (n * points + p) * kDims, taps);
      T* gg = grad_grid != nullptr ? grad_grid + (n * points + p) * kDims : nullptr;
      grid_sample_point_backward(g, taps, go + p, in, gin, gg, add);
    }
  };
  const int64_t work = g.channels * Taps::kCount;
  if (grad_input != nullptr) {
    cpu::parallel_for(g.batch, grain_of(points * work), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) run(n, 0, points);
    });
    return;
  }
  const int64_t blocks = (points + kBlock - 1) / kBlock;
  cpu::parallel_for(g.batch * blocks, grain_of(kBlock * work), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = b / blocks, p0 = (b % blocks) * kBlock;
      run(n, p0, std::min(points, p0 + kBlock));
    }
  });
}

// Calls fn.template operator()<kMode, kDims>() for the geometry's mode and dims.
template <typename F>
void by_mode(const GridSampleGeometry& g, F&& fn) {
  if (g.dims == 3) {
    if (g.mode == GridSampleMode::Nearest) return fn.template operator()<GridSampleMode::Nearest, 3>();
    if (g.mode == GridSampleMode::Bicubic) return fn.template operator()<GridSampleMode::Bicubic, 3>();
    return fn.template operator()<GridSampleMode::Bilinear, 3>();
  }
  if (g.mode == GridSampleMode::Nearest) return fn.template operator()<GridSampleMode::Nearest, 2>();
  if (g.mode == GridSampleMode::Bicubic) return fn.template operator()<GridSampleMode::Bicubic, 2>();
  return fn.template operator()<GridSampleMode::Bilinear, 2>();
}

template <typename T>
struct ForwardCall {
  const GridSampleGeometry& g;
  const T* input;
  const T* grid;
  T* output;
  template <GridSampleMode kMode, int kDims>
  void operator()() const {
    forward<T, kMode, kDims>(g, input, grid, output);
  }
};

template <typename T>
struct BackwardCall {
  const GridSampleGeometry& g;
  const T* grad_output;
  const T* input;
  const T* grid;
  T* grad_input;
  T* grad_grid;
  template <GridSampleMode kMode, int kDims>
  void operator()() const {
    backward<T, kMode, kDims>(g, grad_output, input, grid, grad_input, grad_grid);
  }
};

}  // namespace

void GridSampleForward::cpu(DType dtype, const GridSampleGeometry& g, const void* input, const void* grid,
                            void* output) {
  if (g.batch * g.channels * g.out_points() == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "grid_sampler", [&] {
    by_mode(g, ForwardCall<scalar_t>{g, static_cast<const scalar_t*>(input), static_cast<const scalar_t*>(grid),
                                     static_cast<scalar_t*>(output)});
  });
}

void GridSampleBackward::cpu(DType dtype, const GridSampleGeometry& g, const void* grad_output, const void* input,
                             const void* grid, void* grad_input, void* grad_grid) {
  if (g.batch * g.out_points() == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "grid_sampler backward", [&] {
    by_mode(g, BackwardCall<scalar_t>{g, static_cast<const scalar_t*>(grad_output),
                                      static_cast<const scalar_t*>(input), static_cast<const scalar_t*>(grid),
                                      static_cast<scalar_t*>(grad_input), static_cast<scalar_t*>(grad_grid)});
  });
}

}  // namespace colony::kernels
