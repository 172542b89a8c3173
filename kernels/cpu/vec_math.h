// Branch-free float32 exp, log (log2, log10), sigmoid, tanh and the Gaussian functions GELU needs, over AVX2+FMA (__m256, the build's
// x86-64-v3 baseline) and AVX-512 (__m512, only where the including file is built with
// -march=x86-64-v4: activation_simd_avx512.cc). The math is written once over an ISA trait (Avx2,
// Avx512: the handful of intrinsics it uses) so both widths run the same operations in the same
// order and give the same results lane for lane.
//
// Everything here has internal linkage (an unnamed namespace): an inline function compiled with
// -march=x86-64-v4 must never be the copy the linker keeps for the AVX2 code
// (tests/kernels/small_gemm_isa_symbols_test.sh checks the AVX-512 objects).
//
// NaN propagates: every clamp is max(bound, x) / min(bound, x), and vmaxps / vminps return their
// second operand when either is NaN.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace colony::kernels::cpu::vec {
namespace {

#if defined(__AVX2__) && defined(__FMA__)
struct Avx2 {
  using V = __m256;
  using M = __m256;  // all-ones lanes where a comparison holds
  static constexpr int kLanes = 8;
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // The first n (< kLanes) lanes; the others read as 0 and are not written.
  static __m256i tail_mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V load_n(const float* p, int64_t n) { return _mm256_maskload_ps(p, tail_mask(n)); }
  static void store_n(float* p, V v, int64_t n) { _mm256_maskstore_ps(p, tail_mask(n), v); }
  // bfloat16 bits (the low 16 of each 32-bit lane of an __m128i's eight) as float32, exactly, and
  // float32 rounded to bfloat16 bits as BFloat16::from_float does (kernels/common/half.h: nearest
  // even, a NaN kept quiet by its 0x40 bit, denormals kept), eight at a time.
  static V widen_bf16(__m128i bits) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16)); }
  static __m128i round_bf16(V v) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    const __m256i out = _mm256_blendv_epi8(rounded, _mm256_or_si256(high, _mm256_set1_epi32(0x40)), nan);
    // 32-bit lanes to 16 bits (all at most 0xffff), the two 128-bit halves back in order.
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(out, out), 0x08));
  }
  static V load_bf16(const uint16_t* p) { return widen_bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static void store_bf16(uint16_t* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), round_bf16(v)); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }    // a * b + c, one rounding
  static V fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }    // a * b - c
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a * b
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V copysign(V mag, V sign) {  // |mag| with sign's sign bit
    const V s = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sign));
  }
  static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static V select(M m, V if_true, V if_false) { return _mm256_blendv_ps(if_false, if_true, m); }
  static bool all(M m) { return _mm256_movemask_ps(m) == 0xFF; }  // the comparison held in every lane
  static M first(int64_t n) { return _mm256_castsi256_ps(tail_mask(n)); }  // lanes [0, n), 0 <= n <= 8
  // The lanes summed, and their max, as trees (halves with halves): a row of attention is 2 to 16
  // vectors long, and a sum lane after lane cost attention_rows' AVX-512 exp_row more than its
  // exponentials (perf, 2026-12-05).
  static float reduce_add(V v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
  }
  static float reduce_max(V v) {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
  }
  // p * 2^k for integer-valued k in [-150, 129], overflowing to inf and underflowing gradually:
  // two factors 2^(k/2) and 2^(k - k/2), each a normal float, so neither step leaves the exponent
  // range before the last rounding.
  static V ldexp(V p, V k) {
    __m256i ki = _mm256_cvtps_epi32(k);
    __m256i k1 = _mm256_srai_epi32(ki, 1);
    __m256i k2 = _mm256_sub_epi32(ki, k1);
    const __m256i bias = _mm256_set1_epi32(127);
    V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }
  // x = m 2^e with m in [0.5, 1) (e an integer, as a float), for normal x > 0: the exponent and
  // mantissa fields taken apart (denormals, zeros, negatives, infinities and NaNs are the caller's).
  static V frexp(V x, V* e) {
    const __m256i i = _mm256_castps_si256(x);
    *e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(i, 23), _mm256_set1_epi32(126)));
    return _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(i, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f000000)));
  }
};
#endif

#if defined(__AVX512F__)
struct Avx512 {
  using V = __m512;
  using M = __mmask16;
  static constexpr int kLanes = 16;
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static __mmask16 tail_mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static V load_n(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(tail_mask(n), p); }
  static void store_n(float* p, V v, int64_t n) { _mm512_mask_storeu_ps(p, tail_mask(n), v); }
  // Avx2's bfloat16 conversions (the same results), sixteen at a time.
  static V widen_bf16(__m256i bits) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)); }
  static __m256i round_bf16(V v) {
    const __m512i x = _mm512_castps_si512(v), high = _mm512_srli_epi32(x, 16), one = _mm512_set1_epi32(1);
    const __m512i biased = _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), _mm512_and_si512(high, one));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_cvtepi32_epi16(_mm512_mask_or_epi32(_mm512_srli_epi32(biased, 16), nan, high, _mm512_set1_epi32(0x40)));
  }
  static V load_bf16(const uint16_t* p) { return widen_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static void store_bf16(uint16_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), round_bf16(v)); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V copysign(V mag, V sign) {  // |mag| with sign's sign bit
    // vpternlogd 0xAC: bits of `sign` where s has them, of `mag` elsewhere.
    const __m512i s = _mm512_set1_epi32(static_cast<int>(0x80000000u));
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(s, _mm512_castps_si512(mag), _mm512_castps_si512(sign), 0xAC));
  }
  static V round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static V select(M m, V if_true, V if_false) { return _mm512_mask_blend_ps(m, if_false, if_true); }
  static bool all(M m) { return m == 0xFFFF; }
  static M first(int64_t n) { return tail_mask(n); }  // lanes [0, n), 0 <= n <= 16
  static float reduce_add(V v) { return _mm512_reduce_add_ps(v); }
  static float reduce_max(V v) { return _mm512_reduce_max_ps(v); }
  // vscalefps: p * 2^k with IEEE overflow and gradual underflow in one instruction.
  static V ldexp(V p, V k) { return _mm512_scalef_ps(p, k); }
  // Avx2's frexp, sixteen at a time (the same bit operations, so the same results).
  static V frexp(V x, V* e) {
    const __m512i i = _mm512_castps_si512(x);
    *e = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(i, 23), _mm512_set1_epi32(126)));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(i, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x3f000000)));
  }
};
#endif

// e^x 2^bias to about 1 ulp (Cephes expf's reduction and polynomial, S. L. Moshier: relative
// error 1.7e-7 peak over the whole range in its tests), exp(+inf) = inf, exp(-inf) = 0, denormal
// results where they are due. x = k ln2 + r, |r| <= ln2 / 2, with ln2 split in two (FMA keeps
// k * ln2_hi exact enough that r carries ~30 good bits); e^r = 1 + r + r^2 P(r), P of degree 5.
// bias (an integer in [0, 32]) scales the result by 2^bias exactly, for callers that would
// otherwise take e^x below FLT_MIN and lose its precision before multiplying it back up.
template <class I>
inline typename I::V exp(typename I::V x, typename I::V bias) {
  using V = typename I::V;
  // Beyond 88.8 the result overflows and below -130 it is under half the smallest denormal even
  // times 2^32; the clamps keep k + bias within [-188, 160], what ldexp takes.
  x = I::max(I::set1(-130.0f), I::min(I::set1(88.8f), x));
  V k = I::round(I::mul(x, I::set1(1.44269504088896341f)));
  V r = I::fnmadd(k, I::set1(0.693145751953125f), x);  // ln2_hi: ln2 to 16 bits
  r = I::fnmadd(k, I::set1(1.428606765330187e-6f), r);  // ln2_lo = ln2 - ln2_hi
  V p = I::set1(1.9875691500e-4f);
  p = I::fmadd(p, r, I::set1(1.3981999507e-3f));
  p = I::fmadd(p, r, I::set1(8.3334519073e-3f));
  p = I::fmadd(p, r, I::set1(4.1665795894e-2f));
  p = I::fmadd(p, r, I::set1(1.6666665459e-1f));
  p = I::fmadd(p, r, I::set1(5.0000001201e-1f));
  p = I::fmadd(p, I::mul(r, r), I::add(r, I::set1(1.0f)));
  return I::ldexp(p, I::add(k, bias));
}
template <class I>
inline typename I::V exp(typename I::V x) {
  return exp<I>(x, I::set1(0.0f));
}

// The natural, base-2 and base-10 logarithms (Cephes logf, log2f, log10f: S. L. Moshier; measured
// against float64 over every third positive float, denormals included: log 0.86 ulp, log2 1.30,
// log10 0.91, 2026-12-07). x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); log(1 + f) =
// f - f^2 / 2 + f^3 P(f), P of degree 8; the logarithms of 2^e are added in two parts (a short
// leading constant, exact in e * c, and the rest), last, where the result is largest. Denormal x
// are scaled by 2^23 first. As std::log: log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN
// stays NaN; log2 of a power of 2 is exact (f = 0).
template <class I>
inline typename I::V log_reduce(typename I::V x, typename I::V* e) {
  using V = typename I::V;
  const auto denormal = I::lt(x, I::set1(1.17549435e-38f));  // FLT_MIN
  V m = I::frexp(I::select(denormal, I::mul(x, I::set1(8388608.0f)), x), e);  // 2^23
  const auto low = I::lt(m, I::set1(0.707106781186547524f));
  *e = I::sub(*e, I::add(I::select(denormal, I::set1(23.0f), I::set1(0.0f)), I::select(low, I::set1(1.0f), I::set1(0.0f))));
  return I::sub(I::select(low, I::add(m, m), m), I::set1(1.0f));  // exact
}

// f^3 P(f) - f^2 / 2: log(1 + f) - f.
template <class I>
inline typename I::V log_tail(typename I::V f) {
  using V = typename I::V;
  V p = I::set1(7.0376836292e-2f);
  p = I::fmadd(p, f, I::set1(-1.1514610310e-1f));
  p = I::fmadd(p, f, I::set1(1.1676998740e-1f));
  p = I::fmadd(p, f, I::set1(-1.2420140846e-1f));
  p = I::fmadd(p, f, I::set1(1.4249322787e-1f));
  p = I::fmadd(p, f, I::set1(-1.6668057665e-1f));
  p = I::fmadd(p, f, I::set1(2.0000714765e-1f));
  p = I::fmadd(p, f, I::set1(-2.4999993993e-1f));
  p = I::fmadd(p, f, I::set1(3.3333331174e-1f));
  const V z = I::mul(f, f);
  return I::fnmadd(z, I::set1(0.5f), I::mul(I::mul(p, f), z));
}

// The special values: x where x is NaN or +inf (log(x) = x there), -inf at 0, NaN below 0.
template <class I>
inline typename I::V log_special(typename I::V x, typename I::V y) {
  using V = typename I::V;
  const V zero = I::set1(0.0f);
  y = I::select(I::eq(x, x), y, x);
  y = I::select(I::eq(x, I::set1(__builtin_inff())), x, y);
  y = I::select(I::eq(x, zero), I::set1(-__builtin_inff()), y);
  return I::select(I::lt(x, zero), I::set1(__builtin_nanf("")), y);
}

enum class LogBase { E, Two, Ten };

template <class I, LogBase base>
inline typename I::V log(typename I::V x) {
  using V = typename I::V;
  V e;
  const V f = log_reduce<I>(x, &e);
  const V t = log_tail<I>(f);
  V y;
  if constexpr (base == LogBase::E) {  // ln2 = 0.693359375 - 2.12194440e-4
    y = I::add(I::fmadd(e, I::set1(-2.12194440e-4f), t), f);
    y = I::fmadd(e, I::set1(0.693359375f), y);
  } else if constexpr (base == LogBase::Two) {  // (f + t) log2(e) = (f + t) (1 + 0.44269504...)
    y = I::mul(t, I::set1(0.44269504088896340736f));
    y = I::fmadd(f, I::set1(0.44269504088896340736f), y);
    y = I::add(I::add(y, t), f);
    y = I::add(y, e);
  } else {  // log10(e) = 4.3359375e-1 + 7.00731903e-4, log10(2) = 3.0078125e-1 + 2.48745664e-4
    y = I::mul(t, I::set1(7.00731903251827651129e-4f));
    y = I::fmadd(f, I::set1(7.00731903251827651129e-4f), y);
    y = I::fmadd(e, I::set1(2.48745663981195213739e-4f), y);
    y = I::fmadd(t, I::set1(4.3359375e-1f), y);
    y = I::fmadd(f, I::set1(4.3359375e-1f), y);
    y = I::fmadd(e, I::set1(3.0078125e-1f), y);
  }
  return log_special<I>(x, y);
}

// e^x, and exactly 0 below kTinyExpArg, where it would be under FLT_MIN: softmax weights, whose
// masked scores are -inf. Not for accuracy (such weights are < 1e-38 of the row's largest) but for
// speed: a denormal or underflowing result costs a microcode assist on Intel cores, and every
// masked score gave one; through exp above they made attention's exp_row 4x slower than the AVX2
// loop it replaced (perf, gpt_cpu --amp bf16, 2026-12-05).
constexpr float kTinyExpArg = -87.33f;  // e^-87.33 = 1.2e-38, just above FLT_MIN
template <class I>
inline typename I::V exp_or_zero(typename I::V x) {
  const typename I::V lo = I::set1(kTinyExpArg);
  return I::select(I::lt(x, lo), I::set1(0.0f), exp<I>(I::max(x, lo)));
}

// Where a result would be tiny, the functions below compute it times 2^32 and the caller
// multiplies by 2^-32 last, so values near FLT_MIN keep their precision.
constexpr float kTinyBias = 32.0f;
constexpr float kTinyScale = 4294967296.0f;          // 2^32
constexpr float kTinyUnscale = 2.3283064365386963e-10f;  // 2^-32

// sigmoid(a) and 1 - sigmoid(a) without cancellation or overflow: with e = e^(-|a|) <= 1, they
// are 1 / (1 + e) and e / (1 + e), in one order or the other. Where a < -16 the first is returned
// times 2^32 (*sigma_scaled), and *unscale is 2^-32 there, 1 elsewhere.
template <class I>
inline void sigmoid_pair(typename I::V a, typename I::V* sigma_scaled, typename I::V* one_minus,
                         typename I::V* unscale) {
  using V = typename I::V;
  const V one = I::set1(1.0f);
  auto tiny = I::lt(a, I::set1(-16.0f));
  auto neg = I::lt(a, I::set1(0.0f));
  *unscale = I::select(tiny, I::set1(kTinyUnscale), one);
  V es = exp<I>(I::sub(I::set1(0.0f), I::abs(a)), I::select(tiny, I::set1(kTinyBias), I::set1(0.0f)));
  V e = I::mul(es, *unscale);
  V r = I::div(one, I::add(one, e));
  *sigma_scaled = I::mul(I::select(neg, es, one), r);
  *one_minus = I::mul(I::select(neg, one, e), r);
}

// sigmoid(a) = 1 / (1 + e^-a), from sigmoid_pair (no overflow for large |a|).
template <class I>
inline typename I::V sigmoid(typename I::V a) {
  typename I::V sigma_scaled, one_minus, unscale;
  sigmoid_pair<I>(a, &sigma_scaled, &one_minus, &unscale);
  return I::mul(sigma_scaled, unscale);
}

// tanh(x) to about 2 ulp: Cephes tanhf (S. L. Moshier), x + x^3 P(x^2) for |x| < 0.625, where
// 1 - 2 / (e^2|x| + 1) would cancel, else that with x's sign. tanh(+-inf) = +-1 (exp's clamp keeps
// e finite), NaN stays NaN, tanh(-0) = -0 (as std::tanh and torch: x + x^3 P rounds -0 to +0, so
// the result takes x's sign bit; tanh is odd, which leaves every other value alone).
template <class I>
inline typename I::V tanh(typename I::V x) {
  using V = typename I::V;
  const V a = I::abs(x), z = I::mul(x, x), one = I::set1(1.0f);
  V p = I::set1(-5.70498872745e-3f);
  p = I::fmadd(p, z, I::set1(2.06390887954e-2f));
  p = I::fmadd(p, z, I::set1(-5.37397155531e-2f));
  p = I::fmadd(p, z, I::set1(1.33314422036e-1f));
  p = I::fmadd(p, z, I::set1(-3.33332819422e-1f));
  const V small = I::fmadd(I::mul(p, z), x, x);
  V large = I::sub(one, I::div(I::set1(2.0f), I::add(exp<I>(I::add(a, a)), one)));
  large = I::select(I::lt(x, I::set1(0.0f)), I::sub(I::set1(0.0f), large), large);
  return I::copysign(I::select(I::lt(a, I::set1(0.625f)), small, large), x);
}

// Constants of the Gaussian functions below.
constexpr float kRsqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

// c(t) = log(erfc(z) e^(z^2) / t), t = 1 / (1 + z / 2): Numerical Recipes' erfcc (Press et al.,
// 2nd ed., sec. 6.2), a Chebyshev fit with fractional error under 1.2e-7 for every z >= 0 (1.05e-7
// measured in float64 over [0, 15]). Its coefficients, a polynomial in t over (0, 1], sum to 6.8 in
// magnitude against values near 1, so evaluated in float32 they lose ~7 ulp to cancellation;
// re-expanded exactly around t = 1/2 (in w = t - 1/2, rational arithmetic, then rounded once to
// float) the terms sum to at most 1.46.
template <class I>
inline typename I::V erfcc_exponent(typename I::V t) {
  using V = typename I::V;
  V w = I::sub(t, I::set1(0.5f));
  V c = I::set1(0.17087277f);
  c = I::fmadd(c, w, I::set1(-0.053224765f));
  c = I::fmadd(c, w, I::set1(-0.26223812f));
  c = I::fmadd(c, w, I::set1(0.11370004f));
  c = I::fmadd(c, w, I::set1(0.2785219f));
  c = I::fmadd(c, w, I::set1(-0.15798035f));
  c = I::fmadd(c, w, I::set1(-0.37499914f));
  c = I::fmadd(c, w, I::set1(0.1893724f));
  c = I::fmadd(c, w, I::set1(1.3452844f));
  return I::fmadd(c, w, I::set1(-0.67179408f));
}

// Below kCentralLimit (|x| < 3, 99.73 % of a standard normal) normal_cdf_pdf needs neither erfc's
// fit nor its division: 1 - Phi(a) = e^(-a^2/2) M(a) for a = |x| >= 0, where M(a) = (1 - Phi(a))
// e^(a^2/2) (Mills' ratio over sqrt(2 pi)) is smooth and falls only from 0.5 to 0.166 on [0, 3].
// central_mills is M to 3.4e-8 relative in float64 (1.5e-7 with float32 Horner, measured at
// 200,001 points): a degree-11 least-squares fit in w = a - 3/2 on Chebyshev nodes, reweighted
// toward equal ripple. The lower tail keeps its relative accuracy (no 1 + erf cancels), and the cdf
// and the density share one exp, with no division: the cdf in about 40 vector operations where
// erfc's form takes about 50 and a division; with the density, one exp where erfc's form takes two.
constexpr float kCentralLimit = 3.0f;

template <class I>
inline typename I::V central_mills(typename I::V a) {
  using V = typename I::V;
  V w = I::sub(a, I::set1(1.5f));
  V m = I::set1(-5.23143967e-07f);
  m = I::fmadd(m, w, I::set1(2.40490772e-06f));
  m = I::fmadd(m, w, I::set1(-6.60448359e-06f));
  m = I::fmadd(m, w, I::set1(2.50015128e-05f));
  m = I::fmadd(m, w, I::set1(-0.000102004968f));
  m = I::fmadd(m, w, I::set1(0.000370767259f));
  m = I::fmadd(m, w, I::set1(-0.00126645272f));
  m = I::fmadd(m, w, I::set1(0.00410916097f));
  m = I::fmadd(m, w, I::set1(-0.0124968737f));
  m = I::fmadd(m, w, I::set1(0.0351870954f));
  m = I::fmadd(m, w, I::set1(-0.0902712941f));
  return I::fmadd(m, w, I::set1(0.205780655f));
}

// The normal distribution's cdf Phi(x) = erfc(-x / sqrt2) / 2 and, with want_pdf, its density
// phi(x) = e^(-x^2/2) / sqrt(2 pi), for every x (normal_cdf_pdf below uses it where |x| >= 3), to
// a few ulp relative everywhere (also in the lower tail, where
// 1 + erf(x / sqrt2) would cancel: that is why this goes through erfc rather than erf).
//
// erfc(z) = t e^(-z^2 + c(t)) with z = |x| / sqrt2. The exponent -z^2 = -x^2 / 2 reaches -100 and
// its rounding error would be multiplied by it, so x^2 is carried as p + pe (pe = fma(x, x, -p),
// exact) and the small part enters as the factor (1 - pe/2). The cdf alone (want_pdf false) uses one
// exp: -p/2 + c is summed exactly as s + se (Knuth's two-sum); with the density, e^(-x^2/2) is
// computed on its own and erfc = t phi sqrt(2 pi) e^c, two exps.
//
// Where x < -8, *cdf and *pdf come times 2^32 and *unscale is 2^-32 (1 elsewhere).
//
// |x| is clamped to 20 (Phi(-20) and phi(20) are far below the smallest float), so infinities
// give Phi(-inf) = 0, Phi(inf) = 1, phi(+-inf) = 0, and the callers' x * ... makes the NaNs and
// infinities PyTorch's formulas make. A NaN x gives a number here; the callers multiply by x.
template <class I, bool want_pdf>
inline void normal_cdf_pdf_erfc(typename I::V x, typename I::V* cdf, typename I::V* pdf, typename I::V* unscale) {
  using V = typename I::V;
  const V half = I::set1(0.5f), one = I::set1(1.0f);
  auto tiny = I::lt(x, I::set1(-8.0f));
  V bias = I::select(tiny, I::set1(kTinyBias), I::set1(0.0f));
  *unscale = I::select(tiny, I::set1(kTinyUnscale), one);
  V a = I::min(I::abs(x), I::set1(20.0f));
  V t = I::div(one, I::fmadd(I::mul(a, I::set1(kRsqrt2)), half, one));
  V c = erfcc_exponent<I>(t);
  V p = I::mul(a, a);
  V pe = I::fmsub(a, a, p);  // a * a - p exactly
  V erfc;
  if constexpr (want_pdf) {
    V g = exp<I>(I::mul(p, I::set1(-0.5f)), bias);
    g = I::fnmadd(I::mul(g, pe), half, g);  // g (1 - pe/2)
    *pdf = I::mul(g, I::set1(kInvSqrt2Pi));
    erfc = I::mul(I::mul(t, g), exp<I>(c));
  } else {
    V hp = I::mul(p, I::set1(-0.5f));
    V s = I::add(hp, c);
    V bb = I::sub(s, hp);
    V se = I::add(I::sub(hp, I::sub(s, bb)), I::sub(c, bb));  // hp + c - s exactly
    V e = I::mul(t, exp<I>(s, bias));
    erfc = I::fmadd(e, I::fnmadd(pe, half, se), e);  // e (1 + se - pe/2)
  }
  V half_erfc = I::mul(erfc, half);
  *cdf = I::select(I::lt(x, I::set1(0.0f)), half_erfc, I::sub(one, half_erfc));
}

// normal_cdf_pdf_erfc's results, through the central form where |x| < kCentralLimit: lane by
// lane, so a value's result never depends on its neighbours in the vector (the loops' tails and
// the threads' chunks align vectors differently). Only a vector with a lane at or beyond the limit
// (or NaN) also runs normal_cdf_pdf_erfc, 4 % of 16-float vectors of standard normal data.
template <class I, bool want_pdf>
inline void normal_cdf_pdf(typename I::V x, typename I::V* cdf, typename I::V* pdf, typename I::V* unscale) {
  using V = typename I::V;
  const V half = I::set1(0.5f), one = I::set1(1.0f);
  V a = I::abs(x);
  V p = I::mul(a, a);
  V pe = I::fmsub(a, a, p);  // a * a - p exactly
  V g = exp<I>(I::mul(p, I::set1(-0.5f)));
  g = I::fnmadd(I::mul(g, pe), half, g);  // e^(-a^2/2) = e^(-p/2) (1 - pe/2)
  V upper = I::mul(g, central_mills<I>(a));  // 1 - Phi(a) = Phi(-a)
  *cdf = I::select(I::lt(x, I::set1(0.0f)), upper, I::sub(one, upper));
  if constexpr (want_pdf) *pdf = I::mul(g, I::set1(kInvSqrt2Pi));
  *unscale = one;
  auto central = I::lt(a, I::set1(kCentralLimit));
  if (I::all(central)) return;
  V cdf_tail, pdf_tail, unscale_tail;
  normal_cdf_pdf_erfc<I, want_pdf>(x, &cdf_tail, &pdf_tail, &unscale_tail);
  *cdf = I::select(central, *cdf, cdf_tail);
  if constexpr (want_pdf) *pdf = I::select(central, *pdf, pdf_tail);
  *unscale = I::select(central, one, unscale_tail);
}

}  // namespace
}  // namespace colony::kernels::cpu::vec
