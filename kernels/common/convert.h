// Conversion of one element between any two of the eight dtypes, shared by the CPU and CUDA copy
// kernels so that both convert identically.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/dtype.h"
#include "kernels/common/half.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// C++ static_cast semantics through the source's compute type (float for the 16-bit floats):
// floating -> integral truncates toward zero; anything -> bool is `!= 0` (so NaN is true);
// -> float16/bfloat16 rounds to nearest even (half.h). One deliberate detail: floating -> uint8 goes
// through int64, so negative values wrap modulo 256 on every backend (what PyTorch's CPU kernels do
// in practice; a direct float -> uint8 cast is undefined for them and saturates on the GPU).
template <typename Dst, typename Src>
COLONY_INLINE Dst convert(Src x) {
  if constexpr (std::is_same_v<Dst, Src>) {
    return x;
  } else {
    using CS = compute_t<Src>;
    CS v = static_cast<CS>(x);
    if constexpr (std::is_same_v<Dst, bool>) {
      return v != CS(0);
    } else if constexpr (std::is_same_v<Dst, uint8_t> && std::is_floating_point_v<CS>) {
      return static_cast<uint8_t>(static_cast<int64_t>(v));
    } else if constexpr (std::is_same_v<Dst, Half> || std::is_same_v<Dst, BFloat16>) {
      return Dst(static_cast<float>(v));
    } else {
      return static_cast<Dst>(v);
    }
  }
}

// A double from the front end (a scalar operand, a fill value, a clamp bound) in compute type C.
template <typename C>
COLONY_INLINE C scalar_to(double s) {
  if constexpr (std::is_same_v<C, bool>) {
    return s != 0.0;
  } else {
    return static_cast<C>(s);
  }
}

}  // namespace colony::kernels
