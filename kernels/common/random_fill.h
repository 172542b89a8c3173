// The per-element random value both backends store (one place for the math).
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/philox.h"

namespace colony::kernels {

template <typename T>
COLONY_INLINE T random_value_at(bool normal, double a, double b, uint64_t seed, uint64_t offset, int64_t i) {
  constexpr bool is_double = sizeof(T) == 8;
  if (normal) return static_cast<T>(static_cast<compute_t<T>>(a + b * random_normal_at(seed, offset, i)));
  double u = random_uniform_at(seed, offset, i, is_double);
  // Compute in the stored type's precision so a float draw stays in [from, to) after rounding.
  compute_t<T> v = static_cast<compute_t<T>>(a) +
                   static_cast<compute_t<T>>(b - a) * static_cast<compute_t<T>>(u);
  return static_cast<T>(v);
}

}  // namespace colony::kernels
