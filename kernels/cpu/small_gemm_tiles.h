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

// Unaligned: rows of images start at arbitrary pixels.
template <typename T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// The first half of a vector from p, zeros after (a tail of at least half a vector).
template <typename T>
inline Vec<T> load_half(const T* p) {
  Vec<T> v = {};
  std::memcpy(&v, p, sizeof(v) / 2);
  return v;
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
template <typename T>
inline T hsum(const Vec<T>& v) {
  T s = T(0);
  COLONY_TILE_UNROLL
  for (int i = 0; i < kLanes<T>; ++i) s += v[i];
  return s;
}
// ---------- gemm_rows: MR rows of C x NV vectors, A broadcast, B loaded ----------
#if COLONY_SMALL_GEMM_VEC_BYTES == 32
// 6 x 2 and 4 x 3: 12 accumulators + the B vectors + a broadcast in 16 registers.
constexpr Tile kRowsTiles[] = {{6, 2}, {4, 3}};
#else
// 6 x 4, 8 x 3 and 12 x 2: 24 accumulators + the B vectors + a broadcast in 32 registers.
constexpr Tile kRowsTiles[] = {{6, 4}, {8, 3}, {12, 2}};
#endif

// A panel of B rows as wide as a tile stays in L1 across the row tiles (kPanelBytes: 256 rows of
// 24 floats for AVX2's 4 x 3 tile).
template <typename T, int MR, int NV>
inline void rows_tile(int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b, const int64_t* b_rows, T* c,
                      const int64_t* c_rows, int64_t nr, bool accumulate, const T* bias) {
  constexpr int L = kLanes<T>;
  Vec<T> acc[MR][NV];
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    Vec<T> init = bias != nullptr ? splat(bias[i]) : Vec<T>{};
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) acc[i][v] = init;
  }
  for (int64_t p = 0; p < kc; ++p) {
    const T* bp = b + b_rows[p];
    Vec<T> bv[NV];
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) bv[v] = load(bp + v * L);
    const T* ap = a + p * acs;
    COLONY_TILE_UNROLL
    for (int i = 0; i < MR; ++i) {
      Vec<T> av = splat(ap[i * ars]);
      COLONY_TILE_UNROLL
      for (int v = 0; v < NV; ++v) acc[i][v] += av * bv[v];
    }
  }
  if (nr == NV * L) {
    COLONY_TILE_UNROLL
    for (int i = 0; i < MR; ++i) {
      T* ci = c + c_rows[i];
      COLONY_TILE_UNROLL
      for (int v = 0; v < NV; ++v) store(ci + v * L, accumulate ? load(ci + v * L) + acc[i][v] : acc[i][v]);
    }
    return;
  }
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    T tmp[NV * L];
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) store(tmp + v * L, acc[i][v]);
    T* ci = c + c_rows[i];
    for (int64_t j = 0; j < nr; ++j) ci[j] = accumulate ? ci[j] + tmp[j] : tmp[j];
  }
}

// The last tile of m has fewer rows: instantiate every height up to MR.
template <typename T, int MR, int NV>
inline void rows_tile_upto(int64_t mr, int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b,
                           const int64_t* b_rows, T* c, const int64_t* c_rows, int64_t nr, bool accumulate,
                           const T* bias) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      rows_tile_upto<T, MR - 1, NV>(mr, kc, a, ars, acs, b, b_rows, c, c_rows, nr, accumulate, bias);
      return;
    }
  }
  rows_tile<T, MR, NV>(kc, a, ars, acs, b, b_rows, c, c_rows, nr, accumulate, bias);
}

template <typename T, int MR, int NV>
void gemm_rows_tiled(int64_t m, int64_t n, int64_t k, const T* a, int64_t ars, int64_t acs, const T* b,
                     const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias) {
  constexpr int64_t NR = NV * kLanes<T>;
  constexpr int64_t kBlockK = kPanelBytes / (NR * static_cast<int64_t>(sizeof(T)));
  // The last, narrower column tile reads its B columns from a zero-padded copy, so no load runs
  // past the end of a B row (the last row may end at the end of the caller's buffer).
  alignas(64) T panel[kBlockK * NR];
  int64_t panel_rows[kBlockK];
  bool panel_rows_set = false;
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    int64_t kc = min64(kBlockK, k - k0);
    bool acc = accumulate || k0 > 0;
    const T* bias_k = acc ? nullptr : bias;
    for (int64_t n0 = 0; n0 < n; n0 += NR) {
      int64_t nr = min64(NR, n - n0);
      const T* bp = b + n0;
      const int64_t* br = b_rows + k0;
      if (nr < NR) {
        if (!panel_rows_set) {
          for (int64_t p = 0; p < kBlockK; ++p) panel_rows[p] = p * NR;
          panel_rows_set = true;
        }
        for (int64_t p = 0; p < kc; ++p) {
          T* dst = panel + p * NR;
          std::memcpy(dst, b + b_rows[k0 + p] + n0, sizeof(T) * nr);
          for (int64_t j = nr; j < NR; ++j) dst[j] = T(0);
        }
        bp = panel;
        br = panel_rows;
      }
      for (int64_t m0 = 0; m0 < m; m0 += MR) {
        rows_tile_upto<T, MR, NV>(min64(MR, m - m0), kc, a + m0 * ars + k0 * acs, ars, acs, bp, br, c + n0,
                                  c_rows + m0, nr, acc, bias_k != nullptr ? bias_k + m0 : nullptr);
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
// In 32 registers: 4 x 4 (21) and 6 x 3 (22).
constexpr Tile kDotTiles[] = {{4, 4}, {6, 3}};
#endif

// A tile's MR + NR rows of one pass stay in L1 while it runs (kPanelBytes: 1024 floats for
// AVX2's tiles).
template <typename T, int MR, int NR>
constexpr int64_t block_dot() {
  return kPanelBytes / ((MR + NR) * static_cast<int64_t>(sizeof(T))) / kLanes<T> * kLanes<T>;
}

template <typename T, int MR, int NR>
inline void dot_tile(int64_t kc, const T* a, int64_t lda, const T* const* brow, T* acc, int64_t n) {
  constexpr int L = kLanes<T>;
  Vec<T> sum[MR][NR];
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i)
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) sum[i][j] = Vec<T>{};
  // One step: pixels [p, p + L) of every row, read by `read` (a whole or a half vector).
  auto step = [&](int64_t p, auto read) {
    Vec<T> bv[NR];
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) bv[j] = in_register<T>(read(brow[j] + p));
    COLONY_TILE_UNROLL
    for (int i = 0; i < MR; ++i) {
      const Vec<T> av = in_register<T>(read(a + i * lda + p));
      COLONY_TILE_UNROLL
      for (int j = 0; j < NR; ++j) sum[i][j] += av * bv[j];
    }
  };
  int64_t p = 0;
  for (; p + L <= kc; p += L) step(p, [](const T* q) { return load(q); });
  if constexpr (L >= 16) {
    // A tail of at least half a vector (8 floats of LeNet's 136-pixel rows under AVX-512) as one
    // half-width step, not eight scalar ones per dot product.
    if (p + L / 2 <= kc) {
      step(p, [](const T* q) { return load_half(q); });
      p += L / 2;
    }
  }
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    COLONY_TILE_UNROLL
    for (int j = 0; j < NR; ++j) {
      T* lanes = acc + (i * n + j) * L;
      Vec<T> total = load(lanes) + sum[i][j];
      for (int64_t q = p; q < kc; ++q) total[0] += a[i * lda + q] * brow[j][q];  // the last few pixels
      store(lanes, total);
    }
  }
}

template <typename T, int MR, int NR>
inline void dot_tile_upto(int64_t mr, int64_t nr, int64_t kc, const T* a, int64_t lda, const T* const* brow, T* acc,
                          int64_t n) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      dot_tile_upto<T, MR - 1, NR>(mr, nr, kc, a, lda, brow, acc, n);
      return;
    }
  }
  if constexpr (NR > 1) {
    if (nr < NR) {
      dot_tile_upto<T, MR, NR - 1>(mr, nr, kc, a, lda, brow, acc, n);
      return;
    }
  }
  dot_tile<T, MR, NR>(kc, a, lda, brow, acc, n);
}

template <typename T, int MR, int NR>
void gemm_dot_tiled(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, const int64_t* b_rows,
                    T* acc) {
  constexpr int L = kLanes<T>;
  constexpr int64_t kBlockDot = block_dot<T, MR, NR>();
  for (int64_t k0 = 0; k0 < k; k0 += kBlockDot) {
    int64_t kc = min64(kBlockDot, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
      int64_t nr = min64(NR, n - j0);
      const T* brow[NR];
      for (int64_t j = 0; j < NR; ++j) brow[j] = b + b_rows[j0 + min64(j, nr - 1)] + k0;
      for (int64_t i0 = 0; i0 < m; i0 += MR) {
        dot_tile_upto<T, MR, NR>(min64(MR, m - i0), nr, kc, a + i0 * lda + k0, lda, brow, acc + (i0 * n + j0) * L,
                                 n);
      }
    }
  }
}

template <typename T, int... I>
void gemm_dot_impl(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, const int64_t* b_rows,
                   T* acc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  run_picked<I...>(pick_tile(kDotTiles, sizeof...(I), m, n, 1), [&](auto index) {
    constexpr int idx = decltype(index)::value;
    gemm_dot_tiled<T, kDotTiles[idx].mr, kDotTiles[idx].nv>(m, n, k, a, lda, b, b_rows, acc);
  });
}

template <typename T>
void gemm_dot_finish_impl(int64_t m, int64_t n, const T* acc, T* c, int64_t ldc) {
  constexpr int L = kLanes<T>;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = hsum<T>(load(acc + (i * n + j) * L));
}

#define COLONY_TILE_STR2(x) #x
#define COLONY_TILE_STR(x) COLONY_TILE_STR2(x)

// Instantiates the drivers for every candidate tile: gemm_rows_impl<T, 0, 1, ...>.
template <typename T, int... R, int... D>
constexpr SmallGemmFns<T> make_fns(std::integer_sequence<int, R...>, std::integer_sequence<int, D...>) {
  return SmallGemmFns<T>{COLONY_TILE_STR(COLONY_SMALL_GEMM_ISA), kLanes<T>, &gemm_rows_impl<T, R...>,
                         &gemm_dot_impl<T, D...>, &gemm_dot_finish_impl<T>};
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
#undef COLONY_TILE_STR
#undef COLONY_TILE_STR2
