#include "kernels/common/random.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/common/random_fill.h"
#include "kernels/cpu/parallel.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace colony::kernels {
namespace {

#if defined(__AVX2__)
// philox4x32_10 (kernels/common/philox.h) for 8 consecutive blocks at once, lane l holding block
// first + l, in AVX2 (the build's baseline ISA): the same rounds, each 32 x 32 -> 64-bit product as
// two vpmuludq over the even and odd lanes. A float32 uniform fill (rand, dropout's mask) spent 13 ms
// per 4M values on the scalar rounds, 4 here (AMD EPYC, 1 thread).
inline void mulhilo8(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

inline void philox8(uint64_t seed, uint64_t first, __m256i words[4]) {
  // The counters' low words, and their high words plus the carry where first + l wraps the low one.
  const __m256i first_lo = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(first)));
  const __m256i lo = _mm256_add_epi32(first_lo, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  const __m256i wrapped = _mm256_cmpgt_epi32(_mm256_xor_si256(first_lo, sign), _mm256_xor_si256(lo, sign));
  __m256i c0 = lo;
  __m256i c1 = _mm256_sub_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(first >> 32))), wrapped);
  __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int round = 0; round < 10; ++round) {
    __m256i hi0, lo0, hi1, lo1;
    mulhilo8(c0, m0, hi0, lo0);
    mulhilo8(c2, m1, hi1, lo1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  words[0] = c0;
  words[1] = c1;
  words[2] = c2;
  words[3] = c3;
}

// Float32 uniforms on [a, b) for blocks [begin, end) (32 values per 8 blocks) as random_value_from
// computes them: word >> 8 times 2^-24 (philox_uniform_float, exact), then a + (b - a) u, which
// GCC contracts to one fused multiply-add here as in the scalar expression (C++'s default
// -ffp-contract=fast; random_ops_test compares the bits over [-2, 1.3)). Returns the first block not
// filled (fewer than 8 left).
int64_t uniform_float_blocks(float* p, int64_t begin, int64_t end, uint64_t seed, uint64_t offset, float a,
                             float b_minus_a) {
  const __m256 scale = _mm256_set1_ps(1.0f / 16777216.0f);
  const __m256 va = _mm256_set1_ps(a), vw = _mm256_set1_ps(b_minus_a);
  int64_t k = begin;
  for (; k + 8 <= end; k += 8) {
    __m256i w[4];
    philox8(seed, offset + static_cast<uint64_t>(k), w);
    __m256 f[4];
    for (int j = 0; j < 4; ++j) {
      const __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w[j], 8)), scale);
      f[j] = _mm256_add_ps(va, _mm256_mul_ps(vw, u));
    }
    // Element 4 l + j is f[j]'s lane l: a 4 x 8 transpose.
    const __m256 t0 = _mm256_unpacklo_ps(f[0], f[1]), t1 = _mm256_unpackhi_ps(f[0], f[1]);
    const __m256 t2 = _mm256_unpacklo_ps(f[2], f[3]), t3 = _mm256_unpackhi_ps(f[2], f[3]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    float* v = p + k * 4;
    _mm256_storeu_ps(v, _mm256_permute2f128_ps(u0, u1, 0x20));
    _mm256_storeu_ps(v + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
    _mm256_storeu_ps(v + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
    _mm256_storeu_ps(v + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
  }
  return k;
}
#endif

}  // namespace

void FillRandom::cpu(DType dtype, void* out, int64_t n, bool normal, double a, double b, const PhiloxArgs& philox) {
  if (philox.seed_ptr != nullptr) {  // Generator::philox_args never hands these to the CPU
    throw std::logic_error("fill_random: a Philox state in device memory reached the CPU kernel");
  }
  const uint64_t seed = philox.seed, offset = philox.offset;
  // Block by block: each Philox block (and each Box-Muller pair's log) is computed once for the 2 or
  // 4 elements it gives, not once per element; the values are random_value_at's, bit for bit.
  COLONY_DISPATCH_FLOATING(dtype, "random", [&] {
    scalar_t* p = static_cast<scalar_t*>(out);
    constexpr bool is_double = sizeof(scalar_t) == 8;
    const int per_block = random_elements_per_block(normal, is_double);
    const int64_t blocks = (n + per_block - 1) / per_block;
    cpu::parallel_for(blocks, (1 << 14) / per_block, [&](int64_t begin, int64_t end) {
      int64_t k = begin;
#if defined(__AVX2__)
      if constexpr (std::is_same_v<scalar_t, float>) {
        // Whole blocks only: the last one may hold fewer than 4 elements.
        if (!normal) {
          k = uniform_float_blocks(reinterpret_cast<float*>(p), begin, std::min(end, n / 4), seed, offset,
                                   static_cast<float>(a), static_cast<float>(b - a));
        }
      }
#endif
      for (; k < end; ++k) {
        const Philox4 r = philox4x32_10(seed, offset + static_cast<uint64_t>(k));
        scalar_t* v = p + k * per_block;
        const int count = static_cast<int>(std::min<int64_t>(per_block, n - k * per_block));
        if (normal) {
          double radius, theta;
          random_polar_of_block(r, radius, theta);
          v[0] = random_value_from<scalar_t>(true, a, b, radius * cos(theta));
          if (count > 1) v[1] = random_value_from<scalar_t>(true, a, b, radius * sin(theta));
        } else {
          for (int j = 0; j < count; ++j) {
            v[j] = random_value_from<scalar_t>(false, a, b, random_uniform_in_block(r, j, is_double));
          }
        }
      }
    });
  });
}

}  // namespace colony::kernels
