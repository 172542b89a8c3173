// Philox4x32-10 counter-based generator (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11). Block `counter` under key `seed` yields four independent 32-bit words, so
// element i of a random tensor can be computed anywhere (any thread, CPU or GPU) from
// (seed, offset + i / 4) alone.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common/macros.h"

namespace colony::kernels {

struct Philox4 {
  uint32_t v[4];
};

COLONY_INLINE void philox_mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

COLONY_INLINE Philox4 philox4x32_10(uint64_t seed, uint64_t counter) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, c0, hi0, lo0);
    philox_mulhilo(0xCD9E8D57u, c2, hi1, lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// Uniform in [0, 1) with 24 random bits (exact in float).
COLONY_INLINE float philox_uniform_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
// Uniform in [0, 1) with 53 random bits from two words.
COLONY_INLINE double philox_uniform_double(uint32_t a, uint32_t b) {
  uint64_t x = (static_cast<uint64_t>(a) << 21) ^ (b >> 11);
  return static_cast<double>(x & ((1ULL << 53) - 1)) * (1.0 / 9007199254740992.0);
}

// The random value for element `i` of a tensor drawn from block `offset` on: uniform [0,1) draws use
// one 32-bit word per element (float) or two (double); normals use Box-Muller on a pair of words.
// Every backend calls these: uniform draws agree bit for bit between CPU and CUDA, normals to the
// last-ulp differences of the two math libraries' log/sin/cos. Element i lies in block
// offset + i / random_elements_per_block, at place i % random_elements_per_block; the CPU kernel
// computes each block once for all its elements (the *_in_block functions), a CUDA thread the one
// element it stores (the *_at functions), the same values either way.
COLONY_INLINE int random_elements_per_block(bool normal, bool double_precision) {
  return normal || double_precision ? 2 : 4;
}

// The uniform draw of place j of block r.
COLONY_INLINE double random_uniform_in_block(const Philox4& r, int j, bool double_precision) {
  if (double_precision) return philox_uniform_double(r.v[2 * j], r.v[2 * j + 1]);
  return philox_uniform_float(r.v[j]);
}

// Box-Muller's radius and angle of block r: places 0 and 1 are radius * cos(theta) and radius * sin(theta).
COLONY_INLINE void random_polar_of_block(const Philox4& r, double& radius, double& theta) {
  double u1 = philox_uniform_double(r.v[0], r.v[1]);
  double u2 = philox_uniform_double(r.v[2], r.v[3]);
  radius = sqrt(-2.0 * log(1.0 - u1));  // 1 - u1 is in (0, 1]: log never sees 0
  theta = 6.283185307179586 * u2;
}

COLONY_INLINE double random_uniform_at(uint64_t seed, uint64_t offset, int64_t i, bool double_precision) {
  const int per_block = random_elements_per_block(false, double_precision);
  Philox4 r = philox4x32_10(seed, offset + static_cast<uint64_t>(i) / per_block);
  return random_uniform_in_block(r, static_cast<int>(i % per_block), double_precision);
}

COLONY_INLINE double random_normal_at(uint64_t seed, uint64_t offset, int64_t i) {
  // Element pairs (2j, 2j+1) share one block: cos and sin of the same Box-Muller draw.
  Philox4 r = philox4x32_10(seed, offset + static_cast<uint64_t>(i) / 2);
  double radius, theta;
  random_polar_of_block(r, radius, theta);
  return (i % 2 == 0) ? radius * cos(theta) : radius * sin(theta);
}

// Blocks a tensor of n elements consumes (the Generator advances its offset by this much).
COLONY_INLINE uint64_t random_blocks_needed(int64_t n) { return static_cast<uint64_t>((n + 1) / 2); }

}  // namespace colony::kernels
