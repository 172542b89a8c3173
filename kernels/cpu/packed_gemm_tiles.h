// The micro-kernel of packed_gemm.h, written once for any vector width. Textual, like
// small_gemm_tiles.h, which includes it (after its vector types and helpers) so that each ISA copy's
// table (small_gemm_isa.h) carries its own packed_rows; everything here has internal linkage.
//
// One call multiplies the rows of A (read in place through strides, or from packed_gemm.cc's
// column panels) by one kc-deep block of B packed into panels of NR = NV vectors: panel q holds
// columns [q * NR, q * NR + NR) as kc rows of NR contiguous elements, zero past column n. The
// panel (kc x NR) stays in L1 while the MR x NR tiles of every row pass over it.
#if !defined(COLONY_SMALL_GEMM_ISA)
#error "packed_gemm_tiles.h is included by small_gemm_tiles.h"
#endif

namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA {
namespace {

// The register block: MR rows by NV vectors of accumulators, A broadcast and B loaded.
#if COLONY_SMALL_GEMM_VEC_BYTES == 32
// 6 x 2 vectors (6 x 16 floats): 12 accumulators, 2 B vectors and a broadcast of 16 registers.
constexpr int kPackedMr = 6, kPackedNv = 2;
#else
// 6 x 4 vectors (6 x 64 floats): 24 accumulators, 4 B vectors and a broadcast of 32 registers;
// per k step 10 loads (4 of B, 6 broadcasts of A) feed 24 FMAs, so the two FMA ports stay busy.
constexpr int kPackedMr = 6, kPackedNv = 4;
#endif

// The depth of one packed block: its panel (kc x NR) fills at most 32 KiB of the 48 KiB L1 (the
// rows of A and the tile of C share the rest), and at most 256 deep.
template <typename T>
constexpr int64_t packed_kc() {
  constexpr int64_t fit = int64_t{32 * 1024} / (kPackedNv * kLanes<T> * static_cast<int64_t>(sizeof(T)));
  return fit < 256 ? fit : 256;
}

// The depth where A is row-major and read in place: under AVX-512 384, the panel (96 KiB)
// streamed from L2, C read and written a third as often as at 128. Thread CPU time, 1 thread,
// best of 12, 2 alternating rounds, GFLOP/s at kc 128 / 384 (as (m, n, k)): A @ B 1024^3 136-138 /
// 147-157, 2048^3 111-121 / 136-148, (4096, 384, 1536) 112-131 / 146-148, A @ B^T (4096, 1152,
// 384) 123 / 145-154; but A^T @ B (A packed) 1024^3 138 / 114-118, (1152, 384, 4096) 124 / 102-106,
// so packed_kc stays for a column-major A. Under AVX2 (6 x 16) 256 and 384 ran alike (1024^3 87 /
// 84, (4096, 384, 1536) 88 / 89). Intel Xeon (Sapphire Rapids class), other builds running.
// Since the k loop is unrolled by 4 (packed_tile), a column-major A runs this deep too, copied
// into row tiles, where the product is at least 384 wide (packed_gemm.cc's kDeepPackedAMinWidth
// says why and what that measured); a narrower one keeps packed_kc.
template <typename T>
constexpr int64_t packed_kc_rows() {
  return COLONY_SMALL_GEMM_VEC_BYTES == 64 ? 384 : packed_kc<T>();
}

// Stores the tile: C(i, j) for i < MR, j < cols (<= NR) becomes, on the first block of k, alpha * S +
// beta * C (beta == 0: alpha * S, C not read, so NaNs there are overwritten), on later blocks C +
// alpha * S; with kBias, bias[j] is then added to that value before the store: rounded as if the
// bias were added to the finished product afterwards, without another pass over C.
template <typename T, int MR, int NV, bool kBias>
inline void packed_store(const Vec<T> (&acc)[MR][NV], T* c, int64_t ldc, int64_t cols, T alpha, T beta, bool first,
                         const T* bias) {
  constexpr int L = kLanes<T>;
  const Vec<T> va = splat(alpha), vb = splat(beta);
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i) {
    T* ci = c + i * ldc;
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) {
      T* cv = ci + v * L;
      const Vec<T> s = va * acc[i][v];
      if ((v + 1) * L <= cols) {
        Vec<T> y = !first ? load(cv) + s : beta == T(0) ? s : s + vb * load(cv);
        if constexpr (kBias) y = y + load(bias + v * L);
        store(cv, y);
      } else {
        for (int64_t j = 0; j < cols - v * L; ++j) {
          T y = !first ? cv[j] + s[j] : beta == T(0) ? s[j] : s[j] + beta * cv[j];
          if constexpr (kBias) y += bias[v * L + j];
          cv[j] = y;
        }
      }
    }
  }
}

// The MR x NV tile of C over one block of k (packed_store says how it is stored; bias: null or
// the tile's first column's).
template <typename T, int MR, int NV>
inline void packed_tile(int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b, T* c, int64_t ldc, int64_t cols,
                        T alpha, T beta, bool first, const T* bias) {
  constexpr int L = kLanes<T>;
  constexpr int NR = NV * L;
  Vec<T> acc[MR][NV];
  COLONY_TILE_UNROLL
  for (int i = 0; i < MR; ++i)
    COLONY_TILE_UNROLL
    for (int v = 0; v < NV; ++v) {
      acc[i][v] = Vec<T>{};
      __builtin_prefetch(c + i * ldc + v * L, 1, 3);
    }
  // Unrolled by 4: the loop's pointer increments and branch then take a port from the FMAs once
  // per 96 multiply-adds instead of 24. A stand-alone copy of the loop (g++ -O2
  // -march=x86-64-v4, 8 row tiles over one panel, thread CPU time, 3 rounds, load 2.4-2.6,
  // 2026-12-06 08:35 UTC; fma_peak's loop 235-240 GFLOP/s) ran kc 384 (the panel streamed from
  // L2) 199-210 rolled, 217-221 unrolled, kc 128 (the panel in L1) 216-230 both ways; the
  // broadcasts folded into the FMAs as {1to16} operands (24 loads a step instead of 6) 157-196.
  // matmul_bench --dtype f32 --cpu-time, 1 thread, 3 alternating rounds against main (08:36,
  // load 3.1), GFLOP/s main / unrolled: 2048^3 A @ B 188.2-197.2 / 204.8-208.4, (4096, 1536,
  // 384) A @ B^T 189.4-210.0 / 212.4-219.8, 1024^3 A @ B 201.8-205.8 / 199.0-210.9, 1024^3 A^T
  // @ B 191.2-191.8 / 185.3-191.7 (kc 128 then).
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) rank1_step<T, MR, NV>(acc, a + p * acs, ars, b + p * NR);
  if (bias != nullptr) {
    packed_store<T, MR, NV, true>(acc, c, ldc, cols, alpha, beta, first, bias);
  } else {
    packed_store<T, MR, NV, false>(acc, c, ldc, cols, alpha, beta, first, nullptr);
  }
}

// The last tile of m has fewer rows: every height up to MR.
template <typename T, int MR, int NV>
inline void packed_tile_upto(int64_t mr, int64_t kc, const T* a, int64_t ars, int64_t acs, const T* b, T* c,
                             int64_t ldc, int64_t cols, T alpha, T beta, bool first, const T* bias) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      packed_tile_upto<T, MR - 1, NV>(mr, kc, a, ars, acs, b, c, ldc, cols, alpha, beta, first, bias);
      return;
    }
  }
  packed_tile<T, MR, NV>(kc, a, ars, acs, b, c, ldc, cols, alpha, beta, first, bias);
}

// SmallGemmFns::packed_rows: the panels one after another (each stays in L1), the row tiles of A
// over each; tile t's rows start at a + t * a_tile_stride; bias (null: none) holds C's n columns'.
template <typename T>
void packed_rows_impl(int64_t m, int64_t n, int64_t kc, const T* a, int64_t ars, int64_t acs, int64_t a_tile_stride,
                      const T* packed_b, T* c, int64_t ldc, T alpha, T beta, bool first, const T* bias) {
  constexpr int64_t NR = kPackedNv * kLanes<T>;
  for (int64_t j0 = 0; j0 < n; j0 += NR) {
    const T* panel = packed_b + (j0 / NR) * kc * NR;
    const int64_t cols = min64(NR, n - j0);
    for (int64_t i0 = 0, t = 0; i0 < m; i0 += kPackedMr, ++t) {
      packed_tile_upto<T, kPackedMr, kPackedNv>(min64(kPackedMr, m - i0), kc, a + t * a_tile_stride, ars, acs, panel,
                                                c + i0 * ldc + j0, ldc, cols, alpha, beta, first,
                                                bias == nullptr ? nullptr : bias + j0);
    }
  }
}

}  // namespace
}  // namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA
