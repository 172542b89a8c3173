// attention_rows.h's loops, written once over vec_math.h's ISA trait. Not a normal header: a file
// defines COLONY_ATTENTION_ROWS_ISA (the namespace of its copy, avx2 or avx512) and
// COLONY_ATTENTION_ROWS_TRAIT (vec::Avx2 or vec::Avx512), then includes this, which defines that
// copy's attention_row_fns(). Everything else has internal linkage (see vec_math.h).
#if !defined(COLONY_ATTENTION_ROWS_ISA) || !defined(COLONY_ATTENTION_ROWS_TRAIT)
#error "define COLONY_ATTENTION_ROWS_ISA and COLONY_ATTENTION_ROWS_TRAIT before including attention_rows_kernels.h"
#endif

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/attention_rows.h"
#include "kernels/cpu/vec_math.h"
#if !defined(__AVX512F__)
#include "kernels/cpu/bf16_rows.h"  // inline AVX2 code: never in the AVX-512 copy's object
#endif

namespace colony::kernels::cpu::COLONY_ATTENTION_ROWS_ISA {
namespace {

using I = vec::COLONY_ATTENTION_ROWS_TRAIT;
using V = I::V;
constexpr int64_t kLanes = I::kLanes;

// The lanes of v summed, and their max with init, as trees (halves added to halves): a row of
// attention is only 2 to 16 vectors long, and summing the 16 lanes one after the other made the
// AVX-512 exp_row spend more time on its sum than on its exponentials (perf, 2026-12-05).
#if defined(__AVX512F__)
inline float lane_sum(V v) { return _mm512_reduce_add_ps(v); }
inline float lane_max(V v, float init) {
  const float m = _mm512_reduce_max_ps(v);
  return m > init ? m : init;
}
#else
inline __m128 halves(__m256 v) { return _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)); }
inline float lane_sum(V v) {
  __m128 x = halves(v);
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}
inline float lane_max(V v, float init) {
  __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  x = _mm_max_ss(x, _mm_movehdup_ps(x));
  const float m = _mm_cvtss_f32(x);
  return m > init ? m : init;
}
#endif

float row_max(const float* s, int64_t n, float init) {
  V mx = I::set1(init);
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) mx = I::max(I::load(s + c), mx);
  float m = lane_max(mx, init);
  for (; c < n; ++c) m = s[c] > m ? s[c] : m;
  return m;
}

// e^x, and exactly 0 below kTinyScore, where it would be under FLT_MIN. Not for accuracy (such
// weights are < 1e-38 of the row's largest) but for speed: a denormal or underflowing result
// costs a microcode assist on Intel cores, and every masked score (-inf: the upper half of a
// causal row) gave one. Through vec_math.h's exp they made exp_row 4x slower than the whole
// AVX2 loop it replaced (perf, gpt_cpu --amp bf16, 2026-12-05).
constexpr float kTinyScore = -87.33f;  // e^-87.33 = 1.2e-38, just above FLT_MIN

inline V weight(V x) {
  const V lo = I::set1(kTinyScore);
  return I::select(I::lt(x, lo), I::set1(0.0f), vec::exp<I>(I::max(x, lo)));
}

float exp_row(float* s, int64_t n, float shift) {
  const V sh = I::set1(shift);
  V sum = I::set1(0.0f);
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    const V p = weight(I::sub(I::load(s + c), sh));
    I::store(s + c, p);
    sum = I::add(sum, p);
  }
  if (c < n) {  // masked lanes read as 0, their exp(-shift) is never stored nor summed
    const int64_t t = n - c;
    const V p = weight(I::sub(I::load_n(s + c, t), sh));
    I::store_n(s + c, p, t);
    sum = I::add(sum, I::load_n(s + c, t));
  }
  return lane_sum(sum);
}

void score_grad_row(const float* p, float* ds, int64_t n, float d) {
  const V dv = I::set1(d);
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) I::store(ds + c, I::mul(I::load(p + c), I::sub(I::load(ds + c), dv)));
  if (c < n) {
    const int64_t t = n - c;
    I::store_n(ds + c, I::mul(I::load_n(p + c, t), I::sub(I::load_n(ds + c, t), dv)), t);
  }
}

#if defined(__AVX512F__) && defined(__AVX512BW__)
// 16 at a time; the tail under a mask (AVX512BW's 16-bit masked store). bf16_rows.h's steps at
// twice the width: to nearest even, NaN kept quiet (BFloat16(float)'s rounding).
void round_row(const float* src, int64_t n, uint16_t* dst) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff), quiet = _mm512_set1_epi32(0x40);
  auto round16 = [&](__m512 v) {
    const __m512i x = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(x, 16);
    const __m512i rounded =
        _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, bias), _mm512_and_si512(high, one)), 16);
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, abs_mask), inf);
    return _mm512_cvtepi32_epi16(_mm512_mask_or_epi32(rounded, nan, high, quiet));
  };
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c), round16(_mm512_loadu_ps(src + c)));
  }
  if (c < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - c)) - 1u);
    _mm256_mask_storeu_epi16(dst + c, m, round16(_mm512_maskz_loadu_ps(m, src + c)));
  }
}
#else
// bf16_rows.h's AVX2 rows (the baseline ISA: this copy is attention_rows.cc's).
void round_row(const float* src, int64_t n, uint16_t* dst) {
  round_row_to_bf16<false>(src, n, 0.0f, reinterpret_cast<BFloat16*>(dst));
}
#endif

#define COLONY_ATTENTION_ROWS_STR2(s) #s
#define COLONY_ATTENTION_ROWS_STR(s) COLONY_ATTENTION_ROWS_STR2(s)
constexpr AttentionRowFns kFns = {COLONY_ATTENTION_ROWS_STR(COLONY_ATTENTION_ROWS_ISA), row_max, exp_row,
                                  score_grad_row, round_row};
#undef COLONY_ATTENTION_ROWS_STR
#undef COLONY_ATTENTION_ROWS_STR2

}  // namespace

const AttentionRowFns& attention_row_fns() { return kFns; }

}  // namespace colony::kernels::cpu::COLONY_ATTENTION_ROWS_ISA
