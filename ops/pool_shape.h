// The output length of a pooling window along one dim, PyTorch's pooling_output_shape, shared by
// the 2-D (ops/pool_ops.cc) and 3-D (ops/pool3d_ops.cc) pools.
#pragma once

#include <cstdint>

namespace colony::raw::detail {

// floor((in + 2 * pad - dilation * (k - 1) - 1) / stride) + 1, or the ceiling with ceil_mode,
// less one when the last window would start past the input and its left padding.
inline int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t q = num >= 0 ? num / stride : -((-num + stride - 1) / stride);  // floor division
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace colony::raw::detail
