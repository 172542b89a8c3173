// attention_head.h's kernels, written once over vec_math.h's ISA trait. Not a normal header: a file
// defines COLONY_ATTENTION_HEAD_ISA (the namespace of its copy, avx2 or avx512) and
// COLONY_ATTENTION_HEAD_TRAIT (Avx2 or Avx512), then includes this, which defines that copy's
// attention_head_fns(). Everything else has internal linkage (see vec_math.h).
#if !defined(COLONY_ATTENTION_HEAD_ISA) || !defined(COLONY_ATTENTION_HEAD_TRAIT)
#error "define COLONY_ATTENTION_HEAD_ISA and COLONY_ATTENTION_HEAD_TRAIT before including attention_head_kernels.h"
#endif

#include <immintrin.h>

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/attention_head.h"
#include "kernels/cpu/isa_dispatch.h"
#include "kernels/cpu/vec_math.h"

namespace colony::kernels::cpu::COLONY_ATTENTION_HEAD_ISA {
namespace {

using I = vec::COLONY_ATTENTION_HEAD_TRAIT;
using V = I::V;
constexpr int64_t kLanes = I::kLanes;
// Columns of the widest tile, in vectors: 6 rows x 4 vectors is 24 of AVX-512's 32 registers
// for sums, 6 x 2 is 12 of AVX2's 16, leaving room for B's row and A's broadcast.
constexpr int kMaxVectors = kLanes == 16 ? 4 : 2;
// Leading dimensions in floats: a multiple of 16 starts every row of a 64-byte aligned buffer on
// a cache line.
constexpr int64_t kAlign = 16;
constexpr float kNegInf = -__builtin_inff();

// Local helpers rather than <algorithm>'s: a template from a header, emitted by this AVX-512 copy
// as a weak symbol outside its namespace, could become every caller's copy (vec_math.h).
int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }
int64_t min_of(int64_t x, int64_t y) { return x < y ? x : y; }
void fill_zero(float* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = 0.0f;
}

// ---------- products ----------

// Where a product's sums go when not back to C: row r (of the product's rows) to p + r * ld, its
// first `cols` columns only (the tail under a mask), each times row_scale[r] (or `scale` where
// row_scale is null). The attention's outputs, o / l, dQ and dK times the softmax scale, dV, are
// rows of tensors [B, T, H, D]: stored from the registers of the product's last tile rather than
// through a buffer and a second pass (scale_row), which was 1.8-2.0 % of the width-384 GPT's step
// (perf, batch 16 and 64, 2026-12-06), most of it the backward's dQ, dK and dV.
struct RowsOut {
  float* p = nullptr;
  int64_t ld = 0;
  int64_t cols = 0;
  float scale = 1.0f;
  const float* row_scale = nullptr;
};

// C(i, 0:NV vectors) (+)= sum_{p in [k0, k1)} A(i, p) B(p, :) for i < R, with
// A(i, p) = a[i * ars + p * acs] (broadcast) and B(p, :) at b + p * ldb: R x NV sums in registers,
// stored to C, or to `out` where out.p is set (C is then read only to accumulate).
template <int R, int NV>
inline void tile(int64_t k0, int64_t k1, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb,
                 float* c, int64_t ldc, bool accumulate, const RowsOut& out) {
  V acc[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = accumulate ? I::load(c + r * ldc + v * kLanes) : I::set1(0.0f);
  }
  for (int64_t p = k0; p < k1; ++p) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = I::load(b + p * ldb + v * kLanes);
    const float* ap = a + p * acs;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const V x = I::set1(ap[r * ars]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = I::fmadd(x, bv[v], acc[r][v]);
    }
  }
  if (out.p == nullptr) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) I::store(c + r * ldc + v * kLanes, acc[r][v]);
    }
    return;
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const V f = I::set1(out.row_scale != nullptr ? out.row_scale[r] : out.scale);
    float* row = out.p + r * out.ld;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int64_t col = v * kLanes;
      if (col + kLanes <= out.cols) {
        I::store(row + col, I::mul(acc[r][v], f));
      } else if (col < out.cols) {
        I::store_n(row + col, I::mul(acc[r][v], f), out.cols - col);
      }
    }
  }
}

// R rows of C over columns [j, j + nv vectors) (nv <= kMaxVectors).
template <int R>
void row_tile(int64_t nv, int64_t k0, int64_t k1, const float* a, int64_t ars, int64_t acs, const float* b,
              int64_t ldb, float* c, int64_t ldc, bool accumulate, const RowsOut& out) {
  if (nv == kMaxVectors) return tile<R, kMaxVectors>(k0, k1, a, ars, acs, b, ldb, c, ldc, accumulate, out);
  if (nv == 1) return tile<R, 1>(k0, k1, a, ars, acs, b, ldb, c, ldc, accumulate, out);
  if constexpr (kMaxVectors > 2) {
    if (nv == 2) return tile<R, 2>(k0, k1, a, ars, acs, b, ldb, c, ldc, accumulate, out);
    if (nv == 3) return tile<R, 3>(k0, k1, a, ars, acs, b, ldb, c, ldc, accumulate, out);
  }
}

// What a block of rows [i, i + rows) of a product computes: columns [0, n) (a multiple of kLanes),
// summed over depth [k0, k1).
struct Span {
  int64_t n, k0, k1;
};

// C (+)= A B over m rows in blocks of R, `span(i, rows)` giving each block's columns and depth
// (causal blocks stop at their diagonal), for columns up to n_max; the sums go to `out` instead of
// C where out.p is set (then every block stores, even one with nothing to add). R from the widest
// tile's vectors: as many rows as keep 24 (AVX-512) or 12 (AVX2) sums in registers; the last rows in
// blocks of 6, 4, 2, 1. Columns are the outer loop: a chunk of B (depth x kMaxVectors vectors, 16 KB
// at depth 64 on AVX-512) stays in L1 while every block of rows passes over it; rows outer
// reloaded all of B (64 KB for K^T at 256 keys) from L2 for each block.
template <class F>
void product(int64_t m, int64_t n_max, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb,
             float* c, int64_t ldc, bool accumulate, F span, const RowsOut& out = RowsOut{}) {
  const int64_t nv = min_of(n_max / kLanes, kMaxVectors);
  const int64_t wide = 2 * nv <= kMaxVectors ? 12 : nv == 3 ? 8 : 6;  // rows of the main blocks
  for (int64_t j = 0; j < n_max; j += kMaxVectors * kLanes) {
    int64_t i = 0;
    auto run = [&](auto rows_tag) {
      constexpr int R = decltype(rows_tag)::value;
      const Span s = span(i, R);
      const int64_t vectors = min_of((s.n - j) / kLanes, kMaxVectors);
      // Nothing to add: past the block's columns, or a causal block of keys no row sees (whose
      // sums, going to `out`, are still stored).
      if (vectors > 0 && (out.p != nullptr || !(accumulate && s.k0 >= s.k1))) {
        RowsOut o = out;
        if (o.p != nullptr) {
          o.p += i * o.ld + j;
          o.cols -= j;
          if (o.row_scale != nullptr) o.row_scale += i;
        }
        float* ci = c == nullptr ? nullptr : c + i * ldc + j;  // C is null where only `out` is written
        row_tile<R>(vectors, s.k0, s.k1, a + i * ars, ars, acs, b + j, ldb, ci, ldc, accumulate, o);
      }
      i += R;
    };
    if (wide == 12) {
      while (i + 12 <= m) run(std::integral_constant<int, 12>{});
    } else if (wide == 8) {
      while (i + 8 <= m) run(std::integral_constant<int, 8>{});
    }
    while (i + 6 <= m) run(std::integral_constant<int, 6>{});
    if (i + 4 <= m) run(std::integral_constant<int, 4>{});
    if (i + 2 <= m) run(std::integral_constant<int, 2>{});
    if (i < m) run(std::integral_constant<int, 1>{});
  }
}

// ---------- packing ----------

// dst[c * ds + r] = src[r * ss + c] for r, c < 8: an 8 x 8 block transposed in registers (24
// shuffles; AVX2, so the AVX-512 copy runs the same).
inline void transpose8x8(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 r[8], t[8], u[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ss);
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 2
  for (int h = 0; h < 8; h += 4) {
    u[h] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}

// dst[c * ld + r] = src[r * stride + c] for r < rows, c < cols, and 0 for rows <= r < ld: K^T and
// V^T, the B of S = Q K^T and dP = dO V^T. 8 x 8 blocks in registers, the edges element by element:
// element by element throughout, these transposes were 12 % of sdpa_bench's time (perf, 2026-12-06).
void pack_transposed(const float* src, int64_t stride, int64_t rows, int64_t cols, float* dst, int64_t ld) {
  const int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (int64_t r0 = 0; r0 < rows8; r0 += 8) {
    for (int64_t c0 = 0; c0 < cols8; c0 += 8) transpose8x8(src + r0 * stride + c0, stride, dst + c0 * ld + r0, ld);
    for (int64_t c = cols8; c < cols; ++c) {
      for (int64_t r = r0; r < r0 + 8; ++r) dst[c * ld + r] = src[r * stride + c];
    }
  }
  for (int64_t c = 0; c < cols; ++c) {
    float* d = dst + c * ld;
    for (int64_t r = rows8; r < rows; ++r) d[r] = src[r * stride + c];
    fill_zero(d + rows, ld - rows);
  }
}

// dst[r * ld + c] = src[r * stride + c] for c < cols, 0 for cols <= c < ld: rows of a width that is
// not whole vectors, padded to be a product's B.
void pack_rows(const float* src, int64_t stride, int64_t rows, int64_t cols, float* dst, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[r * ld + c] = src[r * stride + c];
    fill_zero(dst + r * ld + cols, ld - cols);
  }
}

// A product's B: rows of `cols` floats `stride` apart read in place where `cols` is whole vectors,
// else packed into `buffer` ([rows, round_up(cols, kLanes)]). Returns the rows and sets their stride.
const float* b_rows(const float* src, int64_t stride, int64_t rows, int64_t cols, AlignedFloats& buffer,
                    int64_t& ld) {
  if (cols % kLanes == 0) {
    ld = stride;
    return src;
  }
  ld = round_up(cols, kLanes);
  float* dst = buffer.get(rows * ld);
  pack_rows(src, stride, rows, cols, dst, ld);
  return dst;
}

// ---------- rows ----------

// The n = min(kLanes, end - c) first lanes of row + c (a partial vector only at a row's end).
inline V load_part(const float* row, int64_t c, int64_t end) {
  return c + kLanes <= end ? I::load(row + c) : I::load_n(row + c, end - c);
}
inline void store_part(float* row, int64_t c, int64_t end, V x) {
  if (c + kLanes <= end) {
    I::store(row + c, x);
  } else {
    I::store_n(row + c, x, end - c);
  }
}

// One query row's scores s[0, valid) (raw dot products; the buffer holds whole vectors past it)
// become its weights: x = scale * s (+ mask), *row_max = max(x), s[c] = exp(x - max) for
// c < valid and 0 on to `width`. Returns the sum of the weights (0 when every x is -inf, whose
// weights are then 0, not exp(nan)).
float softmax_row(float* s, int64_t valid, int64_t width, float scale, const float* mask, float* row_max) {
  const V sc = I::set1(scale), ninf = I::set1(kNegInf), zero = I::set1(0.0f);
  V mx = ninf;
  for (int64_t c = 0; c < valid; c += kLanes) {
    V x = I::mul(I::load(s + c), sc);
    if (mask != nullptr) x = I::add(x, load_part(mask, c, valid));
    if (c + kLanes > valid) x = I::select(I::first(valid - c), x, ninf);
    I::store(s + c, x);
    mx = I::max(mx, x);
  }
  const float m = I::reduce_max(mx);
  *row_max = m;
  const V shift = I::set1(m == kNegInf ? 0.0f : m);
  V sum = zero;
  int64_t c = 0;
  for (; c < valid; c += kLanes) {  // lanes past valid hold -inf: weight 0
    const V w = vec::exp_or_zero<I>(I::sub(I::load(s + c), shift));
    I::store(s + c, w);
    sum = I::add(sum, w);
  }
  for (; c < width; c += kLanes) I::store(s + c, zero);
  return I::reduce_add(sum);
}

// Backward: one query row's scores s and dP = dO V^T (dp) become P = exp(scale s (+ mask) - lse)
// and dS = P (dP - d) for c < valid, both 0 on to `width` (all 0 where lse = -inf: a row whose
// every key is masked has no weights and no gradients).
void softmax_grad_row(float* s, float* dp, int64_t valid, int64_t width, float scale, const float* mask, float lse,
                      float d) {
  if (lse == kNegInf) valid = 0;
  const V sc = I::set1(scale), sh = I::set1(lse), dv = I::set1(d), zero = I::set1(0.0f);
  int64_t c = 0;
  for (; c < valid; c += kLanes) {
    V x = I::mul(I::load(s + c), sc);
    if (mask != nullptr) x = I::add(x, load_part(mask, c, valid));
    V w = vec::exp_or_zero<I>(I::sub(x, sh));
    V g = I::mul(w, I::sub(I::load(dp + c), dv));
    if (c + kLanes > valid) {  // the lanes past valid: no key, whatever their scores held
      w = I::select(I::first(valid - c), w, zero);
      g = I::select(I::first(valid - c), g, zero);
    }
    I::store(s + c, w);
    I::store(dp + c, g);
  }
  for (; c < width; c += kLanes) {
    I::store(s + c, zero);
    I::store(dp + c, zero);
  }
}

// dst[c] = factor * src[c] for c < n (dst a tensor's row: the tail stored under a mask).
void scale_row(const float* src, int64_t n, float factor, float* dst) {
  const V f = I::set1(factor);
  for (int64_t c = 0; c < n; c += kLanes) store_part(dst, c, n, I::mul(load_part(src, c, n), f));
}

float dot_row(const float* x, const float* y, int64_t n) {
  V acc = I::set1(0.0f);
  for (int64_t c = 0; c < n; c += kLanes) acc = I::fmadd(load_part(x, c, n), load_part(y, c, n), acc);
  return I::reduce_add(acc);
}

// ---------- one head ----------

// Row i's additive mask (its first n columns) contiguous: in place, or gathered into `gathered`.
const float* mask_row(const AttentionArgs& a, const float* mask, int64_t i, int64_t n, AlignedFloats& gathered) {
  if (mask == nullptr) return nullptr;
  const float* m = mask + i * a.ms.row;
  if (a.ms.col == 1) return m;
  float* g = gathered.get(n);
  for (int64_t c = 0; c < n; ++c) g[c] = m[c * a.ms.col];
  return g;
}

// The keys query row i sees: [0, valid_keys(i)).
int64_t valid_keys(const AttentionArgs& a, int64_t i) { return a.causal ? min_of(a.S, i + 1) : a.S; }

// S = Q K^T for query rows [i0, i0 + rows) into s ([rows, ldk]): each block of rows computes the
// columns of the keys its last row sees.
void scores(const AttentionArgs& a, const float* q, int64_t i0, int64_t rows, const float* kt, int64_t ldk,
            float* s) {
  const int64_t n_max = round_up(valid_keys(a, i0 + rows - 1), kLanes);
  product(rows, n_max, q + i0 * a.qs.row, a.qs.row, 1, kt, ldk, s, ldk, false, [&](int64_t i, int64_t r) {
    return Span{round_up(valid_keys(a, i0 + i + r - 1), kLanes), 0, a.E};
  });
}

void forward_panel(const AttentionArgs& a, int64_t bh, int64_t i0, HeadAttentionScratch& sc) {
  const int64_t S = a.S, E = a.E, Ev = a.Ev, rows = min_of(kHeadPanelRows, a.L - i0);
  const int64_t ldk = round_up(S, kAlign), evn = round_up(Ev, kLanes);
  const float* q = head_base(static_cast<const float*>(a.q), a.qs, a, bh);
  const float* k = head_base(static_cast<const float*>(a.k), a.ks, a, bh);
  const float* v = head_base(static_cast<const float*>(a.v), a.vs, a, bh);
  const float* mask = a.mask ? head_base(static_cast<const float*>(a.mask), a.ms, a, bh) : nullptr;
  // K^T (the B of the scores), and V's rows where they are not whole vectors (the B of P V), once
  // per head in this thread's run of tasks.
  float* kt = sc.kt.get(E * ldk);
  const bool pack_v = Ev % kLanes != 0;
  const float* vr = pack_v ? sc.v_rows.get(S * evn) : v;
  const int64_t ldv = pack_v ? evn : a.vs.row;
  if (sc.packed_bh != bh) {
    pack_transposed(k, a.ks.row, S, E, kt, ldk);
    if (pack_v) pack_rows(v, a.vs.row, S, Ev, sc.v_rows.data, evn);
    sc.packed_bh = bh;
  }
  float* s = sc.s.get(rows * ldk);
  scores(a, q, i0, rows, kt, ldk, s);
  // The panel's widest row of weights: the P V blocks below read no column past it.
  const int64_t width = round_up(valid_keys(a, i0 + rows - 1), kLanes);
  float mx[kHeadPanelRows], l[kHeadPanelRows];
  const float scale = static_cast<float>(a.scale);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t valid = valid_keys(a, i0 + r);
    l[r] = softmax_row(s + r * ldk, valid, width, scale, mask_row(a, mask, i0 + r, valid, sc.mask_row), &mx[r]);
  }
  float* out = head_base(static_cast<float*>(a.out), a.os, a, bh) + i0 * a.os.row;
  float* lse = static_cast<float*>(a.lse) + bh * a.L + i0;
  float inv_l[kHeadPanelRows];
  for (int64_t r = 0; r < rows; ++r) {
    const bool empty = l[r] == 0.0f;  // every key masked
    inv_l[r] = empty ? 0.0f : 1.0f / l[r];
    lse[r] = empty ? kNegInf : mx[r] + logf(l[r]);
  }
  // out = (P V) / l, each row divided as its tile is stored.
  RowsOut to_out;
  to_out.p = out;
  to_out.ld = a.os.row;
  to_out.cols = Ev;
  to_out.row_scale = inv_l;
  product(rows, evn, s, ldk, 1, vr, ldv, nullptr, evn, false,
          [&](int64_t i, int64_t r) { return Span{evn, 0, valid_keys(a, i0 + i + r - 1)}; }, to_out);
}

void backward_head(const AttentionArgs& a, int64_t bh, HeadAttentionScratch& sc) {
  const int64_t L = a.L, S = a.S, E = a.E, Ev = a.Ev;
  const int64_t ldk = round_up(S, kAlign), en = round_up(E, kLanes), evn = round_up(Ev, kLanes);
  const float* q = head_base(static_cast<const float*>(a.q), a.qs, a, bh);
  const float* k = head_base(static_cast<const float*>(a.k), a.ks, a, bh);
  const float* v = head_base(static_cast<const float*>(a.v), a.vs, a, bh);
  const float* go = head_base(static_cast<const float*>(a.grad_out), a.gs, a, bh);
  const float* out = head_base(static_cast<const float*>(a.out), a.os, a, bh);
  const float* mask = a.mask ? head_base(static_cast<const float*>(a.mask), a.ms, a, bh) : nullptr;
  const float* lse = static_cast<const float*>(a.lse) + bh * L;
  float* kt = sc.kt.get(E * ldk);
  float* vt = sc.vt.get(Ev * ldk);
  pack_transposed(k, a.ks.row, S, E, kt, ldk);
  pack_transposed(v, a.vs.row, S, Ev, vt, ldk);
  int64_t ldkr = 0, ldq = 0, ldgo = 0;
  const float* kr = b_rows(k, a.ks.row, S, E, sc.k_rows, ldkr);     // the B of dQ = dS K
  const float* qr = b_rows(q, a.qs.row, L, E, sc.q_rows, ldq);      // the B of dK = dS^T Q
  const float* gr = b_rows(go, a.gs.row, L, Ev, sc.go_rows, ldgo);  // the B of dV = P^T dO
  float* d = sc.d.get(L);
  for (int64_t i = 0; i < L; ++i) d[i] = dot_row(go + i * a.gs.row, out + i * a.os.row, Ev);
  float* dk = sc.dk.get(S * en);
  float* dv = sc.dv.get(S * evn);
  fill_zero(dk, S * en);
  fill_zero(dv, S * evn);
  const float scale = static_cast<float>(a.scale);
  float* dqp = head_base(static_cast<float*>(a.dq), a.dqs, a, bh);
  float* dkp = head_base(static_cast<float*>(a.dk), a.dks, a, bh);
  float* dvp = head_base(static_cast<float*>(a.dv), a.dvs, a, bh);
  int64_t keys_stored = 0;  // dk's and dv's rows [0, keys_stored) written by the last panel
  for (int64_t i0 = 0; i0 < L; i0 += kHeadPanelRows) {
    const int64_t rows = min_of(kHeadPanelRows, L - i0);
    const int64_t keys = valid_keys(a, i0 + rows - 1), width = round_up(keys, kLanes);
    float* s = sc.s.get(rows * ldk);
    float* dp = sc.dp.get(rows * ldk);
    scores(a, q, i0, rows, kt, ldk, s);
    // dP = dO V^T over the same columns as the scores.
    product(rows, width, go + i0 * a.gs.row, a.gs.row, 1, vt, ldk, dp, ldk, false,
            [&](int64_t i, int64_t r) { return Span{round_up(valid_keys(a, i0 + i + r - 1), kLanes), 0, Ev}; });
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t valid = valid_keys(a, i0 + r);
      softmax_grad_row(s + r * ldk, dp + r * ldk, valid, width, scale, mask_row(a, mask, i0 + r, valid, sc.mask_row),
                       lse[i0 + r], d[i0 + r]);
    }
    // dQ = scale dS K for the panel's rows, whole (every key of a row is in the panel's dS), into
    // dq's rows.
    RowsOut to_dq;
    to_dq.p = dqp + i0 * a.dqs.row;
    to_dq.ld = a.dqs.row;
    to_dq.cols = E;
    to_dq.scale = scale;
    product(rows, en, dp, ldk, 1, kr, ldkr, nullptr, en, false,
            [&](int64_t i, int64_t r) { return Span{en, 0, valid_keys(a, i0 + i + r - 1)}; }, to_dq);
    // dV += P^T dO and dK += dS^T Q over the keys the panel sees; causal: a block of keys from j on
    // sums over the panel's rows from query j on (the weights of the rows before are 0). The last
    // panel's sums are the gradients: they go to dv's and dk's rows (dK times the scale).
    auto from_first_key = [&](int64_t n) {
      return [&, n](int64_t j, int64_t) {
        return Span{n, a.causal ? min_of(j - i0 > 0 ? j - i0 : 0, rows) : 0, rows};
      };
    };
    const bool last = i0 + rows == L;
    RowsOut to_dv, to_dk;
    if (last) {
      to_dv.p = dvp;
      to_dv.ld = a.dvs.row;
      to_dv.cols = Ev;
      to_dk.p = dkp;
      to_dk.ld = a.dks.row;
      to_dk.cols = E;
      to_dk.scale = scale;
      keys_stored = keys;
    }
    product(keys, evn, s, 1, ldk, gr + i0 * ldgo, ldgo, dv, evn, true, from_first_key(evn), to_dv);
    product(keys, en, dp, 1, ldk, qr + i0 * ldq, ldq, dk, en, true, from_first_key(en), to_dk);
  }
  // Keys no query row sees (causal, S > L): gradient 0, from the zeroed buffers.
  for (int64_t j = keys_stored; j < S; ++j) {
    scale_row(dk + j * en, E, scale, dkp + j * a.dks.row);
    scale_row(dv + j * evn, Ev, 1.0f, dvp + j * a.dvs.row);
  }
}

constexpr AttentionHeadFns kFns = {COLONY_ISA_COPY_NAME(COLONY_ATTENTION_HEAD_ISA), forward_panel, backward_head};

}  // namespace

const AttentionHeadFns& attention_head_fns() { return kFns; }

}  // namespace colony::kernels::cpu::COLONY_ATTENTION_HEAD_ISA
