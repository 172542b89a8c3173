// Contiguous rows of bfloat16 in AVX2 (the baseline ISA, so every CPU runs the same code): float32
// rounded to bfloat16 (the direct convolution's output planes, attention's weights and score
// gradients on its AMX path) and bfloat16 widened to float32, and ReLU and its gradient on
// bfloat16 bits.
// Each gives bit for bit what the scalar loops over BFloat16 (half.h) give: rounding to nearest
// even with a NaN kept quiet (its 0x40 bit set); widening is exact; ReLU selects an element or 0,
// so only a NaN's quiet bit can change. GCC left those scalar loops scalar (BFloat16::from_float's
// NaN branch); under LeNet's `--amp bf16` (batch 32, Intel Xeon, perf) the casts were 7.5 % of
// the step and ReLU's forward and backward 4.6 % (docs/benchmarks.md, "LeNet under bfloat16
// autocast on AMX").
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/common/half.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

namespace colony::kernels::cpu {

// dst[i] = round(src[i] + add) (Add: else round(src[i])), eight at a time.
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

// dst[i] = src[i] as float32 (exact), eight at a time.
inline void widen_row_from_bf16(const BFloat16* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  for (; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

// The two above over n contiguous elements, split over the pool (autocast's casts, convolution's
// widened passes).
inline void round_to_bf16_parallel(const float* src, int64_t n, BFloat16* dst) {
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { round_row_to_bf16<false>(src + b, e - b, 0.0f, dst + b); });
}
inline void widen_from_bf16_parallel(const BFloat16* src, int64_t n, float* dst) {
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { widen_row_from_bf16(src + b, e - b, dst + b); });
}

namespace bf16_rows_detail {

// All ones in the 16-bit lanes whose bfloat16 is a NaN, and in those that are <= 0 (+-0 and the
// negative numbers, as signed 16-bit integers at most 0, NaNs excluded).
inline __m256i nan_lanes(__m256i x) {
  return _mm256_cmpgt_epi16(_mm256_and_si256(x, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x7f80));
}
inline __m256i at_most_zero_lanes(__m256i x, __m256i nan) {
  return _mm256_andnot_si256(nan, _mm256_cmpgt_epi16(_mm256_set1_epi16(1), x));
}
inline bool is_nan(uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }
inline bool at_most_zero(uint16_t b) { return !is_nan(b) && (b == 0 || (b & 0x8000u) != 0); }
inline uint16_t quieted(uint16_t b) { return is_nan(b) ? static_cast<uint16_t>(b | 0x40u) : b; }

}  // namespace bf16_rows_detail

// y[i] = x[i] <= 0 ? 0 : x[i] (kernels/common/elementwise_functors.h's relu; a NaN passes, quiet),
// sixteen at a time. y may be x.
inline void relu_row_bf16(const BFloat16* x, int64_t n, BFloat16* y) {
  using namespace bf16_rows_detail;  // NOLINT(build/namespaces)
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i nan = nan_lanes(v);
    const __m256i kept = _mm256_or_si256(v, _mm256_and_si256(nan, _mm256_set1_epi16(0x40)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_andnot_si256(at_most_zero_lanes(v, nan), kept));
  }
  for (; i < n; ++i) y[i] = BFloat16::from_bits(at_most_zero(x[i].bits) ? 0 : quieted(x[i].bits));
}

// out[i] = saved[i] <= 0 ? 0 : grad[i] (activation_grad_fn<Relu>; saved is relu's output), sixteen
// at a time. out may be grad or saved.
inline void relu_grad_row_bf16(const BFloat16* grad, const BFloat16* saved, int64_t n, BFloat16* out) {
  using namespace bf16_rows_detail;  // NOLINT(build/namespaces)
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i g = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grad + i));
    const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(saved + i));
    const __m256i kept = _mm256_or_si256(g, _mm256_and_si256(nan_lanes(g), _mm256_set1_epi16(0x40)));
    const __m256i zero = at_most_zero_lanes(s, nan_lanes(s));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_andnot_si256(zero, kept));
  }
  for (; i < n; ++i) out[i] = BFloat16::from_bits(at_most_zero(saved[i].bits) ? 0 : quieted(grad[i].bits));
}

}  // namespace colony::kernels::cpu
