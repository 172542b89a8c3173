// The register tiles of small_gemm.h, written once for any vector width. Not a normal header: a
// small_gemm_<isa>.cc defines COLONY_SMALL_GEMM_ISA (the namespace of its copy) and
// COLONY_SMALL_GEMM_VEC_BYTES (32 for AVX2, 64 for AVX-512), then includes this file, which
// defines that copy's small_gemm_fns<float> and small_gemm_fns<double> (small_gemm_isa.h).
//
// Everything here has internal linkage or lives in the ISA's namespace, and nothing from a shared
// header is instantiated (no std::min, std::fill): an inline function compiled with -march=x86-64-v4
// must never be the copy the linker keeps for the AVX2 code (small_gemm_isa_symbols_test checks).
#if !defined(COLONY_SMALL_GEMM_ISA) || !defined(COLONY_SMALL_GEMM_VEC_BYTES)
#error "define COLONY_SMALL_GEMM_ISA and COLONY_SMALL_GEMM_VEC_BYTES before including small_gemm_tiles.h"
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/small_gemm_isa.h"
#include "kernels/cpu/small_gemm_tile_picking.h"

namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA {
namespace {

constexpr int kVecBytes = COLONY_SMALL_GEMM_VEC_BYTES;
typedef float FloatV __attribute__((vector_size(kVecBytes)));
typedef double DoubleV __attribute__((vector_size(kVecBytes)));
template <typename T> struct VecOf;
template <> struct VecOf<float> { using type = FloatV; };
template <> struct VecOf<double> { using type = DoubleV; };
template <typename T> using Vec = typename VecOf<T>::type;
template <typename T> constexpr int kLanes = static_cast<int>(kVecBytes / sizeof(T));
// What comparing two Vec<T> gives: all ones in the lanes where it holds.
typedef int32_t Int32V __attribute__((vector_size(kVecBytes)));
typedef int64_t Int64V __attribute__((vector_size(kVecBytes)));
template <typename T> struct MaskOf;
template <> struct MaskOf<float> {
  using type = Int32V;
  using lane = int32_t;
};
template <> struct MaskOf<double> {
  using type = Int64V;
  using lane = int64_t;
};
template <typename T> using Mask = typename MaskOf<T>::type;

// Unaligned: rows of images start at arbitrary pixels.
template <typename T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// All ones in lanes [first, L), zeros in [0, first).
template <typename T>
inline Mask<T> lanes_from(int64_t first) {
  Mask<T> lane;
  COLONY_TILE_UNROLL
  for (int i = 0; i < kLanes<T>; ++i) lane[i] = i;
  return lane >= (Mask<T>{} + static_cast<typename MaskOf<T>::lane>(first));
}
// The vector at p where `keep` is set, zeros elsewhere. A partial load spelled as a memcpy into a
// zeroed vector compiled to a store and a wider reload under AVX-512, a store-forwarding stall
// that cost more than all the whole steps before it on LeNet's second-layer weight gradient.
template <typename T>
inline Vec<T> load_where(const T* p, const Mask<T>& keep) {
  return keep ? load(p) : Vec<T>{};
}
template <typename T>
inline void store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof(v));
}
// x - 0 is x for every x (x + 0 is not: it turns -0 into +0), so this is one broadcast; the
// addition spelling cost an add per broadcast and halved gemm_rows' speed.
template <typename T>
inline Vec<T> splat(T x) {
  return x - Vec<T>{};
}
// Pins v to a register: without it GCC folds a dot tile's loaded rows into every FMA that uses
// them (the 4 x 2 tile issued 10 loads per 8 FMAs instead of 6) and the loop turns load-bound.
// Pinned, and with the 4 x 3 tile below, LeNet's second-layer weight gradient went from 17.4 to
// 12.1 us per image (benchmarks/small_gemm_bench, AMD EPYC AVX2). Only where a vector is one
// register (not in the 64-byte emulation on AVX2).
template <typename T>
inline Vec<T> in_register(Vec<T> v) {
#if COLONY_SMALL_GEMM_VEC_BYTES == 32 || defined(__AVX512F__)
  asm("" : "+v"(v));
#endif
  return v;
}
template <typename V, size_t... I>
inline auto low_half(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, I...);
}
template <typename V, size_t... I>
inline auto high_half(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, (I + sizeof...(I))...);
}
// v's lanes folded in halves (lane i + lane i + n/2) until D lanes remain.
template <int D, typename V>
inline auto fold_lanes(V v) {
  constexpr int n = static_cast<int>(sizeof(V) / sizeof(v[0]));
  if constexpr (n <= D) {
    return v;
  } else {
    constexpr auto idx = std::make_index_sequence<n / 2>{};
    return fold_lanes<D>(low_half(v, idx) + high_half(v, idx));
  }
}
// The partial sums kept per dot product between calls (dot_lanes): at most 8, so AVX-512's 16
// float lanes are folded once per tile. LeNet's second-layer weight gradient (16 x 150 dots) then
// keeps 77 KB of them instead of 153, and each image's call reads and writes half as much of L2:
// 8.0 -> 7.2 us per image (small_gemm_bench, Intel Xeon with AVX-512, best of 2 runs; folding to 4
// lanes gained nothing more).
template <typename T>
constexpr int kDotLanes = kLanes<T> < 8 ? kLanes<T> : 8;

// ---------- gemm_rows: MR rows of C x NV vectors, A broadcast, B loaded ----------
#if COLONY_SMALL_GEMM_VEC_BYTES == 32
// 6 x 2 and 4 x 3: 12 accumulators + the B vectors + a broadcast in 16 registers.
constexpr Tile kRowsTiles[] = {{6, 2}, {4, 3}};
#else
// 6 x 4, 8 x 3 and 12 x 2: 24 accumulators + the B vectors + a broadcast in 32 registers.
constexpr Tile kRowsTiles[] = {{6, 4}, {8, 3}, {12, 2}};
#endif

// One step of k of an MR x NV tile (here and in packed_gemm_tiles.h): acc[i][v] += A(i, p) times
// vector v of B's row p, A's column p at ap (rows ars apart), B's row at bp.
template <typename T, int MR, int NV>
inline void rank1_step(Vec<T> (&acc)[MR][NV], const T* ap, int64_t ars, const T* bp) {
  Vec<T> bv[NV];
  COLONY_TILE_UNROLL
  for (int v = 0; v < NV; ++v) bv[v] = load(bp + v * kLanes<T>);
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    const Vec<T> av = splat(ap[i * ars]);
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) acc[i][v] += av * bv[v];
  }
}

// A panel of B rows as wide as a tile stays in L1 across the row tiles (kPanelBytes: 256 rows of
// 24 floats for AVX2's 4 x 3 tile). The tile computes NV * L columns and stores those in
// [lo, hi): all of them but at the edges of C (see gemm_rows_tiled).
template <typename T, int MR, int NV>
inline void rows_tile(int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b, const int64_t* b_rows, T* c,
                      const int64_t* c_rows, int64_t lo, int64_t hi, bool accumulate, const T* bias) {
  constexpr int L = kLanes<T>;
  Vec<T> acc[MR][NV];
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    Vec<T> init = bias != nullptr ? splat(bias[i]) : Vec<T>{};
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) acc[i][v] = init;
  }
  for (int64_t p = 0; p < kc; ++p) rank1_step<T, MR, NV>(acc, a + p * acs, ars, b + b_rows[p]);
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    T* ci = c + c_rows[i];
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) {
      T* cv = ci + v * L;
      const int64_t v_lo = v * L, v_hi = v_lo + L;
      if (lo <= v_lo && v_hi <= hi) {
        store(cv, accumulate ? load(cv) + acc[i][v] : acc[i][v]);
      } else {
        for (int64_t j = (lo > v_lo ? lo : v_lo); j < (hi < v_hi ? hi : v_hi); ++j) {
          cv[j - v_lo] = accumulate ? cv[j - v_lo] + acc[i][v][j - v_lo] : acc[i][v][j - v_lo];
        }
      }
    }
  }
}

// The last tile of m has fewer rows: instantiate every height up to MR.
template <typename T, int MR, int NV>
inline void rows_tile_upto(int64_t mr, int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b,
                           const int64_t* b_rows, T* c, const int64_t* c_rows, int64_t lo, int64_t hi,
                           bool accumulate, const T* bias) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      rows_tile_upto<T, MR - 1, NV>(mr, kc, a, ars, acs, b, b_rows, c, c_rows, lo, hi, accumulate, bias);
      return;
    }
  }
  rows_tile<T, MR, NV>(kc, a, ars, acs, b, b_rows, c, c_rows, lo, hi, accumulate, bias);
}

// The last tile of n, when it is not a whole tile, has nv <= NV vectors: every width up to NV.
template <typename T, int MR, int NV>
inline void rows_tile_upto_nv(int64_t nv, int64_t mr, int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b,
                              const int64_t* b_rows, T* c, const int64_t* c_rows, int64_t lo, int64_t hi,
                              bool accumulate, const T* bias) {
  if constexpr (NV > 1) {
    if (nv < NV) {
      rows_tile_upto_nv<T, MR, NV - 1>(nv, mr, kc, a, ars, acs, b, b_rows, c, c_rows, lo, hi, accumulate, bias);
      return;
    }
  }
  rows_tile_upto<T, MR, NV>(mr, kc, a, ars, acs, b, b_rows, c, c_rows, lo, hi, accumulate, bias);
}

template <typename T, int MR, int NV>
void gemm_rows_tiled(int64_t m, int64_t n, int64_t k, const T* a, int64_t ars, int64_t acs, const T* b,
                     const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias) {
  constexpr int64_t NR = NV * kLanes<T>;
  constexpr int64_t kBlockK = kPanelBytes / (NR * static_cast<int64_t>(sizeof(T)));
  // No load may run past column n of B: the last row may end at the end of the caller's buffer.
  // So when n is not a whole number of tiles, the last tile is the fewest whole vectors that end
  // at column n: it recomputes up to a vector of columns of the tile before and stores only its
  // own. (Copying its columns into a padded panel instead, 75 short copies per call on LeNet's
  // first layer, took a fifth of the call under AVX-512; a whole tile ending at n computed up to
  // NV - 1 vectors in vain.) Only a B narrower than one tile is copied into a zero-padded panel.
  const bool narrow = n < NR;
  alignas(64) T panel[kBlockK * NR];
  int64_t panel_rows[kBlockK];
  if (narrow) {
    for (int64_t p = 0; p < kBlockK; ++p) panel_rows[p] = p * NR;
  }
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    const int64_t kc = min64(kBlockK, k - k0);
    const bool acc = accumulate || k0 > 0;
    const T* bias_k = acc ? nullptr : bias;
    const T* bp = b;
    const int64_t* br = b_rows + k0;
    if (narrow) {
      for (int64_t p = 0; p < kc; ++p) {
        T* dst = panel + p * NR;
        std::memcpy(dst, b + br[p], sizeof(T) * n);
        for (int64_t j = n; j < NR; ++j) dst[j] = T(0);
      }
      bp = panel;
      br = panel_rows;
    }
    for (int64_t n0 = 0; n0 < n; n0 += NR) {
      const int64_t nv = narrow || n0 + NR <= n ? NV : (n - n0 + kLanes<T> - 1) / kLanes<T>;
      const int64_t start = narrow || n0 + NR <= n ? n0 : n - nv * kLanes<T>;  // the tile's first column
      const int64_t lo = n0 - start, hi = narrow ? n : nv * kLanes<T>;         // the columns it stores
      for (int64_t m0 = 0; m0 < m; m0 += MR) {
        rows_tile_upto_nv<T, MR, NV>(nv, min64(MR, m - m0), kc, a + m0 * ars + k0 * acs, ars, acs, bp + start, br,
                                     c + start, c_rows + m0, lo, hi, acc, bias_k != nullptr ? bias_k + m0 : nullptr);
      }
    }
  }
}

template <typename T, int... I>
void gemm_rows_impl(int64_t m, int64_t n, int64_t k, const T* a, int64_t ars, int64_t acs, const T* b,
                    const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (accumulate) return;
    for (int64_t i = 0; i < m; ++i) {
      T v = bias != nullptr ? bias[i] : T(0);
      for (int64_t j = 0; j < n; ++j) c[c_rows[i] + j] = v;
    }
    return;
  }
  run_picked<I...>(pick_tile(kRowsTiles, sizeof...(I), m, n, kLanes<T>), [&](auto index) {
    constexpr int idx = decltype(index)::value;
    gemm_rows_tiled<T, kRowsTiles[idx].mr, kRowsTiles[idx].nv>(m, n, k, a, ars, acs, b, b_rows, c, c_rows, accumulate,
                                                               bias);
  });
}

// ---------- gemm_dot_rows_lanes: MR x NR dot products, vectorized along the rows ----------
#if COLONY_SMALL_GEMM_VEC_BYTES == 32
// MR * NR accumulators, the NR rows of B and one row of A at a time in 16 registers: 4 x 3 (16),
// 3 x 3 (13) and 4 x 2 (11), each with >= 8 FMA chains in flight. 4 x 3 loads 7 rows per 12 FMAs;
// on LeNet's second layer (16 x 150 dot products of 136 pixels) it ran 9 % faster than 3 x 3 and
// 4 x 2 (small_gemm_bench's weight_grad pass, best of 8 alternating runs on 1 core, AMD EPYC AVX2:
// 8.7 against 9.6 us per image).
constexpr Tile kDotTiles[] = {{4, 3}, {3, 3}, {4, 2}};
#else
// In 32 registers: 8 x 3 (28), 6 x 4 (29) and 4 x 4 (21); ties go to the larger tile. 8 x 3 and
// 6 x 4 load 11 and 10 rows per 24 FMAs where 4 x 4 and 6 x 3 loaded 8 per 16 and 9 per 18; LeNet's
// weight gradients went from 6.8 to 5.8 us per image (conv1, now 6 x 4) and from 7.2 to 6.3
// (conv2, now 8 x 3) (small_gemm_bench, Intel Xeon with AVX-512, best of 3 runs).
constexpr Tile kDotTiles[] = {{8, 3}, {6, 4}, {4, 4}};
#endif

// A tile's MR + NR rows of one pass stay in L1 while it runs (kPanelBytes: 1024 floats for
// AVX2's tiles).
template <typename T, int MR, int NR>
constexpr int64_t block_dot() {
  return kPanelBytes / ((MR + NR) * static_cast<int64_t>(sizeof(T))) / kLanes<T> * kLanes<T>;
}

// The products of `batch` summed in one tile's registers, then folded and added into acc.
template <typename T, int MR, int NR>
inline void dot_tile(int64_t kc, const T* a, int64_t lda, const T* const* brow, T* acc, int64_t n,
                     const DotBatch& batch) {
  constexpr int L = kLanes<T>;
  const int64_t count = batch.count;
  Vec<T> sum[MR][NR];
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i)
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) sum[i][j] = Vec<T>{};
  // Product t's rows: A's from at, B's at bt[j].
  const T* at = a;
  const T* bt[NR];
  // One step: pixels [p, p + L) of every row, read by `read` (a whole or a masked vector).
  auto step = [&](int64_t p, auto read) {
    Vec<T> bv[NR];
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) bv[j] = in_register<T>(read(bt[j] + p));
    COLONY_TILE_UNROLL
    for (int i = 0; i < MR; ++i) {
      const Vec<T> av = in_register<T>(read(at + i * lda + p));
      COLONY_TILE_UNROLL
      for (int j = 0; j < NR; ++j) sum[i][j] += av * bv[j];
    }
  };
  for (int64_t t = 0; t < count; ++t) {
    at = a + t * batch.a_stride;
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) bt[j] = brow[j] + t * batch.b_stride;
    int64_t p = 0;
    for (; p + L <= kc; p += L) step(p, [](const T* q) { return load(q); });
    if (p < kc && kc >= L) {
      // The tail (8 + 4 pixels of LeNet's 136- and 892-pixel rows under AVX-512) as one more
      // whole step: the vector that ends the row, its lanes before p zeroed in both operands (so
      // an infinity there cannot make a NaN), not a scalar step per pixel and dot product.
      const Mask<T> keep = lanes_from<T>(p - (kc - L));
      step(kc - L, [&keep](const T* q) { return load_where(q, keep); });
    }
  }
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) {
      Vec<T> s = sum[i][j];
      if (kc < L) {  // rows shorter than a vector
        for (int64_t t = 0; t < count; ++t)
          for (int64_t q = 0; q < kc; ++q)
            s[0] += a[t * batch.a_stride + i * lda + q] * brow[j][t * batch.b_stride + q];
      }
      auto folded = fold_lanes<kDotLanes<T>>(s);
      T* lanes = acc + (i * n + j) * kDotLanes<T>;
      decltype(folded) total;
      std::memcpy(&total, lanes, sizeof(total));
      total += folded;
      std::memcpy(lanes, &total, sizeof(total));
    }
  }
}

template <typename T, int MR, int NR>
inline void dot_tile_upto(int64_t mr, int64_t nr, int64_t kc, const T* a, int64_t lda, const T* const* brow, T* acc,
                          int64_t n, const DotBatch& batch) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      dot_tile_upto<T, MR - 1, NR>(mr, nr, kc, a, lda, brow, acc, n, batch);
      return;
    }
  }
  if constexpr (NR > 1) {
    if (nr < NR) {
      dot_tile_upto<T, MR, NR - 1>(mr, nr, kc, a, lda, brow, acc, n, batch);
      return;
    }
  }
  dot_tile<T, MR, NR>(kc, a, lda, brow, acc, n, batch);
}

template <typename T, int MR, int NR>
void gemm_dot_tiled(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, const int64_t* b_rows,
                    T* acc, const DotBatch& batch) {
  constexpr int64_t kBlockDot = block_dot<T, MR, NR>();
  for (int64_t k0 = 0; k0 < k; k0 += kBlockDot) {
    int64_t kc = min64(kBlockDot, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
      int64_t nr = min64(NR, n - j0);
      const T* brow[NR];
      for (int64_t j = 0; j < NR; ++j) brow[j] = b + b_rows[j0 + min64(j, nr - 1)] + k0;
      for (int64_t i0 = 0; i0 < m; i0 += MR) {
        dot_tile_upto<T, MR, NR>(min64(MR, m - i0), nr, kc, a + i0 * lda + k0, lda, brow,
                                 acc + (i0 * n + j0) * kDotLanes<T>, n, batch);
      }
    }
  }
}

template <typename T, int... I>
void gemm_dot_impl(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, const int64_t* b_rows,
                   T* acc, DotBatch batch) {
  if (m <= 0 || n <= 0 || k <= 0 || batch.count <= 0) return;
  run_picked<I...>(pick_tile(kDotTiles, sizeof...(I), m, n, 1), [&](auto index) {
    constexpr int idx = decltype(index)::value;
#if COLONY_SMALL_GEMM_VEC_BYTES == 32
    // One product after another: summed in the registers of AVX2's tiles (4 x 3 takes all 16),
    // LeNet's second-layer weight gradient went from 7.7 to 8.5 us per image, where AVX-512's
    // tiles gain a fifth.
    for (int64_t t = 0; t < batch.count; ++t) {
      gemm_dot_tiled<T, kDotTiles[idx].mr, kDotTiles[idx].nv>(m, n, k, a + t * batch.a_stride, lda,
                                                              b + t * batch.b_stride, b_rows, acc, DotBatch{});
    }
#else
    gemm_dot_tiled<T, kDotTiles[idx].mr, kDotTiles[idx].nv>(m, n, k, a, lda, b, b_rows, acc, batch);
#endif
  });
}

// The lane sums of eight dot products (v[k] holds product k's 8 lanes), product k's in lane k:
// neighbouring lanes added pairwise in three rounds, 14 shuffles and 7 adds for the 56 additions.
// One product's lanes added one after another, a chain of 7 dependent adds, took a dozen
// instructions per product.
template <typename V>
inline V sum_lanes_of_eight(const V (&v)[8]) {
  V p[4], q[2];
  COLONY_TILE_UNROLL
  for (int k = 0; k < 4; ++k) {
    p[k] = __builtin_shufflevector(v[2 * k], v[2 * k + 1], 0, 8, 2, 10, 4, 12, 6, 14) +
           __builtin_shufflevector(v[2 * k], v[2 * k + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
  COLONY_TILE_UNROLL
  for (int k = 0; k < 2; ++k) {
    q[k] = __builtin_shufflevector(p[2 * k], p[2 * k + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(p[2 * k], p[2 * k + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  return __builtin_shufflevector(q[0], q[1], 0, 1, 2, 3, 8, 9, 10, 11) +
         __builtin_shufflevector(q[0], q[1], 4, 5, 6, 7, 12, 13, 14, 15);
}

template <typename T>
void gemm_dot_finish_impl(int64_t m, int64_t n, const T* acc, T* c, int64_t ldc) {
  constexpr int D = kDotLanes<T>;
  for (int64_t i = 0; i < m; ++i) {
    const T* lanes = acc + i * n * D;
    T* ci = c + i * ldc;
    int64_t j = 0;
    if constexpr (D == 8) {
      typedef T Lanes __attribute__((vector_size(8 * sizeof(T))));
      for (; j + 8 <= n; j += 8) {
        Lanes v[8];
        COLONY_TILE_UNROLL
        for (int k = 0; k < 8; ++k) std::memcpy(&v[k], lanes + (j + k) * D, sizeof(Lanes));
        const Lanes sums = sum_lanes_of_eight(v);
        std::memcpy(ci + j, &sums, sizeof(sums));
      }
    }
    for (; j < n; ++j) {
      T s = T(0);
      for (int l = 0; l < D; ++l) s += lanes[j * D + l];
      ci[j] = s;
    }
  }
}

}  // namespace
}  // namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA

#include "kernels/cpu/packed_gemm_tiles.h"

namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA {
namespace {

// Instantiates the drivers for every candidate tile: gemm_rows_impl<T, 0, 1, ...>.
template <typename T, int... R, int... D>
constexpr SmallGemmFns<T> make_fns(std::integer_sequence<int, R...>, std::integer_sequence<int, D...>) {
  return SmallGemmFns<T>{COLONY_ISA_COPY_NAME(COLONY_SMALL_GEMM_ISA), kDotLanes<T>, &gemm_rows_impl<T, R...>,
                         &gemm_dot_impl<T, D...>, &gemm_dot_finish_impl<T>,
                         kPackedMr, kPackedNv * kLanes<T>, packed_kc<T>(), packed_kc_rows<T>(),
                         &packed_rows_impl<T>};
}

}  // namespace

template <typename T>
const SmallGemmFns<T>& small_gemm_fns() {
  static constexpr SmallGemmFns<T> fns =
      make_fns<T>(std::make_integer_sequence<int, sizeof(kRowsTiles) / sizeof(kRowsTiles[0])>{},
                  std::make_integer_sequence<int, sizeof(kDotTiles) / sizeof(kDotTiles[0])>{});
  return fns;
}

template const SmallGemmFns<float>& small_gemm_fns<float>();
template const SmallGemmFns<double>& small_gemm_fns<double>();

}  // namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA

#undef COLONY_TILE_UNROLL
