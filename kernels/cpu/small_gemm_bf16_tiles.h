// The bfloat16 register tiles of small_gemm_bf16.h, written once over a few vector primitives.
// Not a normal header: a .cc defines COLONY_SMALL_GEMM_ISA (the namespace of its copy) and
// COLONY_BF16_NATIVE, then includes this file, which defines that copy's small_gemm_bf16_fns().
//  - COLONY_BF16_NATIVE 1 (small_gemm_avx512_bf16.cc, built with -mavx512bf16): the primitives
//    are AVX-512 intrinsics, the product vdpbf16ps.
//  - COLONY_BF16_NATIVE 0 (small_gemm_bf16_emulated.cc, test-only): plain arrays and scalar float
//    arithmetic in vdpbf16ps' order (per lane: += the odd pair's product, then += the even one's;
//    products of two bfloat16 are exact in float32), so the tiling, pairing, blocking and tails
//    are tested on CPUs without the instruction. Unlike the instruction it keeps denormals.
//
// As in small_gemm_tiles.h, everything has internal linkage or lives in the copy's namespace, and
// no inline function of a shared header is instantiated here.
#if !defined(COLONY_SMALL_GEMM_ISA) || !defined(COLONY_BF16_NATIVE)
#error "define COLONY_SMALL_GEMM_ISA and COLONY_BF16_NATIVE before including small_gemm_bf16_tiles.h"
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/small_gemm_isa.h"
#include "kernels/cpu/small_gemm_tile_picking.h"

#if COLONY_BF16_NATIVE
#include <immintrin.h>
#endif

namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA {
namespace {

constexpr int kLanes = 16;  // float32 accumulators per vector; a vector holds 2 * kLanes bfloat16

// ---------- The primitives ----------
#if COLONY_BF16_NATIVE
using FloatV = __m512;
using Bf16V = __m512i;

inline FloatV zeros_f() { return _mm512_setzero_ps(); }
inline FloatV splat_f(float x) { return _mm512_set1_ps(x); }
inline FloatV load_f(const float* p) { return _mm512_loadu_ps(p); }
inline void store_f(float* p, FloatV v) { _mm512_storeu_ps(p, v); }
inline FloatV add_f(FloatV a, FloatV b) { return _mm512_add_ps(a, b); }

// The first n (0..32) bfloat16 from p, zeros after; masked, so nothing past p + n is read.
inline Bf16V load_bf16(const uint16_t* p, int64_t n) {
  if (n >= 2 * kLanes) return _mm512_loadu_si512(p);
  return _mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t(1) << n) - 1), p);
}

// Pair j of the result is (r0[j], r1[j]) for j < n (0..16), zeros after: two rows of B, paired
// along the reduction as vdpbf16ps wants them.
inline Bf16V interleave(const uint16_t* r0, const uint16_t* r1, int64_t n) {
  if (n <= 0) return _mm512_setzero_si512();
  alignas(64) static const uint16_t kIndex[2 * kLanes] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                          8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  __m256i x0, x1;
  if (n >= kLanes) {
    x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0));
    x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1));
  } else {
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
    x0 = _mm256_maskz_loadu_epi16(mask, r0);
    x1 = _mm256_maskz_loadu_epi16(mask, r1);
  }
  return _mm512_permutex2var_epi16(_mm512_castsi256_si512(x0), _mm512_load_si512(kIndex),
                                   _mm512_castsi256_si512(x1));
}

inline Bf16V splat_pair(uint32_t pair) { return _mm512_set1_epi32(static_cast<int>(pair)); }

// The first n (0..16) pairs of a pair-packed B (pack_bf16_b_pairs) from p, zeros after: what
// interleave() builds from two rows, read as it lies.
inline Bf16V load_pairs(const uint32_t* p, int64_t n) {
  if (n >= kLanes) return _mm512_loadu_si512(p);
  if (n <= 0) return _mm512_setzero_si512();
  return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << n) - 1), p);
}

// acc[i] += a[2i + 1] * b[2i + 1] + a[2i] * b[2i]
inline FloatV dot_pairs(FloatV acc, Bf16V a, Bf16V b) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }

#else  // emulated

struct FloatV {
  float v[kLanes];
};
struct Bf16V {
  uint16_t v[2 * kLanes];
};

inline FloatV zeros_f() { return FloatV{}; }
inline FloatV splat_f(float x) {
  FloatV r;
  for (float& e : r.v) e = x;
  return r;
}
inline FloatV load_f(const float* p) {
  FloatV r;
  std::memcpy(r.v, p, sizeof(r.v));
  return r;
}
inline void store_f(float* p, const FloatV& v) { std::memcpy(p, v.v, sizeof(v.v)); }
inline FloatV add_f(const FloatV& a, const FloatV& b) {
  FloatV r;
  for (int i = 0; i < kLanes; ++i) r.v[i] = a.v[i] + b.v[i];
  return r;
}
inline Bf16V load_bf16(const uint16_t* p, int64_t n) {
  Bf16V r{};
  std::memcpy(r.v, p, sizeof(uint16_t) * static_cast<size_t>(n < 2 * kLanes ? n : 2 * kLanes));
  return r;
}
inline Bf16V interleave(const uint16_t* r0, const uint16_t* r1, int64_t n) {
  Bf16V r{};
  for (int64_t j = 0; j < n && j < kLanes; ++j) {
    r.v[2 * j] = r0[j];
    r.v[2 * j + 1] = r1[j];
  }
  return r;
}
inline Bf16V load_pairs(const uint32_t* p, int64_t n) {
  Bf16V r{};
  for (int64_t j = 0; j < n && j < kLanes; ++j) {
    r.v[2 * j] = static_cast<uint16_t>(p[j]);
    r.v[2 * j + 1] = static_cast<uint16_t>(p[j] >> 16);
  }
  return r;
}
inline Bf16V splat_pair(uint32_t pair) {
  Bf16V r;
  for (int j = 0; j < kLanes; ++j) {
    r.v[2 * j] = static_cast<uint16_t>(pair);
    r.v[2 * j + 1] = static_cast<uint16_t>(pair >> 16);
  }
  return r;
}
inline float bf16_value(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
inline FloatV dot_pairs(FloatV acc, const Bf16V& a, const Bf16V& b) {
  for (int i = 0; i < kLanes; ++i) {
    acc.v[i] += bf16_value(a.v[2 * i + 1]) * bf16_value(b.v[2 * i + 1]);
    acc.v[i] += bf16_value(a.v[2 * i]) * bf16_value(b.v[2 * i]);
  }
  return acc;
}
#endif

// ---------- gemm_rows: MR rows of C x NV vectors of 16 columns, one pair of B rows per step ----------
// The float32 AVX-512 tiles' shapes: MR * NV accumulators, NV interleaved B vectors, a broadcast
// pair and the interleave's index in 32 registers.
constexpr Tile kRowsTiles[] = {{6, 4}, {8, 3}, {12, 2}};

// The high row of an odd k's last pair: zeros, as wide as the widest tile.
alignas(64) const uint16_t kZeroRow[4 * kLanes] = {};

// The tile computes NV vectors of columns and stores those in [lo, hi) (see gemm_rows_tiled).
// kFull: B has all NV * kLanes of the tile's columns, so no load is masked; otherwise it has hi.
// BT uint16_t: B's rows, b_rows[p] the offset of row p, each pair of rows interleaved as loaded;
// BT uint32_t: B pair-packed (pack_bf16_b_pairs), b_rows[q] the offset of pair row q.
template <int MR, int NV, bool kFull, typename BT>
inline void rows_tile(int64_t kc, const uint32_t* a, int64_t as, int64_t qs, const BT* b, const int64_t* b_rows,
                      float* c, const int64_t* c_rows, int64_t lo, int64_t hi, bool accumulate, const float* bias) {
  FloatV acc[MR][NV];
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    FloatV init = bias != nullptr ? splat_f(bias[i]) : zeros_f();
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) acc[i][v] = init;
  }
  // A's pairs lie along its rows (pair step 1, known here) unless B is pair-packed.
  const int64_t pair_step = std::is_same_v<BT, uint32_t> ? qs : 1;
  // Step q: B's pair q of rows (2q and 2q + 1; a zero row past an odd k) against A's pair q.
  auto step = [&](int64_t q, auto load_b) {
    Bf16V bv[NV];
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) bv[v] = load_b(v * kLanes, kFull ? kLanes : hi - v * kLanes);
    COLONY_TILE_UNROLL
    for (int i = 0; i < MR; ++i) {
      Bf16V av = splat_pair(a[i * as + q * pair_step]);
      COLONY_TILE_UNROLL
      for (int v = 0; v < NV; ++v) acc[i][v] = dot_pairs(acc[i][v], av, bv[v]);
    }
  };
  if constexpr (std::is_same_v<BT, uint32_t>) {
    for (int64_t q = 0; q < (kc + 1) / 2; ++q) {
      const uint32_t* row = b + b_rows[q];
      step(q, [&](int64_t col, int64_t count) { return load_pairs(row + col, count); });
    }
  } else {
    const int64_t pairs = kc / 2;
    for (int64_t q = 0; q < pairs; ++q) {
      const uint16_t *r0 = b + b_rows[2 * q], *r1 = b + b_rows[2 * q + 1];
      step(q, [&](int64_t col, int64_t count) { return interleave(r0 + col, r1 + col, count); });
    }
    if (kc % 2 != 0) {
      const uint16_t* r0 = b + b_rows[kc - 1];
      step(pairs, [&](int64_t col, int64_t count) { return interleave(r0 + col, kZeroRow, count); });
    }
  }
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    float* ci = c + c_rows[i];
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) {
      float* cv = ci + v * kLanes;
      const int64_t v_lo = v * kLanes, v_hi = v_lo + kLanes;
      if (lo <= v_lo && v_hi <= hi) {
        store_f(cv, accumulate ? add_f(load_f(cv), acc[i][v]) : acc[i][v]);
      } else {
        float tmp[kLanes];
        store_f(tmp, acc[i][v]);
        for (int64_t j = (lo > v_lo ? lo : v_lo); j < (hi < v_hi ? hi : v_hi); ++j) {
          cv[j - v_lo] = accumulate ? cv[j - v_lo] + tmp[j - v_lo] : tmp[j - v_lo];
        }
      }
    }
  }
}

// The last tile of m has fewer rows: instantiate every height up to MR.
template <int MR, int NV, bool kFull, typename BT>
inline void rows_tile_upto(int64_t mr, int64_t kc, const uint32_t* a, int64_t as, int64_t qs, const BT* b,
                           const int64_t* b_rows, float* c, const int64_t* c_rows, int64_t lo, int64_t hi,
                           bool accumulate, const float* bias) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      rows_tile_upto<MR - 1, NV, kFull, BT>(mr, kc, a, as, qs, b, b_rows, c, c_rows, lo, hi, accumulate, bias);
      return;
    }
  }
  rows_tile<MR, NV, kFull, BT>(kc, a, as, qs, b, b_rows, c, c_rows, lo, hi, accumulate, bias);
}

template <int MR, int NV, typename BT>
void gemm_rows_tiled(int64_t m, int64_t n, int64_t k, const uint32_t* a, int64_t as, int64_t qs, const BT* b,
                     const int64_t* b_rows, float* c, const int64_t* c_rows, bool accumulate, const float* bias) {
  constexpr int64_t NR = NV * kLanes;
  // Rows of B per pass: an even count, so every pass but the last starts on a pair.
  constexpr int64_t kBlockK = kPanelBytes / (NR * static_cast<int64_t>(sizeof(uint16_t))) / 2 * 2;
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    const int64_t kc = min64(kBlockK, k - k0);
    const bool acc = accumulate || k0 > 0;
    const float* bias_k = acc ? nullptr : bias;
    // When n is not a whole number of tiles, the last tile is the one that ends at column n: it
    // recomputes columns of the tile before and stores only its own, with no masked load (as in
    // small_gemm_tiles.h; the masked partial tile took 10 % of a bfloat16 LeNet step). Only a B
    // narrower than one tile is read with masks.
    const bool full = n >= NR;
    for (int64_t n0 = 0; n0 < n; n0 += NR) {
      const int64_t start = !full || n0 + NR <= n ? n0 : n - NR;  // the tile's first column
      const int64_t lo = n0 - start, hi = full ? NR : n;          // the columns it stores
      for (int64_t m0 = 0; m0 < m; m0 += MR) {
        auto run = [&](auto kFull) {
          // (B's rows, or pair rows, of this block: k0 is even.)
          rows_tile_upto<MR, NV, decltype(kFull)::value, BT>(
              min64(MR, m - m0), kc, a + m0 * as + k0 / 2 * qs, as, qs, b + start,
              b_rows + (std::is_same_v<BT, uint32_t> ? k0 / 2 : k0), c + start, c_rows + m0, lo, hi, acc,
              bias_k != nullptr ? bias_k + m0 : nullptr);
        };
        if (full) {
          run(std::true_type{});
        } else {
          run(std::false_type{});
        }
      }
    }
  }
}

template <typename BT, int... I>
void gemm_rows_impl(int64_t m, int64_t n, int64_t k, const uint32_t* a, int64_t as, int64_t qs, const BT* b,
                    const int64_t* b_rows, float* c, const int64_t* c_rows, bool accumulate, const float* bias) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (accumulate) return;
    for (int64_t i = 0; i < m; ++i) {
      const float v = bias != nullptr ? bias[i] : 0.0f;
      for (int64_t j = 0; j < n; ++j) c[c_rows[i] + j] = v;
    }
    return;
  }
  run_picked<I...>(pick_tile(kRowsTiles, sizeof...(I), m, n, kLanes), [&](auto index) {
    constexpr int idx = decltype(index)::value;
    gemm_rows_tiled<kRowsTiles[idx].mr, kRowsTiles[idx].nv, BT>(m, n, k, a, as, qs, b, b_rows, c, c_rows,
                                                                 accumulate, bias);
  });
}

// The table's two entries: B's rows with A's pairs along its rows, and B pair-packed with A's
// pair (i, q) at a[i * as + q * qs] (qs = m: A pair-packed down its columns).
template <int... I>
void gemm_rows_entry(int64_t m, int64_t n, int64_t k, const uint32_t* a, int64_t as, const uint16_t* b,
                     const int64_t* b_rows, float* c, const int64_t* c_rows, bool accumulate, const float* bias) {
  gemm_rows_impl<uint16_t, I...>(m, n, k, a, as, 1, b, b_rows, c, c_rows, accumulate, bias);
}
template <int... I>
void gemm_rows_paired_entry(int64_t m, int64_t n, int64_t k, const uint32_t* a, int64_t as, int64_t qs,
                            const uint32_t* b, const int64_t* b_rows, float* c, const int64_t* c_rows, bool accumulate,
                            const float* bias) {
  gemm_rows_impl<uint32_t, I...>(m, n, k, a, as, qs, b, b_rows, c, c_rows, accumulate, bias);
}

// ---------- gemm_dot_rows_lanes: MR x NR dot products, 32 elements of every row per step ----------
// In 32 registers, A's rows streamed one at a time: 8 x 3 (28), 6 x 4 (29) and 4 x 4 (21), as the
// float32 AVX-512 tiles (small_gemm_tiles.h has the measurements); ties go to the larger tile.
constexpr Tile kDotTiles[] = {{8, 3}, {6, 4}, {4, 4}};

template <int MR, int NR>
inline void dot_tile(int64_t kc, const uint16_t* a, int64_t lda, const uint16_t* const* brow, float* acc, int64_t n,
                     const DotBatch& batch) {
  constexpr int64_t kStep = 2 * kLanes;
  FloatV sum[MR][NR];
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i)
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) sum[i][j] = zeros_f();
  // Elements [p, p + count) of every row of product t (whose A and B start a_t and b_t elements
  // on); the tail's masked loads leave zeros past the end.
  auto step = [&](int64_t a_t, int64_t b_t, int64_t p, int64_t count) {
    Bf16V bv[NR];
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) bv[j] = load_bf16(brow[j] + b_t + p, count);
    COLONY_TILE_UNROLL
    for (int i = 0; i < MR; ++i) {
      const Bf16V av = load_bf16(a + a_t + i * lda + p, count);
      COLONY_TILE_UNROLL
      for (int j = 0; j < NR; ++j) sum[i][j] = dot_pairs(sum[i][j], av, bv[j]);
    }
  };
  for (int64_t t = 0; t < batch.count; ++t) {
    const int64_t a_t = t * batch.a_stride, b_t = t * batch.b_stride;
    int64_t p = 0;
    for (; p + kStep <= kc; p += kStep) step(a_t, b_t, p, kStep);
    if (p < kc) step(a_t, b_t, p, kc - p);
  }
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) {
      float* lanes = acc + (i * n + j) * kLanes;
      store_f(lanes, add_f(load_f(lanes), sum[i][j]));
    }
  }
}

template <int MR, int NR>
inline void dot_tile_upto(int64_t mr, int64_t nr, int64_t kc, const uint16_t* a, int64_t lda,
                          const uint16_t* const* brow, float* acc, int64_t n, const DotBatch& batch) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      dot_tile_upto<MR - 1, NR>(mr, nr, kc, a, lda, brow, acc, n, batch);
      return;
    }
  }
  if constexpr (NR > 1) {
    if (nr < NR) {
      dot_tile_upto<MR, NR - 1>(mr, nr, kc, a, lda, brow, acc, n, batch);
      return;
    }
  }
  dot_tile<MR, NR>(kc, a, lda, brow, acc, n, batch);
}

template <int MR, int NR>
void gemm_dot_tiled(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
                    const int64_t* b_rows, float* acc, const DotBatch& batch) {
  // Elements of every row per pass: a whole number of steps, (MR + NR) rows of them in L1.
  constexpr int64_t kBlockDot =
      kPanelBytes / ((MR + NR) * static_cast<int64_t>(sizeof(uint16_t))) / (2 * kLanes) * (2 * kLanes);
  for (int64_t k0 = 0; k0 < k; k0 += kBlockDot) {
    const int64_t kc = min64(kBlockDot, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
      const int64_t nr = min64(NR, n - j0);
      const uint16_t* brow[NR];
      for (int64_t j = 0; j < NR; ++j) brow[j] = b + b_rows[j0 + min64(j, nr - 1)] + k0;
      for (int64_t i0 = 0; i0 < m; i0 += MR) {
        dot_tile_upto<MR, NR>(min64(MR, m - i0), nr, kc, a + i0 * lda + k0, lda, brow, acc + (i0 * n + j0) * kLanes,
                              n, batch);
      }
    }
  }
}

template <int... I>
void gemm_dot_impl(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
                   const int64_t* b_rows, float* acc, DotBatch batch) {
  if (m <= 0 || n <= 0 || k <= 0 || batch.count <= 0) return;
  run_picked<I...>(pick_tile(kDotTiles, sizeof...(I), m, n, 1), [&](auto index) {
    constexpr int idx = decltype(index)::value;
    gemm_dot_tiled<kDotTiles[idx].mr, kDotTiles[idx].nv>(m, n, k, a, lda, b, b_rows, acc, batch);
  });
}

void gemm_dot_finish_impl(int64_t m, int64_t n, const float* acc, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const float* lanes = acc + (i * n + j) * kLanes;
      float s = 0.0f;
      for (int l = 0; l < kLanes; ++l) s += lanes[l];
      c[i * ldc + j] = s;
    }
  }
}

template <int... R, int... D>
constexpr SmallGemmBf16Fns make_fns(std::integer_sequence<int, R...>, std::integer_sequence<int, D...>) {
  return SmallGemmBf16Fns{COLONY_ISA_COPY_NAME(COLONY_SMALL_GEMM_ISA), kLanes, &gemm_rows_entry<R...>,
                          &gemm_rows_paired_entry<R...>, &gemm_dot_impl<D...>, &gemm_dot_finish_impl};
}

}  // namespace

const SmallGemmBf16Fns& small_gemm_bf16_fns() {
  static constexpr SmallGemmBf16Fns fns =
      make_fns(std::make_integer_sequence<int, sizeof(kRowsTiles) / sizeof(kRowsTiles[0])>{},
               std::make_integer_sequence<int, sizeof(kDotTiles) / sizeof(kDotTiles[0])>{});
  return fns;
}

}  // namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA

#undef COLONY_TILE_UNROLL
