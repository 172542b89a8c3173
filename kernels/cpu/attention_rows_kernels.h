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
#include "kernels/cpu/isa_dispatch.h"
#include "kernels/cpu/vec_math.h"
#if !defined(__AVX512F__)
#include "kernels/cpu/bf16_rows.h"  // inline AVX2 code: never in the AVX-512 copy's object
#endif

namespace colony::kernels::cpu::COLONY_ATTENTION_ROWS_ISA {
namespace {

using I = vec::COLONY_ATTENTION_ROWS_TRAIT;
using V = I::V;
constexpr int64_t kLanes = I::kLanes;

// The lanes of v summed, and their max with init (vec_math.h's trees).
inline float lane_sum(V v) { return I::reduce_add(v); }
inline float lane_max(V v, float init) {
  const float m = I::reduce_max(v);
  return m > init ? m : init;
}

float row_max(const float* s, int64_t n, float init) {
  V mx = I::set1(init);
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) mx = I::max(I::load(s + c), mx);
  float m = lane_max(mx, init);
  for (; c < n; ++c) m = s[c] > m ? s[c] : m;
  return m;
}

// e^x, exactly 0 where it would be under FLT_MIN (vec_math.h's exp_or_zero: masked scores are -inf).
inline V weight(V x) { return vec::exp_or_zero<I>(x); }

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
// 16 floats to bfloat16 bits: bf16_rows.h's steps at twice the width, to nearest even, NaN kept
// quiet (BFloat16(float)'s rounding).
inline __m256i round16(__m512 v) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff), quiet = _mm512_set1_epi32(0x40);
  const __m512i x = _mm512_castps_si512(v);
  const __m512i high = _mm512_srli_epi32(x, 16);
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, bias), _mm512_and_si512(high, one)), 16);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, abs_mask), inf);
  return _mm512_cvtepi32_epi16(_mm512_mask_or_epi32(rounded, nan, high, quiet));
}

// The first t (1 to 16) lanes of v rounded to dst; the tail under a mask (AVX512BW's 16-bit
// masked store).
inline void put_bf16(V v, uint16_t* dst, int64_t t) {
  if (t == kLanes) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), round16(v));
  } else {
    _mm256_mask_storeu_epi16(dst, static_cast<__mmask16>((1u << t) - 1u), round16(v));
  }
}

// The first t (1 to 16) bfloat16 at p widened, the rest 0.
inline V widen_bf16(const uint16_t* p, int64_t t) {
  const __m256i bits = t == kLanes ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                   : _mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << t) - 1u), p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

void round_row(const float* src, int64_t n, uint16_t* dst) {
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) put_bf16(I::load(src + c), dst + c, 16);
  if (c < n) put_bf16(I::load_n(src + c, n - c), dst + c, n - c);
}
#else
// bf16_rows.h's AVX2 rows (the baseline ISA: this copy is attention_rows.cc's).
void round_row(const float* src, int64_t n, uint16_t* dst) {
  round_row_to_bf16<false>(src, n, 0.0f, reinterpret_cast<BFloat16*>(dst));
}

inline void put_bf16(V v, uint16_t* dst, int64_t t) {
  alignas(32) float x[kLanes];
  _mm256_store_ps(x, v);
  round_row(x, t, dst);
}

inline V widen_bf16(const uint16_t* p, int64_t t) {
  uint16_t bits[kLanes] = {};
  for (int64_t i = 0; i < t; ++i) bits[i] = p[i];
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bits));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
#endif

// x = scale * s (+ mask), its max over the row's n scores.
inline V scaled_score(const float* s, const float* mask, V scale, int64_t c, int64_t t) {
  const V x = I::mul(t == kLanes ? I::load(s + c) : I::load_n(s + c, t), scale);
  if (mask == nullptr) return x;
  return I::add(x, t == kLanes ? I::load(mask + c) : I::load_n(mask + c, t));
}

inline void zero_bf16(uint16_t* p, int64_t from, int64_t to) {
  for (int64_t c = from; c < to; ++c) p[c] = 0;
}

// Lanes [0, t) of a vector: the tail of a row under I::select (1 <= t <= kLanes).
inline I::M first_lanes(int64_t t) { return I::first(t); }

// Two passes over the scores (the max, then the weights), x computed in each rather than stored
// between them, and the tail's lanes selected in registers: a tail stored under a mask and read
// back by scalar loads (a causal row's last keys, every row) stalled on store forwarding and made
// this row a third of the forward's time (perf, gpt_cpu --amp bf16, 2026-12-05).
float softmax_row(const float* s, int64_t n, int64_t width, float scale, const float* mask, uint16_t* p,
                  float* max_out) {
  const V sc = I::set1(scale), ninf = I::set1(-__builtin_inff());
  V mx = ninf;
  for (int64_t c = 0; c < n; c += kLanes) {
    const int64_t t = n - c < kLanes ? n - c : kLanes;
    const V x = scaled_score(s, mask, sc, c, t);
    mx = I::max(t == kLanes ? x : I::select(first_lanes(t), x, ninf), mx);
  }
  const float m = lane_max(mx, -__builtin_inff());
  *max_out = m;
  // While every score is -inf the row has nothing to weigh: p = 0 (not exp(nan)).
  const V sh = I::set1(m == -__builtin_inff() ? 0.0f : m), zero = I::set1(0.0f);
  V sum = zero;
  for (int64_t c = 0; c < n; c += kLanes) {
    const int64_t t = n - c < kLanes ? n - c : kLanes;
    const V w = weight(I::sub(scaled_score(s, mask, sc, c, t), sh));
    sum = I::add(sum, t == kLanes ? w : I::select(first_lanes(t), w, zero));  // lanes past n weigh exp(-shift)
    put_bf16(w, p + c, t);
  }
  zero_bf16(p, n, width);
  return lane_sum(sum);
}

void softmax_grad_row(const float* s, const float* dp, int64_t n, int64_t width, float scale, const float* mask,
                      float lse, float d, uint16_t* p, uint16_t* ds) {
  if (lse == -__builtin_inff()) n = 0;  // every key masked: no weights, no gradients
  const V sc = I::set1(scale), sh = I::set1(lse), dv = I::set1(d);
  int64_t c = 0;
  for (; c < n; c += kLanes) {
    const int64_t t = n - c < kLanes ? n - c : kLanes;
    const V w = weight(I::sub(scaled_score(s, mask, sc, c, t), sh));
    const V g = I::mul(w, I::sub(t == kLanes ? I::load(dp + c) : I::load_n(dp + c, t), dv));
    put_bf16(w, p + c, t);
    put_bf16(g, ds + c, t);
  }
  zero_bf16(p, n, width);
  zero_bf16(ds, n, width);
}

void scale_round_row(const float* v, int64_t n, float factor, uint16_t* dst) {
  const V f = I::set1(factor);
  for (int64_t c = 0; c < n; c += kLanes) {
    const int64_t t = n - c < kLanes ? n - c : kLanes;
    put_bf16(I::mul(t == kLanes ? I::load(v + c) : I::load_n(v + c, t), f), dst + c, t);
  }
}

float dot_bf16_row(const uint16_t* a, const uint16_t* b, int64_t n) {
  V acc = I::set1(0.0f);
  for (int64_t c = 0; c < n; c += kLanes) {
    const int64_t t = n - c < kLanes ? n - c : kLanes;
    acc = I::add(acc, I::mul(widen_bf16(a + c, t), widen_bf16(b + c, t)));
  }
  return lane_sum(acc);
}

constexpr AttentionRowFns kFns = {COLONY_ISA_COPY_NAME(COLONY_ATTENTION_ROWS_ISA),
                                  row_max,
                                  exp_row,
                                  score_grad_row,
                                  round_row,
                                  softmax_row,
                                  softmax_grad_row,
                                  scale_round_row,
                                  dot_bf16_row};

}  // namespace

const AttentionRowFns& attention_row_fns() { return kFns; }

}  // namespace colony::kernels::cpu::COLONY_ATTENTION_ROWS_ISA
