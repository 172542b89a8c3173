// The float32 row loops between attention's AMX products under bfloat16 (attention.cc's
// forward_amx and backward_amx): the online softmax's row max and exponentials, and the score
// gradient dS = P (dP - D), and the rounding of P and dS to bfloat16. At a GPT's 64 x 32 heads these loops, not the tiles, were most of
// attention's own time (2026-12-05 profile, docs/benchmarks.md), so they come in two copies: AVX2
// (the build's baseline) and AVX-512 (16 lanes, attention_rows_avx512.cc, built with
// -march=x86-64-v4), chosen at run time like activation_simd.h's. Both compute exp with
// vec_math.h's, which gives the same value lane for lane at either width; only the order of a
// row's sum differs.
#pragma once

#include <cstdint>

namespace colony::kernels::cpu {

// One ISA's loops over a row of n floats (any n >= 0; a tail narrower than a vector is masked).
struct AttentionRowFns {
  const char* isa;  // "avx2", "avx512"
  // max(init, s[0], ..., s[n - 1]) (NaN-free scores: -inf where masked).
  float (*row_max)(const float* s, int64_t n, float init);
  // s[c] = exp(s[c] - shift) in place, exactly 0 where s[c] - shift < -87.33 (the result would be
  // under FLT_MIN; -inf scores included); returns the sum of the results.
  float (*exp_row)(float* s, int64_t n, float shift);
  // ds[c] = p[c] * (ds[c] - d) in place: dP becomes dS.
  void (*score_grad_row)(const float* p, float* ds, int64_t n, float d);
  // dst[c] = src[c] rounded to bfloat16 bits (to nearest even, NaN quiet): P and dS before their
  // products. The AVX2 rows were half the backward's own time after the loops above went to 16 lanes.
  void (*round_row)(const float* src, int64_t n, uint16_t* dst);

  // The whole-head kernels' rows (attention_short_amx.h): every key of a row at once.
  // Forward: x[c] = scale * s[c] (+ mask[c], mask may be null) for c < n; *row_max = max(x) (-inf
  // for none); p[c] = round(exp(x[c] - max)) (0 for -inf scores, and for all of them when every
  // one is -inf), p[c] = 0 for n <= c < width. Returns the sum of the unrounded weights (0 when
  // every score is -inf).
  float (*softmax_row)(const float* s, int64_t n, int64_t width, float scale, const float* mask, uint16_t* p,
                       float* row_max);
  // Backward, with the row's lse and D = rowsum(dO * O): w[c] = exp(scale * s[c] (+ mask[c]) - lse),
  // p[c] = round(w[c]), ds[c] = round(w[c] * (dp[c] - d)) for c < n (all 0 when lse is -inf: a
  // fully masked row); both 0 for n <= c < width.
  void (*softmax_grad_row)(const float* s, const float* dp, int64_t n, int64_t width, float scale, const float* mask,
                           float lse, float d, uint16_t* p, uint16_t* ds);
  // dst[c] = round(factor * v[c]) for c < n: outputs and gradients written back.
  void (*scale_round_row)(const float* v, int64_t n, float factor, uint16_t* dst);
  // sum_c a[c] b[c] over bfloat16 rows, in float32 (D = rowsum(dO * O)).
  float (*dot_bf16_row)(const uint16_t* a, const uint16_t* b, int64_t n);
};

namespace avx2 {
const AttentionRowFns& attention_row_fns();
}
namespace avx512 {  // built with -march=x86-64-v4 (attention_rows_avx512.cc); call only where the CPU has it
const AttentionRowFns& attention_row_fns();
}

// avx512's where active_cpu_isa() allows it, else avx2's.
const AttentionRowFns& active_attention_row_fns();

}  // namespace colony::kernels::cpu
