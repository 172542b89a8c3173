// The loops of activation_simd.h, written once over vec_math.h's ISA trait. Not a normal header:
// a file defines COLONY_ACTIVATION_ISA (the namespace of its copy, avx2 or avx512) and
// COLONY_ACTIVATION_TRAIT (vec::Avx2 or vec::Avx512), then includes this, which defines that
// copy's activation_simd_fns(). Everything but that function has internal linkage (see vec_math.h).
#if !defined(COLONY_ACTIVATION_ISA) || !defined(COLONY_ACTIVATION_TRAIT)
#error "define COLONY_ACTIVATION_ISA and COLONY_ACTIVATION_TRAIT before including activation_simd_kernels.h"
#endif

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/activation_simd.h"
#include "kernels/cpu/isa_dispatch.h"
#include "kernels/cpu/vec_math.h"

namespace colony::kernels::cpu::COLONY_ACTIVATION_ISA {
namespace {

using I = vec::COLONY_ACTIVATION_TRAIT;
using V = I::V;
constexpr int64_t kLanes = I::kLanes;

// 2u of the tanh form, u = sqrt(2/pi) (x + 0.044715 x^3) = k1 (x + k2 x^3): x (2 k1 + 2 k1 k2 x^2).
constexpr float kK1 = static_cast<float>(kSqrtTwoOverPi);
constexpr float k2K1 = static_cast<float>(2 * kSqrtTwoOverPi);
constexpr float k2K1K2 = static_cast<float>(2 * kSqrtTwoOverPi * kGeluCubic);
constexpr float k3K1K2 = static_cast<float>(3 * kSqrtTwoOverPi * kGeluCubic);

inline V gelu_exact(V x) {
  V cdf, unused, unscale;
  vec::normal_cdf_pdf<I, false>(x, &cdf, &unused, &unscale);
  return I::mul(I::mul(x, cdf), unscale);
}

inline V two_u(V x, V x2) { return I::mul(x, I::fmadd(x2, I::set1(k2K1K2), I::set1(k2K1))); }

// x (1 + tanh u) / 2 = x sigmoid(2u).
inline V gelu_tanh(V x) {
  V sigma, one_minus, unscale;
  vec::sigmoid_pair<I>(two_u(x, I::mul(x, x)), &sigma, &one_minus, &unscale);
  return I::mul(I::mul(x, sigma), unscale);
}

inline V silu(V x) {
  V sigma, one_minus, unscale;
  vec::sigmoid_pair<I>(x, &sigma, &one_minus, &unscale);
  return I::mul(I::mul(x, sigma), unscale);
}

// The derivatives come scaled as the functions of vec_math.h leave them: g d, with d scaled by
// `unscale`'s inverse (2^32 where d is tiny), is multiplied by unscale last. (So an incoming
// gradient over ~1e34 where d is tiny would overflow; gradients that size are out of float32
// training's range.)

// Phi(x) + x phi(x).
inline V gelu_exact_grad(V g, V x) {
  V cdf, pdf, unscale;
  vec::normal_cdf_pdf<I, true>(x, &cdf, &pdf, &unscale);
  return I::mul(I::mul(g, I::fmadd(x, pdf, cdf)), unscale);
}

// sigma + 2 x sigma (1 - sigma) du/dx with sigma = sigmoid(2u), du/dx = k1 (1 + 3 k2 x^2):
// 1 + tanh u = 2 sigma and 1 - tanh^2 u = 4 sigma (1 - sigma).
inline V gelu_tanh_grad(V g, V x) {
  V x2 = I::mul(x, x);
  V sigma, one_minus, unscale;
  vec::sigmoid_pair<I>(two_u(x, x2), &sigma, &one_minus, &unscale);
  V du = I::fmadd(x2, I::set1(k3K1K2), I::set1(kK1));
  V two_x_om = I::mul(I::add(x, x), one_minus);
  return I::mul(I::mul(g, I::mul(sigma, I::fmadd(two_x_om, du, I::set1(1.0f)))), unscale);
}

// s (1 + x (1 - s)), s = sigmoid(x).
inline V silu_grad(V g, V x) {
  V s, one_minus, unscale;
  vec::sigmoid_pair<I>(x, &s, &one_minus, &unscale);
  return I::mul(I::mul(g, I::mul(s, I::fmadd(x, one_minus, I::set1(1.0f)))), unscale);
}

// Exact GELU for bfloat16 inputs, whose results are rounded to bfloat16 (8 significant bits): the
// float32 path's erf, to a few float32 ulp, is more than that rounding keeps. Below |x| = 3 the
// same form as vec::normal_cdf_pdf's central one, 1 - Phi(a) = e^(-a^2/2) M(a), with shorter
// polynomials: M of degree 8 (6.1e-6 relative on [0, 3], float32 Horner, 20,001 points; the float32
// path's has degree 11, 1.5e-7) and e^y for y in [-4.5, 0] as 2^k e^r with a degree-4 e^r (2.7e-6
// relative on |r| <= ln2 / 2, against degree 7 and the clamps of vec::exp). a^2 is exact (a
// bfloat16 squared has 16 significant bits), so the float32 path's correction for its rounding
// goes too. Both fits: least squares on Chebyshev nodes reweighted toward equal ripple (relative
// error), as central_mills'. Together about 9e-6 relative: the result rounded to bfloat16 equals
// the float32 path's rounded, or differs by 1 ulp where the float32 value lies within ~9e-6 of a
// halfway point (tests/kernels/activation_simd_test.cc counts them over every bfloat16 below 3).
// Lanes at |x| >= 3 or NaN take normal_cdf_pdf's float32 results, lane by lane.
constexpr float kCentralLimitBf16 = 3.0f;

// Horner's rule over coefficients from the highest degree down.
template <size_t N>
inline V horner(V w, const float (&c)[N]) {
  V p = I::set1(c[0]);
  for (size_t d = 1; d < N; ++d) p = I::fmadd(p, w, I::set1(c[d]));
  return p;
}

constexpr float kExpBf16[] = {0.04145856574177742f, 0.16790907084941864f, 0.5000435709953308f, 0.9999634027481079f,
                              0.9999992847442627f};
constexpr float kMillsBf16[] = {3.484239641693421e-05f,  -0.00014344746887218207f, 0.00036044203443452716f,
                                -0.0011937989620491862f, 0.004108173307031393f,    -0.01254186499863863f,
                                0.035190798342227936f,   -0.09026402235031128f,    0.2057802826166153f};

inline V exp_central_bf16(V y) {
  V k = I::round(I::mul(y, I::set1(1.44269504088896341f)));
  V r = I::fnmadd(k, I::set1(0.693147180559945f), y);  // |k| <= 7: ln2's float error costs < 2e-7
  return I::ldexp(horner(r, kExpBf16), k);
}

// Phi(x) and (want_pdf) phi(x) as normal_cdf_pdf gives them (*unscale likewise), for x a bfloat16
// value.
template <bool want_pdf>
inline void normal_cdf_pdf_bf16(V x, V* cdf, V* pdf, V* unscale) {
  const V one = I::set1(1.0f);
  V a = I::abs(x);
  V g = exp_central_bf16(I::mul(I::mul(a, a), I::set1(-0.5f)));
  V upper = I::mul(g, horner(I::sub(a, I::set1(1.5f)), kMillsBf16));  // M(a), in a - 3/2
  *cdf = I::select(I::lt(x, I::set1(0.0f)), upper, I::sub(one, upper));
  if constexpr (want_pdf) *pdf = I::mul(g, I::set1(static_cast<float>(vec::kInvSqrt2Pi)));
  *unscale = one;
  auto central = I::lt(a, I::set1(kCentralLimitBf16));
  if (I::all(central)) return;
  V cdf_full, pdf_full, unscale_full;
  vec::normal_cdf_pdf<I, want_pdf>(x, &cdf_full, &pdf_full, &unscale_full);
  *cdf = I::select(central, *cdf, cdf_full);
  if constexpr (want_pdf) *pdf = I::select(central, *pdf, pdf_full);
  *unscale = I::select(central, one, unscale_full);
}

inline V gelu_exact_bf16(V x) {
  V cdf, unused, unscale;
  normal_cdf_pdf_bf16<false>(x, &cdf, &unused, &unscale);
  return I::mul(I::mul(x, cdf), unscale);
}

inline V gelu_exact_grad_bf16(V g, V x) {
  V cdf, pdf, unscale;
  normal_cdf_pdf_bf16<true>(x, &cdf, &pdf, &unscale);
  return I::mul(I::mul(g, I::fmadd(x, pdf, cdf)), unscale);
}

// How far ahead map1 and map_grad fetch their inputs (see map_grad).
constexpr int64_t kPrefetchAhead = 512;

// The last n % kLanes elements go through masked loads and stores (the other lanes compute on 0).
// x is fetched ahead as map_grad fetches its inputs: the forward's x is the product just written
// (100 MB at the width-384 GPT's batch 64), gone from L2 by the time this reaches it. Exact GELU on
// 16384 x 1536 (activation_bench --threads 1, alternating with main's, load 2.3-3.3, 2026-12-06):
// 21.2-23.2 ms against 25.2-28.4 over 5 rounds; at 768 x 512 (in cache) no change seen.
template <typename F>
inline void map1(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if (i + kPrefetchAhead < n) _mm_prefetch(reinterpret_cast<const char*>(x + i + kPrefetchAhead), _MM_HINT_T0);
    I::store(y + i, f(I::load(x + i)));
  }
  if (i < n) I::store_n(y + i, f(I::load_n(x + i, n - i)), n - i);
}

// The backward's x is the forward's input, saved a whole forward and half a backward earlier, so
// in a training step it comes from memory, not cache: in char_gpt's float32 step (perf annotate)
// 37 % of gelu_backward's samples sat on x's load. Each 16-float vector costs 12-14 ns of
// arithmetic, so fetching kPrefetchAhead floats (2 KiB, 32 such vectors, ~400 ns) ahead of both
// streams covers a memory access, which the hardware prefetchers did not: gelu_backward's share
// of that step fell from 7.9 to 4.0 % (docs/benchmarks.md). Hot in cache it costs nothing seen.
template <typename F>
inline void map_grad(const float* g, const float* x, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if (i + kPrefetchAhead < n) {
      _mm_prefetch(reinterpret_cast<const char*>(x + i + kPrefetchAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(g + i + kPrefetchAhead), _MM_HINT_T0);
    }
    I::store(out + i, f(I::load(g + i), I::load(x + i)));
  }
  if (i < n) I::store_n(out + i, f(I::load_n(g + i, n - i), I::load_n(x + i, n - i)), n - i);
}

// map1 and map_grad over bfloat16 bits, widened and rounded in registers (vec_math.h), so each
// operand is read or written once, with no float32 copy between; the last n % kLanes elements
// through a zero-padded block on the stack.
template <typename F>
inline void map1_bf16(const uint16_t* x, uint16_t* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) I::store_bf16(y + i, f(I::load_bf16(x + i)));
  if (i < n) {
    uint16_t in[kLanes] = {}, out[kLanes];
    std::memcpy(in, x + i, (n - i) * sizeof(uint16_t));
    I::store_bf16(out, f(I::load_bf16(in)));
    std::memcpy(y + i, out, (n - i) * sizeof(uint16_t));
  }
}

template <typename F>
inline void map_grad_bf16(const uint16_t* g, const uint16_t* x, uint16_t* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if (i + kPrefetchAhead < n) {  // as map_grad: x comes from memory
      _mm_prefetch(reinterpret_cast<const char*>(x + i + kPrefetchAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(g + i + kPrefetchAhead), _MM_HINT_T0);
    }
    I::store_bf16(out + i, f(I::load_bf16(g + i), I::load_bf16(x + i)));
  }
  if (i < n) {
    uint16_t gb[kLanes] = {}, xb[kLanes] = {}, ob[kLanes];
    std::memcpy(gb, g + i, (n - i) * sizeof(uint16_t));
    std::memcpy(xb, x + i, (n - i) * sizeof(uint16_t));
    I::store_bf16(ob, f(I::load_bf16(gb), I::load_bf16(xb)));
    std::memcpy(out + i, ob, (n - i) * sizeof(uint16_t));
  }
}

void gelu_forward(const float* x, float* y, int64_t n, GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    map1(x, y, n, gelu_tanh);
  } else {
    map1(x, y, n, gelu_exact);
  }
}

void silu_forward(const float* x, float* y, int64_t n) { map1(x, y, n, silu); }

void gelu_backward(const float* grad, const float* x, float* out, int64_t n, GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    map_grad(grad, x, out, n, gelu_tanh_grad);
  } else {
    map_grad(grad, x, out, n, gelu_exact_grad);
  }
}

void silu_backward(const float* grad, const float* x, float* out, int64_t n) {
  map_grad(grad, x, out, n, silu_grad);
}

void sigmoid_forward(const float* x, float* y, int64_t n) {
  map1(x, y, n, [](V v) { return vec::sigmoid<I>(v); });
}

void tanh_forward(const float* x, float* y, int64_t n) {
  map1(x, y, n, [](V v) { return vec::tanh<I>(v); });
}

void exp_forward(const float* x, float* y, int64_t n) {
  map1(x, y, n, [](V v) { return vec::exp<I>(v); });
}

void log_forward(const float* x, float* y, int64_t n) {
  map1(x, y, n, [](V v) { return vec::log<I, vec::LogBase::E>(v); });
}

void log2_forward(const float* x, float* y, int64_t n) {
  map1(x, y, n, [](V v) { return vec::log<I, vec::LogBase::Two>(v); });
}

void log10_forward(const float* x, float* y, int64_t n) {
  map1(x, y, n, [](V v) { return vec::log<I, vec::LogBase::Ten>(v); });
}

// The rows' loops read a row of n floats in vectors and a masked tail of r = n % kLanes; `keep`
// lanes [0, r) of v and puts `fill` in the others (a masked load reads them as 0, which is neither
// the max's nor the sum's neutral value).
inline V keep(V v, int64_t r, float fill) { return I::select(I::first(r), v, I::set1(fill)); }

// softmax_row: the row's max (a NaN lane may be lost here, but it reaches the sum below, and the
// sum reaches every output), then e = exp(x - max) summed, stored for the softmax and rescaled by
// 1 / sum; for the log-softmax (x - max) - log(sum) (log_softmax_value, kernels/common).
void softmax_row(const float* x, float* y, int64_t n, bool log) {
  const float inf = __builtin_inff();
  V m = I::set1(-inf);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) m = I::max(m, I::load(x + i));
  if (i < n) m = I::max(m, keep(I::load_n(x + i, n - i), n - i, -inf));
  const float mx = I::reduce_max(m);
  const V shift = I::set1(mx);
  V sum = I::set1(0.0f);
  for (i = 0; i + kLanes <= n; i += kLanes) {
    const V e = vec::exp<I>(I::sub(I::load(x + i), shift));
    if (!log) I::store(y + i, e);
    sum = I::add(sum, e);
  }
  if (i < n) {
    const V e = keep(vec::exp<I>(I::sub(I::load_n(x + i, n - i), shift)), n - i, 0.0f);
    if (!log) I::store_n(y + i, e, n - i);
    sum = I::add(sum, e);
  }
  const float total = I::reduce_add(sum);
  if (log) {
    const V log_sum = I::set1(std::log(total));
    for (i = 0; i + kLanes <= n; i += kLanes) I::store(y + i, I::sub(I::sub(I::load(x + i), shift), log_sum));
    if (i < n) I::store_n(y + i, I::sub(I::sub(I::load_n(x + i, n - i), shift), log_sum), n - i);
  } else {
    const V scale = I::set1(1.0f / total);
    for (i = 0; i + kLanes <= n; i += kLanes) I::store(y + i, I::mul(I::load(y + i), scale));
    if (i < n) I::store_n(y + i, I::mul(I::load_n(y + i, n - i), scale), n - i);
  }
}

// max_and_sum_exp_row: the row's max m (NaN lanes as softmax_row's) and sum(exp(x - m)).
float max_and_sum_exp_row(const float* x, int64_t n, float* max) {
  const float inf = __builtin_inff();
  V m = I::set1(-inf);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) m = I::max(m, I::load(x + i));
  if (i < n) m = I::max(m, keep(I::load_n(x + i, n - i), n - i, -inf));
  *max = I::reduce_max(m);
  const V shift = I::set1(*max);
  V sum = I::set1(0.0f);
  for (i = 0; i + kLanes <= n; i += kLanes) sum = I::add(sum, vec::exp<I>(I::sub(I::load(x + i), shift)));
  if (i < n) sum = I::add(sum, keep(vec::exp<I>(I::sub(I::load_n(x + i, n - i), shift)), n - i, 0.0f));
  return I::reduce_add(sum);
}

// exp_log_softmax_row: y = exp((x - m) - log_sum), the probabilities from the row's statistics
// (log_softmax_value's order).
void exp_log_softmax_row(const float* x, float* y, int64_t n, float m, float log_sum) {
  const V mv = I::set1(m), lv = I::set1(log_sum);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) I::store(y + i, vec::exp<I>(I::sub(I::sub(I::load(x + i), mv), lv)));
  if (i < n) I::store_n(y + i, vec::exp<I>(I::sub(I::sub(I::load_n(x + i, n - i), mv), lv)), n - i);
}

// softmax_backward_row: gx = y (g - sum(g y)), or for the log-softmax gx = g - exp(y) sum(g).
void softmax_backward_row(const float* g, const float* y, float* gx, int64_t n, bool log) {
  V acc = I::set1(0.0f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V gv = I::load(g + i);
    acc = log ? I::add(acc, gv) : I::fmadd(gv, I::load(y + i), acc);
  }
  if (i < n) {  // the masked loads' zeros add nothing
    const V gv = I::load_n(g + i, n - i);
    acc = log ? I::add(acc, gv) : I::fmadd(gv, I::load_n(y + i, n - i), acc);
  }
  const V total = I::set1(I::reduce_add(acc));
  const auto grad = [&](V gv, V yv) {
    return log ? I::fnmadd(vec::exp<I>(yv), total, gv) : I::mul(yv, I::sub(gv, total));
  };
  for (i = 0; i + kLanes <= n; i += kLanes) I::store(gx + i, grad(I::load(g + i), I::load(y + i)));
  if (i < n) I::store_n(gx + i, grad(I::load_n(g + i, n - i), I::load_n(y + i, n - i)), n - i);
}

void gelu_forward_bf16(const uint16_t* x, uint16_t* y, int64_t n, GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    map1_bf16(x, y, n, gelu_tanh);
  } else {
    map1_bf16(x, y, n, gelu_exact_bf16);
  }
}

void gelu_backward_bf16(const uint16_t* grad, const uint16_t* x, uint16_t* out, int64_t n,
                        GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    map_grad_bf16(grad, x, out, n, gelu_tanh_grad);
  } else {
    map_grad_bf16(grad, x, out, n, gelu_exact_grad_bf16);
  }
}

constexpr ActivationSimdFns kFns = {COLONY_ISA_COPY_NAME(COLONY_ACTIVATION_ISA),
                                    gelu_forward,
                                    silu_forward,
                                    gelu_backward,
                                    silu_backward,
                                    gelu_forward_bf16,
                                    gelu_backward_bf16,
                                    sigmoid_forward,
                                    tanh_forward,
                                    exp_forward,
                                    log_forward,
                                    log2_forward,
                                    log10_forward,
                                    softmax_row,
                                    softmax_backward_row,
                                    max_and_sum_exp_row,
                                    exp_log_softmax_row};

}  // namespace

const ActivationSimdFns& activation_simd_fns() { return kFns; }

}  // namespace colony::kernels::cpu::COLONY_ACTIVATION_ISA
