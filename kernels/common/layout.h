// A strided view of memory as kernels see it: sizes and strides in elements, no ownership.
#pragma once

#include <cstdint>

#include "kernels/common/macros.h"

namespace colony::kernels {

constexpr int kMaxDims = 12;

struct StridedLayout {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};  // 0 on broadcast dimensions

  COLONY_HOST_DEVICE int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= sizes[i];
    return n;
  }
  // Offset (in elements) of the linear index `i` of the row-major iteration over `sizes`.
  COLONY_HOST_DEVICE int64_t offset_of(int64_t i) const {
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t s = sizes[d];
      off += (i % s) * strides[d];
      i /= s;
    }
    return off;
  }
  COLONY_HOST_DEVICE bool is_contiguous() const {
    int64_t expected = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  }
};

}  // namespace colony::kernels
