// Rows of float32 rounded to bfloat16 in bulk, eight at a time in AVX2 (the baseline ISA), with
// BFloat16::from_float's rounding: the direct convolution's output planes (conv.cc) and attention's
// weights and score gradients on the AMX path (attention.cc).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/common/half.h"

namespace colony::kernels::cpu {

// dst[i] = round(src[i] + add) (Add: else round(src[i])), BFloat16::from_float's rounding (to
// nearest even, NaN kept quiet) eight at a time in AVX2: the scalar loop, which GCC left scalar,
// took 3.3 % of a LeNet --amp bf16 step (perf, Intel Xeon) in crop_planes and grid_to_planes.
template <bool Add>
inline void round_row_to_bf16(const float* src, int64_t n, float add, BFloat16* dst) {
  int64_t i = 0;
  const __m256 addend = _mm256_set1_ps(add);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff), quiet = _mm256_set1_epi32(0x40);
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(src + i);
    if constexpr (Add) v = _mm256_add_ps(v, addend);
    const __m256i x = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i lsb = _mm256_and_si256(high, one);
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, bias), lsb), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);
    const __m256i out = _mm256_blendv_epi8(rounded, _mm256_or_si256(high, quiet), nan);
    // 32-bit lanes to 16 bits (all at most 0xffff), lane halves back in order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(out, out), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) dst[i] = BFloat16(Add ? src[i] + add : src[i]);
}

}  // namespace colony::kernels::cpu
