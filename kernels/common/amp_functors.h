// Loss scaling's math, written once for the CPU loops and the CUDA kernels: PyTorch's
// _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_ (ATen's AmpKernels.cu). The
// scale, its growth count and the overflow flag live in memory on the gradients' device, so that
// no step waits for the host and a CUDA graph can capture the whole of it.
#pragma once

#include <cstdint>

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

// What the gradients are multiplied by: the reciprocal of the float32 scale taken in double and
// rounded to float32 (GradScaler's `_scale.double().reciprocal().float()`).
COLONY_INLINE float inverse_scale(const float* scale) { return static_cast<float>(1.0 / static_cast<double>(*scale)); }

// The next scale: scale * backoff_factor after an overflow (the count restarts), scale *
// growth_factor after growth_interval overflow-free steps in a row (kept when that is inf),
// unchanged otherwise. The products are taken in double and rounded to float32, as PyTorch's.
COLONY_INLINE void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                                double backoff_factor, int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *scale = static_cast<float>(*scale * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  const int64_t successful = static_cast<int64_t>(*growth_tracker) + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*scale * growth_factor);
    if (grown - grown == 0.0f) *scale = grown;  // finite (see unscale_element)
    *growth_tracker = 0;
  } else {
    *growth_tracker = static_cast<int32_t>(successful);
  }
}
}  // namespace colony::kernels
