// Fused attention on the CPU (kernels/common/attention.h has the algorithm). Everything is computed
// in the compute type C (float for float32/float16/bfloat16, double for float64): each (b, h)'s
// operands are packed once into C buffers laid out for the one register-tiled product below
// (gemm_rows), which also converts 16-bit inputs and absorbs arbitrary row strides. Without
// dropout and with at most 256 keys, float32 takes attention_head.h's whole-row kernels instead (16
// lanes where the CPU has AVX-512), and so do 16-bit inputs where AMX is not active, widened first;
// these tiles keep float64, dropout and longer sequences.
#include "kernels/common/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/attention_head.h"
#include "kernels/cpu/attention_rows.h"
#include "kernels/cpu/attention_short_amx.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

namespace colony::kernels::cpu {
namespace {

using simd::kLanes;
using simd::Vec;

// Query rows and key columns per tile. 32 x 32 keeps a tile's scores (4 KiB in float) and the
// operand rows it touches in L1, and wastes at most half a tile above a causal diagonal.
constexpr int64_t kBr = 32;
constexpr int64_t kBc = 32;

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// exp over 8 floats (Cephes' expf: range reduction by ln 2 and a degree-5 polynomial, within
// 2 ulp); inputs below -87.3 (masked scores are -inf) give exactly 0.
inline simd::Float8 exp_vec(simd::Float8 x) {
  using simd::splat;
  const simd::Int32x8 tiny = x < splat(-87.3f);
  x = x > splat(88.3f) ? splat(88.3f) : x;
  x = x < splat(-87.3f) ? splat(-87.3f) : x;
  simd::Float8 fx = x * splat(1.44269504088896341f) + splat(0.5f);
  simd::Int32x8 n = __builtin_convertvector(fx, simd::Int32x8);
  n += (__builtin_convertvector(n, simd::Float8) > fx);  // truncation to floor: -1 where it rounded up
  fx = __builtin_convertvector(n, simd::Float8);
  x = x - fx * splat(0.693359375f) - fx * splat(-2.12194440e-4f);
  simd::Float8 y = splat(1.9875691500e-4f);
  y = y * x + splat(1.3981999507e-3f);
  y = y * x + splat(8.3334519073e-3f);
  y = y * x + splat(4.1665795894e-2f);
  y = y * x + splat(1.6666665459e-1f);
  y = y * x + splat(5.0000001201e-1f);
  y = y * (x * x) + x + splat(1.0f);
  simd::Int32x8 pow2 = (n + splat(127)) << 23;
  simd::Float8 r;
  simd::Float8 p;
  std::memcpy(&p, &pow2, sizeof(p));
  r = y * p;
  simd::Int32x8 bits;
  std::memcpy(&bits, &r, sizeof(bits));
  bits &= ~tiny;
  std::memcpy(&r, &bits, sizeof(r));
  return r;
}

// float64 keeps libm's exp: gradcheck needs the last bits.
inline simd::Double4 exp_vec(simd::Double4 x) {
  return simd::Double4{std::exp(x[0]), std::exp(x[1]), std::exp(x[2]), std::exp(x[3])};
}

// C[r, 0:n] (+)= sum_k A[r, k] * B[k, 0:n] for r < m, n a multiple of the lane count: blocks of
// R rows by two vectors, A's elements broadcast, B's rows loaded once per block of rows.
template <int R, int NV, typename C>
inline void gemm_block(int64_t kdim, const C* A, int64_t lda, const C* B, int64_t ldb, C* Cm, int64_t ldc, bool acc) {
  constexpr int L = kLanes<C>;
  Vec<C> c[R][NV];
  COLONY_UNROLL
  for (int r = 0; r < R; ++r) {
    COLONY_UNROLL
    for (int v = 0; v < NV; ++v) c[r][v] = acc ? simd::load(Cm + r * ldc + v * L) : Vec<C>{};
  }
  for (int64_t k = 0; k < kdim; ++k) {
    Vec<C> b[NV];
    COLONY_UNROLL
    for (int v = 0; v < NV; ++v) b[v] = simd::load(B + k * ldb + v * L);
    COLONY_UNROLL
    for (int r = 0; r < R; ++r) {
      const Vec<C> a = simd::splat(A[r * lda + k]);
      COLONY_UNROLL
      for (int v = 0; v < NV; ++v) c[r][v] += a * b[v];
    }
  }
  COLONY_UNROLL
  for (int r = 0; r < R; ++r) {
    COLONY_UNROLL
    for (int v = 0; v < NV; ++v) simd::store(Cm + r * ldc + v * L, c[r][v]);
  }
}

template <int R, typename C>
inline void gemm_row_block(int64_t n, int64_t kdim, const C* A, int64_t lda, const C* B, int64_t ldb, C* Cm,
                           int64_t ldc, bool acc) {
  constexpr int L = kLanes<C>;
  int64_t j = 0;
  for (; j + 2 * L <= n; j += 2 * L) gemm_block<R, 2>(kdim, A, lda, B + j, ldb, Cm + j, ldc, acc);
  if (j < n) gemm_block<R, 1>(kdim, A, lda, B + j, ldb, Cm + j, ldc, acc);
}

// 6 rows by 2 vectors is AVX2's largest block: 12 accumulators, 2 loads of B and 6 broadcasts of
// A per 12 FMAs, within the 16 vector registers.
// `limit(r_end)` caps n (kLimitN) or kdim (kLimitK) for the block of rows ending at r_end: on a
// causal diagonal tile the upper rows see fewer keys, so their scores need fewer columns and their
// P V product fewer terms (the weights past them are exactly 0).
struct NoLimit {
  int64_t operator()(int64_t) const { return std::numeric_limits<int64_t>::max(); }
};
enum class Limit { N, K };

template <typename C, Limit kWhich = Limit::N, typename F = NoLimit>
void gemm_rows(int64_t m, int64_t n, int64_t kdim, const C* A, int64_t lda, const C* B, int64_t ldb, C* Cm,
               int64_t ldc, bool acc, F limit = {}) {
  auto block = [&](auto rows_tag, int64_t r) {
    constexpr int R = decltype(rows_tag)::value;
    const int64_t cap = limit(r + R);
    const int64_t nn = kWhich == Limit::N ? std::min(n, cap) : n;
    const int64_t kk = kWhich == Limit::K ? std::min(kdim, cap) : kdim;
    if (nn > 0) gemm_row_block<R>(nn, kk, A + r * lda, lda, B, ldb, Cm + r * ldc, ldc, acc);
  };
  // A remainder of 2 rows would run at a third of the block's rate: 32 rows go as 6+6+6+6+4+4.
  const int64_t sixes = m % 6 == 2 && m >= 8 ? m / 6 - 1 : m / 6;
  int64_t r = 0;
  for (; r < 6 * sixes; r += 6) block(std::integral_constant<int, 6>{}, r);
  for (; r + 4 <= m; r += 4) block(std::integral_constant<int, 4>{}, r);
  for (; r + 2 <= m; r += 2) block(std::integral_constant<int, 2>{}, r);
  for (; r < m; ++r) block(std::integral_constant<int, 1>{}, r);
}

// dst[r, c] = scale * src[r * row_stride + c] for r < rows, c < cols; zero up to [rows_pad, ld).
template <typename T, typename C>
void pack_rows(const T* src, int64_t row_stride, int64_t rows, int64_t cols, C scale, C* dst, int64_t rows_pad,
               int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* s = src + r * row_stride;
    C* d = dst + r * ld;
    for (int64_t c = 0; c < cols; ++c) d[c] = scale * static_cast<C>(s[c]);
    std::fill(d + cols, d + ld, C(0));
  }
  std::fill(dst + rows * ld, dst + rows_pad * ld, C(0));
}

// dst[c, r] = src[r * row_stride + c]: [cols, ld] with rows zero-padded to ld.
// Eight source rows at a time, so each destination row gets 8 adjacent elements (one vector
// store's worth) while the 8 source rows stay in L1.
template <typename T, typename C>
void pack_transposed(const T* src, int64_t row_stride, int64_t rows, int64_t cols, C* dst, int64_t ld) {
  std::fill(dst, dst + cols * ld, C(0));
  constexpr int64_t kRows = 8;
  int64_t r0 = 0;
  for (; r0 + kRows <= rows; r0 += kRows) {
    const T* s = src + r0 * row_stride;
    for (int64_t c = 0; c < cols; ++c) {
      C* d = dst + c * ld + r0;
      COLONY_UNROLL
      for (int64_t r = 0; r < kRows; ++r) d[r] = static_cast<C>(s[r * row_stride + c]);
    }
  }
  for (int64_t r = r0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[c * ld + r] = static_cast<C>(src[r * row_stride + c]);
  }
}

// Adds the mask and the causal and padding -inf to one tile of scores: rows i0.., columns j0 to
// j0 + width (kBc here, a key block on the AMX path), the columns past S included.
template <typename C>
void mask_tile(const AttentionArgs& a, const C* mask, int64_t rows, int64_t i0, int64_t j0, C* s, int64_t lds,
               int64_t width = kBc) {
  const C ninf = -std::numeric_limits<C>::infinity();
  const int64_t cols = std::min(width, a.S - j0);
  for (int64_t r = 0; r < rows; ++r) {
    C* row = s + r * lds;
    if (mask != nullptr) {
      const C* m = mask + (i0 + r) * a.ms.row + j0 * a.ms.col;
      for (int64_t c = 0; c < cols; ++c) row[c] += m[c * a.ms.col];
    }
    // Causal: columns after the diagonal; beyond S: the tile's padding.
    const int64_t valid = a.causal ? std::min(cols, std::max<int64_t>(0, i0 + r - j0 + 1)) : cols;
    for (int64_t c = valid; c < width; ++c) row[c] = ninf;
  }
}

// Multiplies P (rows x width, rows ld apart) by the dropout factors of its weights; `dp` too when
// given.
template <typename C>
void apply_dropout(const AttentionArgs& a, uint64_t seed, uint64_t offset, int64_t bh, int64_t rows, int64_t i0,
                   int64_t j0, C* p, C* dp, int64_t width = kBc, int64_t ld = kBc) {
  const float keep = static_cast<float>(1.0 - a.dropout_p), inv_keep = 1.0f / keep;
  const int64_t cols = std::min(width, a.S - j0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const C z = attention_dropout_factor(seed, offset, bh, i0 + r, j0 + c, a.L, a.S, keep, inv_keep);
      p[r * ld + c] *= z;
      if (dp != nullptr) dp[r * ld + c] *= z;
    }
  }
}

// One row of a tile of scores sr[0, width) (width a multiple of the lane count) becomes its weights
// exp(s - m) under the row's new running max m, with the running sum l updated; returns the factor
// alpha = exp(m_old - m) by which the row's output accumulator must be rescaled.
template <typename C>
inline C online_softmax_row(C* sr, int64_t width, C& m, C& l) {
  constexpr int L = kLanes<C>;
  Vec<C> vmx = simd::load(sr);
  for (int64_t c = L; c < width; c += L) {
    const Vec<C> x = simd::load(sr + c);
    vmx = x > vmx ? x : vmx;
  }
  C mx = m;
  for (int i = 0; i < L; ++i) mx = std::max(mx, vmx[i]);
  // While every score so far is -inf the row has nothing to weigh: p = 0 (not exp(nan)).
  const C shift = mx == -std::numeric_limits<C>::infinity() ? C(0) : mx;
  const C alpha = m == -std::numeric_limits<C>::infinity() ? C(0) : std::exp(m - mx);
  Vec<C> sum{};
  for (int64_t c = 0; c < width; c += L) {
    const Vec<C> p = exp_vec(simd::load(sr + c) - simd::splat(shift));
    simd::store(sr + c, p);
    sum += p;
  }
  l = l * alpha + simd::hsum<C>(sum);
  m = mx;
  return alpha;
}

// The rows of one (b, h): base pointers of its operands.
template <typename T, typename C>
struct Head {
  const T *q, *k, *v;
  const C* mask;
  Head(const AttentionArgs& a, int64_t bh) {
    const int64_t b = bh / a.heads, h = bh % a.heads;
    q = static_cast<const T*>(a.q) + b * a.qs.b + h * a.qs.h;
    k = static_cast<const T*>(a.k) + b * a.ks.b + h * a.ks.h;
    v = static_cast<const T*>(a.v) + b * a.vs.b + h * a.vs.h;
    mask = a.mask ? static_cast<const C*>(a.mask) + b * a.ms.b + h * a.ms.h : nullptr;
  }
};

void forward_amx(const AttentionArgs& a);
void backward_amx(const AttentionArgs& a);

template <typename T>
void forward(const AttentionArgs& a) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (short_amx_attention_applies(a)) return short_amx_attention_forward(a);
    if (has_amx_gemm()) return forward_amx(a);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (head_attention_applies(a)) return head_attention_forward(a);
  }
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
    if (widened_head_attention_applies(a)) return widened_head_attention_forward(a);
  }
  using C = compute_t<T>;
  constexpr int L = kLanes<C>;
  const int64_t E = a.E, Ev = a.Ev, Spad = round_up(a.S, kBc), Evp = round_up(Ev, L);
  const int64_t q_tiles = (a.L + kBr - 1) / kBr;
  uint64_t seed = 0, offset = 0;
  if (a.dropout_p > 0) philox_unpack(a.philox, seed, offset);
  const C scale = static_cast<C>(a.scale);
  parallel_for(a.batch * a.heads * q_tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<C> kt(E * Spad), vp(Spad * Evp), qp(kBr * E), s(kBr * kBc), o(kBr * Evp);
    C m[kBr], l[kBr];
    int64_t packed_bh = -1;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bh = task / q_tiles, i0 = (task % q_tiles) * kBr, rows = std::min(kBr, a.L - i0);
      const Head<T, C> hd(a, bh);
      // Keys transposed ([E, Spad], the B of q k^T) and values as rows ([Spad, Evp]), once per
      // (b, h) in this chunk of tasks.
      if (bh != packed_bh) {
        pack_transposed(hd.k, a.ks.row, a.S, E, kt.data(), Spad);
        pack_rows(hd.v, a.vs.row, a.S, Ev, C(1), vp.data(), Spad, Evp);
        packed_bh = bh;
      }
      pack_rows(hd.q + i0 * a.qs.row, a.qs.row, rows, E, scale, qp.data(), rows, E);  // scale folded into q
      std::fill(o.begin(), o.end(), C(0));
      std::fill(m, m + kBr, -std::numeric_limits<C>::infinity());
      std::fill(l, l + kBr, C(0));
      // Causal: key tiles wholly right of the tile's last row are skipped.
      const int64_t s_end = a.causal ? std::min(a.S, i0 + rows) : a.S;
      for (int64_t j0 = 0; j0 < s_end; j0 += kBc) {
        // Causal: rows before r_end see columns up to (i0 + r_end - 1) - j0 of this tile.
        auto seen = [&](int64_t r_end) { return a.causal ? round_up(std::max<int64_t>(0, i0 + r_end - j0), L) : kBc; };
        gemm_rows<C, Limit::N>(rows, kBc, E, qp.data(), E, kt.data() + j0, Spad, s.data(), kBc, false, seen);
        mask_tile(a, hd.mask, rows, i0, j0, s.data(), kBc);
        for (int64_t r = 0; r < rows; ++r) {
          const C alpha = online_softmax_row(s.data() + r * kBc, kBc, m[r], l[r]);
          if (alpha != C(1)) {
            C* orow = o.data() + r * Evp;
            for (int64_t e = 0; e < Evp; ++e) orow[e] *= alpha;
          }
        }
        if (a.dropout_p > 0) apply_dropout<C>(a, seed, offset, bh, rows, i0, j0, s.data(), nullptr);
        gemm_rows<C, Limit::K>(rows, Evp, kBc, s.data(), kBc, vp.data() + j0 * Evp, Evp, o.data(), Evp, true, seen);
      }
      T* out = head_base(static_cast<T*>(a.out), a.os, a, bh) + i0 * a.os.row;
      C* lse = static_cast<C*>(a.lse) + bh * a.L + i0;
      for (int64_t r = 0; r < rows; ++r) {
        const bool empty = l[r] == C(0);  // every key masked
        const C inv = empty ? C(0) : C(1) / l[r];
        for (int64_t e = 0; e < Ev; ++e) out[r * a.os.row + e] = static_cast<T>(o[r * Evp + e] * inv);
        lse[r] = empty ? -std::numeric_limits<C>::infinity() : m[r] + std::log(l[r]);
      }
    }
  });
}

template <typename T>
void backward(const AttentionArgs& a) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (short_amx_attention_applies(a)) return short_amx_attention_backward(a);
    if (has_amx_gemm()) return backward_amx(a);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (head_attention_applies(a)) return head_attention_backward(a);
  }
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
    if (widened_head_attention_applies(a)) return widened_head_attention_backward(a);
  }
  using C = compute_t<T>;
  constexpr int L = kLanes<C>;
  const int64_t E = a.E, Ev = a.Ev, Spad = round_up(a.S, kBc), Lpad = round_up(a.L, kBr);
  const int64_t Ep = round_up(E, L), Evp = round_up(Ev, L);
  uint64_t seed = 0, offset = 0;
  if (a.dropout_p > 0) philox_unpack(a.philox, seed, offset);
  const C scale = static_cast<C>(a.scale);
  parallel_for(a.batch * a.heads, 1, [&](int64_t begin, int64_t end) {
    // Per (b, h): q scaled ([Lpad, Ep], the A of q k^T and the B of dS^T q), keys transposed and
    // scaled keys as rows, values transposed, dO as rows; dQ accumulates over all key tiles.
    std::vector<C> qp(Lpad * Ep), kt(E * Spad), kp(Spad * Ep), vt(Ev * Spad), dop(Lpad * Evp), dq(Lpad * Ep);
    std::vector<C> dk(kBc * Ep), dv(kBc * Evp), d(Lpad), lse(Lpad);
    std::vector<C> p(kBr * kBc), dp(kBr * kBc), pt(kBc * kBr), dst(kBc * kBr);
    for (int64_t bh = begin; bh < end; ++bh) {
      const Head<T, C> hd(a, bh);
      pack_rows(hd.q, a.qs.row, a.L, E, scale, qp.data(), Lpad, Ep);
      pack_transposed(hd.k, a.ks.row, a.S, E, kt.data(), Spad);
      pack_rows(hd.k, a.ks.row, a.S, E, scale, kp.data(), Spad, Ep);
      pack_transposed(hd.v, a.vs.row, a.S, Ev, vt.data(), Spad);
      const T* go = head_base(static_cast<const T*>(a.grad_out), a.gs, a, bh);
      const T* out = head_base(static_cast<const T*>(a.out), a.os, a, bh);
      pack_rows(go, a.gs.row, a.L, Ev, C(1), dop.data(), Lpad, Evp);
      for (int64_t i = 0; i < a.L; ++i) {
        C acc = 0;
        for (int64_t e = 0; e < Ev; ++e) acc += dop[i * Evp + e] * static_cast<C>(out[i * a.os.row + e]);
        d[i] = acc;
        lse[i] = static_cast<const C*>(a.lse)[bh * a.L + i];
      }
      std::fill(dq.begin(), dq.end(), C(0));
      for (int64_t j0 = 0; j0 < a.S; j0 += kBc) {
        std::fill(dk.begin(), dk.end(), C(0));
        std::fill(dv.begin(), dv.end(), C(0));
        // Causal: query rows above the tile's first key see none of it.
        for (int64_t i0 = a.causal ? j0 / kBr * kBr : 0; i0 < a.L; i0 += kBr) {
          const int64_t rows = std::min(kBr, a.L - i0);
          gemm_rows(rows, kBc, E, qp.data() + i0 * Ep, Ep, kt.data() + j0, Spad, p.data(), kBc, false);
          mask_tile(a, hd.mask, rows, i0, j0, p.data(), kBc);
          for (int64_t r = 0; r < rows; ++r) {
            C* pr = p.data() + r * kBc;
            const C li = lse[i0 + r];
            if (li == -std::numeric_limits<C>::infinity()) {
              std::fill(pr, pr + kBc, C(0));
            } else {
              for (int64_t c = 0; c < kBc; c += L) simd::store(pr + c, exp_vec(simd::load(pr + c) - simd::splat(li)));
            }
          }
          gemm_rows(rows, kBc, Ev, dop.data() + i0 * Evp, Evp, vt.data() + j0, Spad, dp.data(), kBc, false);
          // p becomes P~ (dropped and rescaled) for dV; dp becomes dP = dP~ * Z.
          std::vector<C>& pd = p;
          std::vector<C> p_plain;
          if (a.dropout_p > 0) {
            p_plain = p;
            apply_dropout<C>(a, seed, offset, bh, rows, i0, j0, pd.data(), dp.data());
          }
          const C* pp = a.dropout_p > 0 ? p_plain.data() : p.data();
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < kBc; ++c) {
              pt[c * kBr + r] = pd[r * kBc + c];
              dst[c * kBr + r] = pp[r * kBc + c] * (dp[r * kBc + c] - d[i0 + r]);
            }
          }
          gemm_rows(kBc, Evp, rows, pt.data(), kBr, dop.data() + i0 * Evp, Evp, dv.data(), Evp, true);
          gemm_rows(kBc, Ep, rows, dst.data(), kBr, qp.data() + i0 * Ep, Ep, dk.data(), Ep, true);
          // dQ += dS K (scale is in kp); dS back to rows from its transpose.
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < kBc; ++c) dp[r * kBc + c] = dst[c * kBr + r];
          }
          gemm_rows(rows, Ep, kBc, dp.data(), kBc, kp.data() + j0 * Ep, Ep, dq.data() + i0 * Ep, Ep, true);
        }
        const int64_t cols = std::min(kBc, a.S - j0);
        T* dkp = head_base(static_cast<T*>(a.dk), a.dks, a, bh) + j0 * a.dks.row;
        T* dvp = head_base(static_cast<T*>(a.dv), a.dvs, a, bh) + j0 * a.dvs.row;
        for (int64_t c = 0; c < cols; ++c) {
          for (int64_t e = 0; e < E; ++e) dkp[c * a.dks.row + e] = static_cast<T>(dk[c * Ep + e]);
          for (int64_t e = 0; e < Ev; ++e) dvp[c * a.dvs.row + e] = static_cast<T>(dv[c * Evp + e]);
        }
      }
      T* dqp = head_base(static_cast<T*>(a.dq), a.dqs, a, bh);
      for (int64_t i = 0; i < a.L; ++i) {
        for (int64_t e = 0; e < E; ++e) dqp[i * a.dqs.row + e] = static_cast<T>(dq[i * Ep + e]);
      }
    }
  });
}

// ---------- bfloat16 inputs on AMX tiles ----------
//
// Where the inputs are bfloat16 and AMX is active (has_amx_gemm(): not under COLONY_CPU_ISA below
// amx, nor on CPUs without it), the five products run on amx_gemm.h's tiles with float32
// accumulation, and everything between them stays in float32 as above: the scores, the online
// softmax's max and sum, the output accumulator, D and the gradients' sums. The weights P and the
// score gradients dS are rounded to bfloat16 before the products that take them (O += P V,
// dV += P^T dO, dK += dS^T Q, dQ += dS K), as PyTorch's CPU flash attention (its qk_reduced and
// grad_qk_reduced buffers) and FlashAttention-2 on GPUs do under bfloat16; the sums l and D use the
// unrounded float32 values. tests/kernels/attention_test.cc bounds the error against float64 and
// the widened path's.
//
// The float32 row loops between the products (the softmax's max and exponentials, dS = P (dP - D),
// the rounding of P and dS) are attention_rows.h's, 16 lanes wide where the CPU has AVX-512 (every
// AMX CPU does): at a GPT's 64 x 32 heads they, not the tiles, were most of attention's own time.
//
// Blocking. amx_gemm costs a tile configuration and an A copy per call, so the products are made
// as large as the algorithm allows rather than 32 x 32: the forward takes a tile of 32 query rows
// against a block of up to kAmxKeyBlock keys (all of them at the GPT's context of 64 and 256, so
// its softmax is not even online), the backward a tile of 32 keys against every query row that
// sees it. The scale multiplies the float32 scores (it is not folded into a rounded q) and the
// float32 sums of dQ and dK.
constexpr int64_t kAmxKeyBlock = 256;
constexpr int64_t kAmxCols = 16;   // columns of a C tile: packed B's column tiles
constexpr int64_t kAmxDepth = 32;  // depth of one tile step

const uint16_t* bits_of(const void* p) { return static_cast<const uint16_t*>(p); }
uint16_t* bits_of(void* p) { return static_cast<uint16_t*>(p); }

// The packed B of amx_pack_b(k, n, ...) from column j0 (a multiple of kAmxCols) on: column tiles
// are stored one after the other, each ceil(k / 32) steps deep.
const uint16_t* packed_columns_from(const uint16_t* packed, int64_t k, int64_t j0) {
  return packed + (j0 / kAmxCols) * amx_packed_b_size(k, kAmxCols);
}

// s[r * ld + c] *= scale for r < rows, c < width (a multiple of the lane count). The columns past
// the product's are scaled too: mask_tile overwrites them with -inf next.
void scale_rows(float* s, int64_t rows, int64_t width, int64_t ld, float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    float* sr = s + r * ld;
    for (int64_t c = 0; c < width; c += kLanes<float>) simd::store(sr + c, simd::load(sr + c) * simd::splat(scale));
  }
}

// online_softmax_row over attention_rows.h's loops (16 lanes where the CPU has AVX-512, as every
// AMX CPU does): the same steps, vec_math.h's exp.
float online_softmax_row_amx(const AttentionRowFns& f, float* sr, int64_t width, float& m, float& l) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const float mx = f.row_max(sr, width, m);
  // While every score so far is -inf the row has nothing to weigh: p = 0 (not exp(nan)).
  const float shift = mx == kNegInf ? 0.0f : mx;
  const float alpha = m == kNegInf ? 0.0f : std::exp(m - mx);
  l = l * alpha + f.exp_row(sr, width, shift);
  m = mx;
  return alpha;
}

void amx_product(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t a_row_stride, int64_t a_col_stride,
                 const uint16_t* packed_b, float* c, int64_t ldc, bool accumulate) {
  AmxGemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a;
  g.a_row_stride = a_row_stride;
  g.a_col_stride = a_col_stride;
  g.packed_b = packed_b;
  g.c_f32 = c;
  g.ldc = ldc;
  g.accumulate = accumulate;
  amx_gemm(g);
}

void forward_amx(const AttentionArgs& a) {
  using T = BFloat16;
  constexpr int L = kLanes<float>;
  const int64_t E = a.E, Ev = a.Ev, S = a.S;
  const int64_t q_tiles = (a.L + kBr - 1) / kBr;
  const int64_t key_blocks = (S + kAmxKeyBlock - 1) / kAmxKeyBlock;
  const int64_t ld = round_up(std::min(S, kAmxKeyBlock), kAmxCols);  // of the scores and weights
  const int64_t v_block = amx_packed_b_size(std::min(S, kAmxKeyBlock), Ev);
  uint64_t seed = 0, offset = 0;
  if (a.dropout_p > 0) philox_unpack(a.philox, seed, offset);
  const float scale = static_cast<float>(a.scale);
  const AttentionRowFns& rows_fns = active_attention_row_fns();
  parallel_for(a.batch * a.heads * q_tiles, 1, [&](int64_t begin, int64_t end) {
    // K^T packed whole (the B of q k^T, [E, S]); V packed per key block (the B of P V).
    std::vector<uint16_t> kt(amx_packed_b_size(E, S)), vp(key_blocks * v_block), p(kBr * ld);
    std::vector<float> s(kBr * ld), o(kBr * Ev);
    float m[kBr], l[kBr];
    int64_t packed_bh = -1;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bh = task / q_tiles, i0 = (task % q_tiles) * kBr, rows = std::min(kBr, a.L - i0);
      const Head<T, float> hd(a, bh);
      if (bh != packed_bh) {
        amx_pack_b(E, S, bits_of(hd.k), 1, a.ks.row, kt.data());
        for (int64_t b = 0; b < key_blocks; ++b) {
          const int64_t j0 = b * kAmxKeyBlock;
          amx_pack_b(std::min(kAmxKeyBlock, S - j0), Ev, bits_of(hd.v + j0 * a.vs.row), a.vs.row, 1,
                     vp.data() + b * v_block);
        }
        packed_bh = bh;
      }
      std::fill(o.begin(), o.end(), 0.0f);
      std::fill(m, m + kBr, -std::numeric_limits<float>::infinity());
      std::fill(l, l + kBr, 0.0f);
      const int64_t s_end = a.causal ? std::min(S, i0 + rows) : S;
      for (int64_t j0 = 0; j0 < s_end; j0 += kAmxKeyBlock) {
        const int64_t width = std::min(kAmxKeyBlock, S - j0);  // the block's keys
        // Causal: the keys any row of the tile sees, and the whole tiles of columns holding them;
        // the weights past them are zeros (the product below still sums over the block's width,
        // the depth V was packed with).
        const int64_t seen = std::min(width, s_end - j0), span = round_up(seen, kAmxCols);
        amx_product(rows, seen, E, bits_of(hd.q + i0 * a.qs.row), a.qs.row, 1, packed_columns_from(kt.data(), E, j0),
                    s.data(), ld, false);
        scale_rows(s.data(), rows, span, ld, scale);
        mask_tile(a, hd.mask, rows, i0, j0, s.data(), ld, span);  // -inf from `seen` or before on
        for (int64_t r = 0; r < rows; ++r) {
          const float alpha = online_softmax_row_amx(rows_fns, s.data() + r * ld, span, m[r], l[r]);
          if (alpha != 1.0f) {
            float* orow = o.data() + r * Ev;
            for (int64_t e = 0; e < Ev; ++e) orow[e] *= alpha;
          }
        }
        if (a.dropout_p > 0) apply_dropout<float>(a, seed, offset, bh, rows, i0, j0, s.data(), nullptr, span, ld);
        const int64_t rounded = std::min(span, width);
        for (int64_t r = 0; r < rows; ++r) {
          uint16_t* pr = p.data() + r * ld;
          rows_fns.round_row(s.data() + r * ld, rounded, pr);
          std::fill(pr + rounded, pr + width, uint16_t{0});
        }
        amx_product(rows, Ev, width, p.data(), ld, 1, vp.data() + (j0 / kAmxKeyBlock) * v_block, o.data(), Ev, true);
      }
      T* out = head_base(static_cast<T*>(a.out), a.os, a, bh) + i0 * a.os.row;
      float* lse = static_cast<float*>(a.lse) + bh * a.L + i0;
      for (int64_t r = 0; r < rows; ++r) {
        const bool empty = l[r] == 0.0f;  // every key masked
        rows_fns.scale_round_row(o.data() + r * Ev, Ev, empty ? 0.0f : 1.0f / l[r], bits_of(out + r * a.os.row));
        lse[r] = empty ? -std::numeric_limits<float>::infinity() : m[r] + std::log(l[r]);
      }
    }
  });
  static_assert(kAmxKeyBlock % kAmxCols == 0 && kAmxCols % L == 0, "key blocks of whole tiles and vectors");
}

void backward_amx(const AttentionArgs& a) {
  using T = BFloat16;
  const int64_t E = a.E, Ev = a.Ev, S = a.S, Lq = a.L, Lpad = round_up(a.L, kBr);
  const int64_t key_tiles = (S + kBc - 1) / kBc, k_tile = amx_packed_b_size(std::min(S, kBc), E);
  uint64_t seed = 0, offset = 0;
  if (a.dropout_p > 0) philox_unpack(a.philox, seed, offset);
  const float scale = static_cast<float>(a.scale);
  const AttentionRowFns& rows_fns = active_attention_row_fns();
  parallel_for(a.batch * a.heads, 1, [&](int64_t begin, int64_t end) {
    // Per (b, h), packed once: K^T and V^T (the B of the scores and of dP, [E, S] and [Ev, S]), K
    // per tile of kBc keys (the B of dS K), dO and Q whole (the B of P^T dO and dS^T Q).
    std::vector<uint16_t> kt(amx_packed_b_size(E, S)), vt(amx_packed_b_size(Ev, S)), kp(key_tiles * k_tile);
    std::vector<uint16_t> dop(amx_packed_b_size(Lq, Ev)), qp(amx_packed_b_size(Lq, E));
    // Scores then weights, dP, in float32 for the query rows that see one key tile; P~ and dS
    // rounded, rows [Lpad, kBc] (read transposed as the A of P^T dO and dS^T Q).
    std::vector<float> p(Lpad * kBc), dp(Lpad * kBc), p_plain, dq(Lpad * E), dk(kBc * E), dv(kBc * Ev), d(Lpad);
    std::vector<uint16_t> pb(Lpad * kBc), dsb(Lpad * kBc);
    for (int64_t bh = begin; bh < end; ++bh) {
      const Head<T, float> hd(a, bh);
      const T* go = head_base(static_cast<const T*>(a.grad_out), a.gs, a, bh);
      const T* out = head_base(static_cast<const T*>(a.out), a.os, a, bh);
      const float* lse = static_cast<const float*>(a.lse) + bh * Lq;
      amx_pack_b(E, S, bits_of(hd.k), 1, a.ks.row, kt.data());
      amx_pack_b(Ev, S, bits_of(hd.v), 1, a.vs.row, vt.data());
      for (int64_t t = 0; t < key_tiles; ++t) {
        amx_pack_b(std::min(kBc, S - t * kBc), E, bits_of(hd.k + t * kBc * a.ks.row), a.ks.row, 1,
                   kp.data() + t * k_tile);
      }
      amx_pack_b(Lq, Ev, bits_of(go), a.gs.row, 1, dop.data());
      amx_pack_b(Lq, E, bits_of(hd.q), a.qs.row, 1, qp.data());
      for (int64_t i = 0; i < Lq; ++i) {
        d[i] = rows_fns.dot_bf16_row(bits_of(go + i * a.gs.row), bits_of(out + i * a.os.row), Ev);
      }
      std::fill(dq.begin(), dq.end(), 0.0f);
      std::fill(pb.begin(), pb.end(), uint16_t{0});
      std::fill(dsb.begin(), dsb.end(), uint16_t{0});
      for (int64_t j0 = 0; j0 < S; j0 += kBc) {
        const int64_t cols = std::min(kBc, S - j0);
        // Causal: query rows before j0 see none of the tile's keys. Their rows of pb and dsb stay
        // zero (the products below sum over all Lq rows), so the rows an earlier tile wrote are
        // cleared: i_start only grows.
        const int64_t i_start = a.causal ? std::min(j0, Lq) : 0, rows = Lq - i_start;
        if (a.causal && j0 > 0) {
          const int64_t prev = std::min(j0 - kBc, Lq);
          std::fill(pb.begin() + prev * kBc, pb.begin() + i_start * kBc, uint16_t{0});
          std::fill(dsb.begin() + prev * kBc, dsb.begin() + i_start * kBc, uint16_t{0});
        }
        if (rows == 0) {
          std::fill(dk.begin(), dk.end(), 0.0f);
          std::fill(dv.begin(), dv.end(), 0.0f);
        } else {
          float* pr0 = p.data() + i_start * kBc;
          float* dpr0 = dp.data() + i_start * kBc;
          amx_product(rows, cols, E, bits_of(hd.q + i_start * a.qs.row), a.qs.row, 1,
                      packed_columns_from(kt.data(), E, j0), pr0, kBc, false);
          amx_product(rows, cols, Ev, bits_of(go + i_start * a.gs.row), a.gs.row, 1, packed_columns_from(vt.data(), Ev, j0), dpr0,
                      kBc, false);
          scale_rows(pr0, rows, kBc, kBc, scale);
          mask_tile(a, hd.mask, rows, i_start, j0, pr0, kBc);
          for (int64_t r = 0; r < rows; ++r) {
            float* pr = pr0 + r * kBc;
            const float li = lse[i_start + r];
            if (li == -std::numeric_limits<float>::infinity()) {
              std::fill(pr, pr + kBc, 0.0f);
            } else {
              rows_fns.exp_row(pr, kBc, li);
            }
          }
          // p becomes P~ (dropped and rescaled) for dV; dp becomes dP = dP~ * Z.
          if (a.dropout_p > 0) {
            p_plain.assign(pr0, pr0 + rows * kBc);
            apply_dropout<float>(a, seed, offset, bh, rows, i_start, j0, pr0, dpr0);
          }
          const float* pp = a.dropout_p > 0 ? p_plain.data() : pr0;
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = i_start + r;
            float* dsr = dpr0 + r * kBc;  // dS in place of dP
            rows_fns.score_grad_row(pp + r * kBc, dsr, kBc, d[i]);
            rows_fns.round_row(pr0 + r * kBc, cols, pb.data() + i * kBc);
            rows_fns.round_row(dsr, cols, dsb.data() + i * kBc);
          }
          // dV = P~^T dO and dK = dS^T Q over every query row (A = pb, dsb read transposed), dQ += dS K
          // over the rows that see the tile.
          amx_product(cols, Ev, Lq, pb.data(), 1, kBc, dop.data(), dv.data(), Ev, false);
          amx_product(cols, E, Lq, dsb.data(), 1, kBc, qp.data(), dk.data(), E, false);
          amx_product(rows, E, cols, dsb.data() + i_start * kBc, kBc, 1, kp.data() + (j0 / kBc) * k_tile,
                      dq.data() + i_start * E, E, true);
        }
        T* dkp = head_base(static_cast<T*>(a.dk), a.dks, a, bh) + j0 * a.dks.row;
        T* dvp = head_base(static_cast<T*>(a.dv), a.dvs, a, bh) + j0 * a.dvs.row;
        for (int64_t c = 0; c < cols; ++c) {
          rows_fns.scale_round_row(dk.data() + c * E, E, scale, bits_of(dkp + c * a.dks.row));
          rows_fns.scale_round_row(dv.data() + c * Ev, Ev, 1.0f, bits_of(dvp + c * a.dvs.row));
        }
      }
      T* dqp = head_base(static_cast<T*>(a.dq), a.dqs, a, bh);
      for (int64_t i = 0; i < Lq; ++i) rows_fns.scale_round_row(dq.data() + i * E, E, scale, bits_of(dqp + i * a.dqs.row));
    }
  });
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

void AttentionForward::cpu(const AttentionArgs& args) {
  COLONY_DISPATCH_FLOATING(args.dtype, "scaled_dot_product_attention", [&] { cpu::forward<scalar_t>(args); });
}

void AttentionBackward::cpu(const AttentionArgs& args) {
  COLONY_DISPATCH_FLOATING(args.dtype, "scaled_dot_product_attention_backward", [&] { cpu::backward<scalar_t>(args); });
}

}  // namespace colony::kernels
