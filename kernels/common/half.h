// float16 (IEEE binary16) and bfloat16 storage types with round-to-nearest-even conversion.
// Arithmetic happens in float (see compute_t in dtype.h); these types only store bits, so the same
// code runs on the host and in CUDA kernels and both round identically.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/common/macros.h"

namespace colony {

namespace detail {
COLONY_INLINE uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
COLONY_INLINE float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
}  // namespace detail

struct Half {
  uint16_t bits = 0;
  Half() = default;
  COLONY_HOST_DEVICE Half(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a number type
  COLONY_HOST_DEVICE operator float() const { return to_float(bits); }
  static COLONY_HOST_DEVICE Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }

  static COLONY_INLINE uint16_t from_float(float f) {
    uint32_t x = detail::float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // Inf or NaN: keep NaN quiet and non-zero.
      return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: Inf
    if (abs < 0x38800000u) {  // below 2^-14: subnormal half (or zero)
      // Add 0.5 (as a float with the subnormal grid's unit) so the FPU rounds to nearest even.
      float sub = detail::bits_float(abs) + 0.5f;
      return static_cast<uint16_t>(sign | (detail::float_bits(sub) - 0x3f000000u));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return static_cast<uint16_t>(sign | (abs >> 13));
  }
  static COLONY_INLINE float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1fu) return detail::bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      // Subnormal: value = mant * 2^-24, exact in float.
      float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
      return sign ? -v : v;
    }
    return detail::bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  COLONY_HOST_DEVICE BFloat16(float f) : bits(from_float(f)) {}  // NOLINT
  COLONY_HOST_DEVICE operator float() const { return detail::bits_float(static_cast<uint32_t>(bits) << 16); }
  static COLONY_HOST_DEVICE BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  static COLONY_INLINE uint16_t from_float(float f) {
    uint32_t x = detail::float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>((x + rounding_bias) >> 16);
  }
};

}  // namespace colony
