// Several operands walked in lockstep over one shape (the output's): the shared sizes and each
// operand's strides, with dimensions coalesced so that the common dense case is a single run.
// Built on the host; CUDA kernels take it by value and compute offsets with offsets().
#pragma once

#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

template <int K>
struct MultiLayout {
  int ndim = 0;
  bool contiguous = false;  // every operand is the dense row-major sequence: offset == index
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[K][kMaxDims] = {};  // elements

  // Offsets (in elements) of every operand for linear index i of the row-major walk over sizes.
  COLONY_HOST_DEVICE void offsets(int64_t i, int64_t* off) const {
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t q = i / sizes[d];
      int64_t r = i - q * sizes[d];
      for (int k = 0; k < K; ++k) off[k] += r * strides[k][d];
      i = q;
    }
  }
};

// layouts[k] all have the sizes of layouts[0]. Size-1 dims are dropped and neighbouring dims that
// every operand steps through as one (stride[d] == stride[d+1] * size[d+1]) merge, so a dense
// tensor, or a dense output with an input broadcast along its outer dims, needs no per-element
// index arithmetic.
template <int K>
inline MultiLayout<K> make_multi_layout(const StridedLayout* const (&layouts)[K]) {
  MultiLayout<K> m;
  const StridedLayout& shape = *layouts[0];
  m.numel = shape.numel();
  int64_t sizes[kMaxDims];
  int64_t strides[K][kMaxDims];
  int n = 0;  // collected dims, innermost first
  for (int d = shape.ndim - 1; d >= 0; --d) {
    int64_t size = shape.sizes[d];
    if (size == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < K; ++k) merge = merge && layouts[k]->strides[d] == strides[k][n - 1] * sizes[n - 1];
      if (merge) {
        sizes[n - 1] *= size;
        continue;
      }
    }
    sizes[n] = size;
    for (int k = 0; k < K; ++k) strides[k][n] = layouts[k]->strides[d];
    ++n;
  }
  m.ndim = n;
  for (int i = 0; i < n; ++i) {
    m.sizes[i] = sizes[n - 1 - i];
    for (int k = 0; k < K; ++k) m.strides[k][i] = strides[k][n - 1 - i];
  }
  m.contiguous = true;
  if (n > 1) m.contiguous = false;
  if (n == 1)
    for (int k = 0; k < K; ++k) m.contiguous = m.contiguous && m.strides[k][0] == 1;
  return m;
}

}  // namespace colony::kernels
