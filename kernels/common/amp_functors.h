// Loss scaling's per-element step, written once for the CPU loop and the CUDA kernel: PyTorch's
// _amp_foreach_non_finite_check_and_unscale_ (aten/src/ATen/native/cuda/AmpKernels.cu).
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// Multiplies g by inv_scale in place; returns whether g was inf or NaN. (v - v) is 0 for every
// finite v and NaN for +-inf and NaN; the build keeps IEEE semantics (no -ffast-math), and this
// needs no isfinite overload on the device.
template <typename T>
COLONY_INLINE bool unscale_element(T& g, float inv_scale) {
  using C = compute_t<T>;
  const C v = static_cast<C>(g);
  const bool non_finite = !(v - v == C(0));
  g = static_cast<T>(v * static_cast<C>(inv_scale));
  return non_finite;
}

}  // namespace colony::kernels
