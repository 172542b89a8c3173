#include "kernels/cpu/small_gemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/simd.h"

namespace colony::kernels::cpu {
namespace {

using simd::hsum;
using simd::kLanes;
using simd::load;
using simd::splat;
using simd::store;
using simd::Vec;

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// ---------- gemm_rows: MR rows of C x NV vectors, A broadcast, B loaded ----------
// 6 x 2 and 4 x 3 tiles both keep 12 accumulators in registers (of 16), enough independent FMA
// chains to cover the FMA latency; the driver picks the one that wastes fewer rows of m.

// B rows per pass: a 256-row panel of 24 floats is 24 KiB and stays in L1 across the row tiles.
constexpr int64_t kBlockK = 256;

template <typename T, int MR, int NV>
inline void rows_tile(int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b, const int64_t* b_rows, T* c,
                      const int64_t* c_rows, int64_t nr, bool accumulate, const T* bias) {
  constexpr int L = kLanes<T>;
  Vec<T> acc[MR][NV];
  COLONY_UNROLL
  for (int i = 0; i < MR; ++i) {
    Vec<T> init = bias != nullptr ? splat(bias[i]) : Vec<T>{};
    COLONY_UNROLL
    for (int v = 0; v < NV; ++v) acc[i][v] = init;
  }
  for (int64_t p = 0; p < kc; ++p) {
    const T* bp = b + b_rows[p];
    Vec<T> bv[NV];
    COLONY_UNROLL
    for (int v = 0; v < NV; ++v) bv[v] = load(bp + v * L);
    const T* ap = a + p * acs;
    COLONY_UNROLL
    for (int i = 0; i < MR; ++i) {
      Vec<T> av = splat(ap[i * ars]);
      COLONY_UNROLL
      for (int v = 0; v < NV; ++v) acc[i][v] += av * bv[v];
    }
  }
  if (nr == NV * L) {
    COLONY_UNROLL
    for (int i = 0; i < MR; ++i) {
      T* ci = c + c_rows[i];
      COLONY_UNROLL
      for (int v = 0; v < NV; ++v) store(ci + v * L, accumulate ? load(ci + v * L) + acc[i][v] : acc[i][v]);
    }
    return;
  }
  COLONY_UNROLL
  for (int i = 0; i < MR; ++i) {
    T tmp[NV * L];
    COLONY_UNROLL
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
  // The last, narrower column tile reads its B columns from a zero-padded copy, so no load runs
  // past the end of a B row (the last row may end at the end of the caller's buffer).
  alignas(64) T panel[kBlockK * NR];
  int64_t panel_rows[kBlockK];
  bool panel_rows_set = false;
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    int64_t kc = std::min(kBlockK, k - k0);
    bool acc = accumulate || k0 > 0;
    const T* bias_k = acc ? nullptr : bias;
    for (int64_t n0 = 0; n0 < n; n0 += NR) {
      int64_t nr = std::min(NR, n - n0);
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
          std::fill(dst + nr, dst + NR, T(0));
        }
        bp = panel;
        br = panel_rows;
      }
      for (int64_t m0 = 0; m0 < m; m0 += MR) {
        rows_tile_upto<T, MR, NV>(std::min<int64_t>(MR, m - m0), kc, a + m0 * ars + k0 * acs, ars, acs, bp, br,
                                  c + n0, c_rows + m0, nr, acc, bias_k != nullptr ? bias_k + m0 : nullptr);
      }
    }
  }
}

// ---------- gemm_dot_rows_lanes: MR x NR dot products, vectorized along the rows ----------

// Pixels per pass: a tile's 6 rows of 1024 floats (24 KiB) stay in L1 while it runs.
constexpr int64_t kBlockDot = 1024;

template <typename T, int MR, int NR>
inline void dot_tile(int64_t kc, const T* a, int64_t lda, const T* const* brow, T* acc, int64_t n) {
  constexpr int L = kLanes<T>;
  Vec<T> sum[MR][NR];
  COLONY_UNROLL
  for (int i = 0; i < MR; ++i)
    COLONY_UNROLL
    for (int j = 0; j < NR; ++j) sum[i][j] = Vec<T>{};
  int64_t p = 0;
  for (; p + L <= kc; p += L) {
    Vec<T> av[MR], bv[NR];
    COLONY_UNROLL
    for (int i = 0; i < MR; ++i) av[i] = load(a + i * lda + p);
    COLONY_UNROLL
    for (int j = 0; j < NR; ++j) bv[j] = load(brow[j] + p);
    COLONY_UNROLL
    for (int i = 0; i < MR; ++i)
      COLONY_UNROLL
      for (int j = 0; j < NR; ++j) sum[i][j] += av[i] * bv[j];
  }
  COLONY_UNROLL
  for (int i = 0; i < MR; ++i) {
    COLONY_UNROLL
    for (int j = 0; j < NR; ++j) {
      T* lanes = acc + (i * n + j) * L;
      Vec<T> total = load(lanes) + sum[i][j];
      for (int64_t q = p; q < kc; ++q) total[0] += a[i * lda + q] * brow[j][q];  // the last < L pixels
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
  for (int64_t k0 = 0; k0 < k; k0 += kBlockDot) {
    int64_t kc = std::min(kBlockDot, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
      int64_t nr = std::min<int64_t>(NR, n - j0);
      const T* brow[NR];
      for (int64_t j = 0; j < NR; ++j) brow[j] = b + b_rows[j0 + std::min(j, nr - 1)] + k0;
      for (int64_t i0 = 0; i0 < m; i0 += MR) {
        dot_tile_upto<T, MR, NR>(std::min<int64_t>(MR, m - i0), nr, kc, a + i0 * lda + k0, lda, brow,
                                 acc + (i0 * n + j0) * L, n);
      }
    }
  }
}

}  // namespace

template <typename T>
void gemm_rows(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_row_stride, int64_t a_col_stride, const T* b,
               const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (accumulate) return;
    for (int64_t i = 0; i < m; ++i) std::fill(c + c_rows[i], c + c_rows[i] + n, bias != nullptr ? bias[i] : T(0));
    return;
  }
  if (round_up(m, 4) < round_up(m, 6)) {
    gemm_rows_tiled<T, 4, 3>(m, n, k, a, a_row_stride, a_col_stride, b, b_rows, c, c_rows, accumulate, bias);
  } else {
    gemm_rows_tiled<T, 6, 2>(m, n, k, a, a_row_stride, a_col_stride, b, b_rows, c, c_rows, accumulate, bias);
  }
}

template <typename T>
int64_t dot_lanes() {
  return kLanes<T>;
}

template <typename T>
void gemm_dot_rows_lanes(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, const int64_t* b_rows,
                         T* acc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  // A tile needs MR * NR accumulators plus MR + NR loaded rows in the 16 vector registers: 3 x 3
  // (15) and 4 x 2 (14) fit, and keep >= 8 FMA chains in flight to cover the FMA latency. (A 4 x 3
  // tile needs 19: the compiler then reloads operands from memory and the loop turns load-bound.)
  // Pick the one with less padding.
  if (round_up(m, 3) * round_up(n, 3) <= round_up(m, 4) * round_up(n, 2)) {
    gemm_dot_tiled<T, 3, 3>(m, n, k, a, lda, b, b_rows, acc);
  } else {
    gemm_dot_tiled<T, 4, 2>(m, n, k, a, lda, b, b_rows, acc);
  }
}

template <typename T>
void gemm_dot_finish(int64_t m, int64_t n, const T* acc, T* c, int64_t ldc) {
  constexpr int L = kLanes<T>;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = hsum<T>(load(acc + (i * n + j) * L));
}

template void gemm_rows<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*,
                               const int64_t*, float*, const int64_t*, bool, const float*);
template void gemm_rows<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*,
                                const int64_t*, double*, const int64_t*, bool, const double*);
template int64_t dot_lanes<float>();
template int64_t dot_lanes<double>();
template void gemm_dot_rows_lanes<float>(int64_t, int64_t, int64_t, const float*, int64_t, const float*,
                                         const int64_t*, float*);
template void gemm_dot_rows_lanes<double>(int64_t, int64_t, int64_t, const double*, int64_t, const double*,
                                          const int64_t*, double*);
template void gemm_dot_finish<float>(int64_t, int64_t, const float*, float*, int64_t);
template void gemm_dot_finish<double>(int64_t, int64_t, const double*, double*, int64_t);

}  // namespace colony::kernels::cpu
