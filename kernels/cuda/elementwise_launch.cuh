// The one elementwise kernel shape every CUDA elementwise launcher uses: a grid-stride loop over
// the output's row-major index, offsets from a coalesced MultiLayout (direct indexing when every
// operand is dense), and a functor f(const int64_t* offsets) that does the work for one element.
#pragma once

#include <cuda_runtime.h>

#include "kernels/common/multi_layout.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {

template <int K, typename F>
__global__ void elementwise_kernel(MultiLayout<K> layout, F f) {
  int64_t off[K];
  if (layout.contiguous) {
    COLONY_GRID_LOOP(i, layout.numel) {
      for (int k = 0; k < K; ++k) off[k] = i;
      f(off);
    }
  } else {
    COLONY_GRID_LOOP(i, layout.numel) {
      layout.offsets(i, off);
      f(off);
    }
  }
}

template <int K, typename F>
void launch_elementwise(const StridedLayout* const (&layouts)[K], const F& f, void* stream, const char* op) {
  MultiLayout<K> layout = make_multi_layout<K>(layouts);
  if (layout.numel == 0) return;
  elementwise_kernel<K, F><<<grid_blocks(layout.numel), kBlockThreads, 0, as_stream(stream)>>>(layout, f);
  after_launch(op);
}

}  // namespace colony::kernels::cuda
