// 32-byte SIMD vectors for the hand-tiled CPU kernels, through GCC/Clang vector extensions rather
// than intrinsics: under the project's -march=x86-64-v3 each is one AVX2 register (FMA contracts
// a * b + c), and the same code still compiles, as narrower registers, for other targets.
#pragma once

#include <cstdint>
#include <cstring>

// Fully unrolled tile loops keep their accumulators in registers (GCC -O2 does not unroll them).
#define COLONY_UNROLL _Pragma("GCC unroll 16")

namespace colony::kernels::cpu::simd {

typedef float Float8 __attribute__((vector_size(32)));
typedef double Double4 __attribute__((vector_size(32)));
typedef int32_t Int32x8 __attribute__((vector_size(32)));
typedef int64_t Int64x4 __attribute__((vector_size(32)));

template <typename T> struct VecOf;
template <> struct VecOf<float> {
  using type = Float8;
  using mask = Int32x8;  // what comparing two Float8 gives: all ones where true
};
template <> struct VecOf<double> {
  using type = Double4;
  using mask = Int64x4;
};
template <typename T> using Vec = typename VecOf<T>::type;
template <typename T> using Mask = typename VecOf<T>::mask;
template <typename T> constexpr int kLanes = static_cast<int>(sizeof(Vec<T>) / sizeof(T));

// Unaligned: rows of images start at arbitrary pixels.
template <typename T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename T>
inline void store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof(v));
}

inline Float8 splat(float x) { return Float8{x, x, x, x, x, x, x, x}; }
inline Double4 splat(double x) { return Double4{x, x, x, x}; }
inline Int32x8 splat(int32_t x) { return Int32x8{x, x, x, x, x, x, x, x}; }
inline Int64x4 splat(int64_t x) { return Int64x4{x, x, x, x}; }

template <typename T>
inline T hsum(const Vec<T>& v) {
  T s = T(0);
  COLONY_UNROLL
  for (int i = 0; i < kLanes<T>; ++i) s += v[i];
  return s;
}

// sum(p[0, n)) with four vector accumulators: a plain loop is one dependent add per element
// (4 cycles each), 16 times slower on a 784-pixel plane.
template <typename T>
inline T sum(const T* p, int64_t n) {
  constexpr int L = kLanes<T>;
  Vec<T> acc[4] = {};
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    COLONY_UNROLL
    for (int k = 0; k < 4; ++k) acc[k] += load(p + i + k * L);
  }
  for (; i + L <= n; i += L) acc[0] += load(p + i);
  T s = hsum<T>((acc[0] + acc[1]) + (acc[2] + acc[3]));
  for (; i < n; ++i) s += p[i];
  return s;
}

// The even and the odd elements of the 2 * lanes elements a, b (a deinterleave).
inline Float8 evens(Float8 a, Float8 b) { return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14); }
inline Float8 odds(Float8 a, Float8 b) { return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15); }
inline Double4 evens(Double4 a, Double4 b) { return __builtin_shufflevector(a, b, 0, 2, 4, 6); }
inline Double4 odds(Double4 a, Double4 b) { return __builtin_shufflevector(a, b, 1, 3, 5, 7); }

// The inverse: the first and second halves of a and b's elements alternated (a0, b0, a1, b1, ...).
inline Float8 interleave_low(Float8 a, Float8 b) { return __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11); }
inline Float8 interleave_high(Float8 a, Float8 b) { return __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15); }
inline Double4 interleave_low(Double4 a, Double4 b) { return __builtin_shufflevector(a, b, 0, 4, 1, 5); }
inline Double4 interleave_high(Double4 a, Double4 b) { return __builtin_shufflevector(a, b, 2, 6, 3, 7); }

}  // namespace colony::kernels::cpu::simd
