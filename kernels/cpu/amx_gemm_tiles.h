// The AMX bfloat16 products of amx_gemm.h, written once over a few tile primitives. Not a normal
// header: a .cc defines COLONY_AMX_ISA (the namespace of its copy) and COLONY_AMX_NATIVE, then
// includes this file, which defines that copy's amx_gemm_fns().
//  - COLONY_AMX_NATIVE 1 (amx_bf16.cc, built with -mamx-tile -mamx-bf16): the primitives are the
//    tile intrinsics (ldtilecfg, tileloadd, tdpbf16ps, tilestored, tilezero, tilerelease).
//  - COLONY_AMX_NATIVE 0 (amx_bf16_emulated.cc, test-only): eight tile registers in memory and
//    scalar arithmetic in tdpbf16ps' order (amx_gemm.h), denormals included, so the blocking,
//    packing and edge tiles are tested on any CPU and compared bit for bit with the hardware.
//
// As in small_gemm_tiles.h, everything has internal linkage or lives in the copy's namespace, and
// no inline function of a shared header (nor a standard template) is instantiated here: a weak
// copy built for AMX could be the one the linker keeps for every caller
// (small_gemm_isa_symbols_test checks the object).
//
// Blocking. The output is computed 32 x 32 at a time, four C tiles (0-3) fed by two A tiles (4, 5:
// rows 0-15 and 16-31) and two B tiles (6, 7: columns 0-15 and 16-31), so each step loads four
// tiles for four tdpbf16ps, in the order that leaves the B tiles the most time to arrive. Loops,
// outside in: panels of column tiles whose packed B takes at most kAmxPanelBytes (kept in the
// core's 2 MB L2 while every row block passes over it; an unpacked B, AmxGemmArgs::b, is packed
// into scratch panel by panel just before, so the panel is in L2 when the tiles read it: 1024^3, 1
// thread, A @ B^T +9 %, A @ B +4 % with amx_pack_b's loop fix, docs/benchmarks.md), 32-row blocks
// of A, depth blocks of at most kBlockSteps steps, then the column pairs of the panel. A's 32 rows
// of one depth block are copied into tiles (32 KB, in the first panel only; the later panels read
// those tiles: for a row-major A's whole blocks by tilestored from the tiles the first column pair
// loads in place, ATiles::copy, else by pack_a) and stay in L1 across the panel's columns; B streams from L2 with the T1
// hint (tileloaddt1) so that it does not evict them. C's sums stay in tile registers over a depth
// block and in float32 scratch between blocks; a column pair's output is written (rounded to
// bfloat16 or copied) from that scratch once its last depth block is summed, while the tile unit
// works through the next pair's block (write_out), and every other panel takes the row blocks in
// reverse order (starting on the rows of A the last panel left in L2).
//
// Measured on the 2-core Xeon (Sapphire Rapids class), 1024^3, 1 thread, matmul_bench: 773-1,027
// GFLOP/s before (A read in place, one depth block, C rounded per tile); 5 alternating rounds at
// the end: medians 979 before, 1,205 after, torch 2.15 (oneDNN) 1,328 (docs/benchmarks.md).
// What paid: 64-byte aligned scratch and packed B (tile rows straddling two cache lines halved the
// speed of a packed A), the T1 hint on B (1,009 -> 1,134 with A in L1), rounding once per block
// row with vcvtneps2bf16, packing A once for all panels, 768 KB panels. Tried and dropped:
// prefetching the next block's rows of A into L2 from the column loop (the prefetches stalled the
// tile loop: no gain), prefetching B's next steps into L1 (900-960 against 1,040-1,075), depth
// blocks of 8, 12 or 32 steps (32: A no longer fits L1).
// 2026-12-05 evening (docs/benchmarks.md): writing each column pair's output while the next
// pair's block runs, 64 bytes per row, A's first-panel blocks packed by tilestored from the tiles
// the first column pair loads in place, and every other panel's row blocks in reverse took 1024^3
// A @ B from 1,179 to 1,408 GFLOP/s (torch 1,321: 1.07x; A @ B^T 1.06x; 6 alternating rounds
// under load). Where the time went (1 thread, each part left out in turn, results wrong, before
// those changes): without writing the output 1.26x as fast, without packing B per panel 1.12x,
// without packing A 1.06x, with one block of A for all rows (A never from L3) 1.36x. Tried and
// dropped then: packing the next block of A a slice per column pair (no gain after the block,
// 0.93x before it, 0.95x after the output), prefetching the next block's packed A or raw rows,
// the next pair's partial sums or B tiles (B into L2: 0.85-0.90x), B's rows inside amx_pack_b,
// packing B per column pair as the first row block reaches it (0.97x), A packed again per panel
// (0.95x), odd depth blocks taking the pairs back to front (0.93x: B then streams backwards),
// non-temporal output stores (1.05x against 1.14x), panels of 512 KB, 640 KB, 1 MB or two of 32
// tiles (768 KB stays best).
#if !defined(COLONY_AMX_ISA) || !defined(COLONY_AMX_NATIVE)
#error "define COLONY_AMX_ISA and COLONY_AMX_NATIVE before including amx_gemm_tiles.h"
#endif

#include <cstdint>
#include <cstring>

#include "kernels/cpu/amx_gemm.h"

#if COLONY_AMX_NATIVE
#include <immintrin.h>

#include "kernels/cpu/transpose_words.h"
#include "kernels/cpu/vec_math.h"
#else
#include <cmath>
#endif

// GCC 12 warns of its own intrinsics' undefined vectors (_mm512_undefined_epi32 inside
// _mm512_cvtepu16_epi32, _mm512_slli_epi32, _mm512_loadu_si512 ...) once they are inlined into
// this file's functions: a false positive, silenced for this file only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace colony::kernels::cpu::COLONY_AMX_ISA {
namespace {

constexpr int64_t kTileRows = 16;    // rows of every tile
constexpr int64_t kTileDepth = 32;   // bfloat16 per row of an A tile (64 bytes): one depth step
constexpr int64_t kTileCols = 16;    // float32 per row of a C tile
constexpr int64_t kTileElems = 512;  // bfloat16 per packed B tile (16 rows of 32)
constexpr int64_t kRowBytes = 64;
// Packed B kept per panel (see above, kAmxPanelBytes): 768 KB of the 2 MB L2, which also holds A's
// packed rows on their way, the output and the partial sums. 1024^3, 1 thread, A packed once
// (matmul_bench, 2026-12-05 midday, two rounds): 256 KB 951 GFLOP/s, 384 KB 1,062-1,066, 512 KB
// 1,084-1,125, 768 KB 1,188-1,192, 1 MB 1,136-1,151. A register-resident probe (the loop of
// block<2, 2> over a B of that size) ran at 3.2 TFLOP/s with 1 MB of B, 2.6 with 1.5 MB and 1.8
// with 2 MB. (kAmxPanelBytes, amx_panel_tiles: amx_gemm.h.)
constexpr int64_t kBlockSteps = kAmxBlockSteps;
constexpr int64_t kMaxPanelTiles = kAmxMaxPanelTiles;
constexpr int64_t kAPackElems = 2 * kBlockSteps * kTileElems;  // two row halves of packed A

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// BFloat16::from_float's rounding (kernels/common/half.h: nearest even, NaN kept quiet), written
// here because this file may not instantiate the shared inline one (see above).
inline uint16_t round_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float bf16_to_float(uint16_t bits) {
  const uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

// ---------- The primitives: tile t is a literal 0-7 ----------
#if COLONY_AMX_NATIVE

// 16 bfloat16 as float32 (exact); the lanes outside `mask` are not read.
inline __m512 widen_bf16_x16(__mmask16 mask, const uint16_t* p) {
  return vec::Avx512::widen_bf16(_mm256_maskz_loadu_epi16(mask, p));
}

// The bits of round_to_bf16(alpha * v[c] + bias[c]) with a bias row (bias: the row's columns from j
// on), else round_to_bf16(alpha * v[c] + beta * out[c]) (out read only where beta != 0), for the
// columns in `mask`, inline in AVX-512. This path used to be an out-of-line function per 16
// outputs, 4.4 % of the char GPT's bf16 step once linear's bias went in through beta = 1
// (docs/benchmarks.md). alpha * v and beta * out are multiplied and then added, as the scalar
// loop below does, and rounded by round_to_bf16's integer arithmetic (vec_math.h), so denormal
// results (a bias nearly cancelling a sum) keep their value, where vcvtneps2bf16 would read them
// as zero. The bits, not stored.
inline __m256i epilogue_x16(const float* v, float alpha, const uint16_t* bias, float beta, __mmask16 mask,
                            const uint16_t* out) {
  __m512 x = _mm512_load_ps(v);
  if (alpha != 1.0f) x = _mm512_mul_ps(x, _mm512_set1_ps(alpha));
  if (bias != nullptr) {
    x = _mm512_add_ps(x, widen_bf16_x16(mask, bias));
  } else if (beta != 0.0f) {
    x = _mm512_add_ps(x, _mm512_mul_ps(_mm512_set1_ps(beta), widen_bf16_x16(mask, out)));
  }
  return vec::Avx512::round_bf16(x);
}

// ldtilecfg's 64-byte operand, palette 1: eight tiles of 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

inline void configure_tiles() {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = kRowBytes;
    cfg.rows[t] = kTileRows;
  }
  _tile_loadconfig(&cfg);
}
// Back to the init state, so the OS need not save 8 KB of tiles at each context switch.
inline void release_tiles() { _tile_release(); }

#define COLONY_AMX_LOAD(t, p, stride_bytes) _tile_loadd(t, p, stride_bytes)
// B with the T1 hint, so that B's stream (32 KB per column pair) does not evict the 32 KB of
// packed A from L1: 1024^3, 1 thread, 1,009 -> 1,134 GFLOP/s at the same blocking.
#define COLONY_AMX_LOAD_B(t, p, stride_bytes) _tile_stream_loadd(t, p, stride_bytes)
#define COLONY_AMX_STORE(t, p, stride_bytes) _tile_stored(t, p, stride_bytes)
#define COLONY_AMX_ZERO(t) _tile_zero(t)
#define COLONY_AMX_DP(c, a, b) _tile_dpbf16ps(c, a, b)

#else  // emulated

struct TileFile {
  unsigned char t[8][kTileRows * kRowBytes];
};
thread_local TileFile tiles;

inline void configure_tiles() {}
inline void release_tiles() {}

inline void tile_load(int t, const void* p, int64_t stride_bytes) {
  for (int64_t r = 0; r < kTileRows; ++r)
    std::memcpy(tiles.t[t] + r * kRowBytes, static_cast<const unsigned char*>(p) + r * stride_bytes, kRowBytes);
}
inline void tile_store(int t, void* p, int64_t stride_bytes) {
  for (int64_t r = 0; r < kTileRows; ++r)
    std::memcpy(static_cast<unsigned char*>(p) + r * stride_bytes, tiles.t[t] + r * kRowBytes, kRowBytes);
}
inline void tile_zero(int t) { std::memset(tiles.t[t], 0, sizeof(tiles.t[t])); }

// Denormals read as zero and results flushed to zero, as tdpbf16ps does.
inline float flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
inline double bf16_operand(uint16_t bits) { return static_cast<double>(flush(bf16_to_float(bits))); }

// tdpbf16ps c, a, b in the hardware's order (amx_gemm.h): per output, the even and the odd
// positions' products summed apart, each exact product added with one float32 rounding (the
// double sum is exact or, when it is not, far from a float32 tie), then C + (E + O).
inline void tile_dp(int c, int a, int b) {
  float* cv = reinterpret_cast<float*>(tiles.t[c]);
  const uint16_t* av = reinterpret_cast<const uint16_t*>(tiles.t[a]);
  const uint16_t* bv = reinterpret_cast<const uint16_t*>(tiles.t[b]);
  for (int64_t i = 0; i < kTileRows; ++i) {
    for (int64_t j = 0; j < kTileCols; ++j) {
      float even = 0.0f, odd = 0.0f;
      for (int64_t r = 0; r < kTileRows; ++r) {
        const uint16_t* ap = av + i * kTileDepth + 2 * r;
        const uint16_t* bp = bv + r * kTileDepth + 2 * j;
        even = flush(static_cast<float>(static_cast<double>(even) + bf16_operand(ap[0]) * bf16_operand(bp[0])));
        odd = flush(static_cast<float>(static_cast<double>(odd) + bf16_operand(ap[1]) * bf16_operand(bp[1])));
      }
      float& out = cv[i * kTileCols + j];
      out = flush(flush(out) + flush(even + odd));
    }
  }
}

#define COLONY_AMX_LOAD(t, p, stride_bytes) tile_load(t, p, stride_bytes)
#define COLONY_AMX_LOAD_B(t, p, stride_bytes) tile_load(t, p, stride_bytes)
#define COLONY_AMX_STORE(t, p, stride_bytes) tile_store(t, p, stride_bytes)
#define COLONY_AMX_ZERO(t) tile_zero(t)
#define COLONY_AMX_DP(c, a, b) tile_dp(c, a, b)

#endif

// C tile t (0-3) to or from memory; the switch folds away where t is known.
inline void store_c(int t, float* p, int64_t stride_bytes) {
  switch (t) {
    case 0: COLONY_AMX_STORE(0, p, stride_bytes); break;
    case 1: COLONY_AMX_STORE(1, p, stride_bytes); break;
    case 2: COLONY_AMX_STORE(2, p, stride_bytes); break;
    default: COLONY_AMX_STORE(3, p, stride_bytes); break;
  }
}
inline void load_c(int t, const float* p, int64_t stride_bytes) {
  switch (t) {
    case 0: COLONY_AMX_LOAD(0, p, stride_bytes); break;
    case 1: COLONY_AMX_LOAD(1, p, stride_bytes); break;
    case 2: COLONY_AMX_LOAD(2, p, stride_bytes); break;
    default: COLONY_AMX_LOAD(3, p, stride_bytes); break;
  }
}
inline void zero_c(int t) {
  switch (t) {
    case 0: COLONY_AMX_ZERO(0); break;
    case 1: COLONY_AMX_ZERO(1); break;
    case 2: COLONY_AMX_ZERO(2); break;
    default: COLONY_AMX_ZERO(3); break;
  }
}

#if COLONY_AMX_NATIVE
// One whole 16 x 32 tile of a column-major A (A^T @ B): column p (16 rows, contiguous) at
// src + p * col_stride. Columns 2s and 2s + 1 interleaved give word s of every tile row (one 32-bit
// word per row), so the tile is the 16 x 16 transpose of those words: 1024^3 A^T @ B, 1 thread
// (matmul_bench --form atb), 859-887 GFLOP/s with the scalar copy below, 1,063-1,073 with this.
void transpose_a_tile(const uint16_t* src, int64_t col_stride, uint16_t* out) {
  __m512i r[16];
  for (int s = 0; s < 16; ++s) {
    const __m512i even = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * s * col_stride)));
    const __m512i odd =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + (2 * s + 1) * col_stride)));
    r[s] = _mm512_or_si512(even, _mm512_slli_epi32(odd, 16));  // word i: (A(i, 2s), A(i, 2s + 1))
  }
  static_assert(kTileDepth == 32, "transpose_16x16_words stores 32 bfloat16 per tile row");
  transpose_16x16_words(r, out);
}
#endif

// Rows [i, i + rows) of A (rows <= 16), depth steps [q0, q0 + nq), copied into nq consecutive
// 16 x 32 tiles (step q at out + 512q, row stride 64 bytes), zeros past m and k. The tile loads
// then read L1-resident, contiguous tiles: read in place, a row-major A whose row stride is a
// multiple of 2 KB (1024 columns) puts the 32 rows of one step in two L1 sets, more lines than
// the 12 ways hold, so every block reloaded them from L2.
void pack_a(const AmxGemmArgs& g, int64_t i, int64_t rows, int64_t q0, int64_t nq, uint16_t* out) {
  const int64_t p0 = q0 * kTileDepth;
  const int64_t depth = min64(nq * kTileDepth, g.k - p0);  // real columns in the block
  if (g.a_col_stride == 1) {
    for (int64_t r = 0; r < kTileRows; ++r) {
      const uint16_t* a = g.a + (i + r) * g.a_row_stride + p0;
      for (int64_t q = 0; q < nq; ++q) {
        uint16_t* o = out + q * kTileElems + r * kTileDepth;
        const int64_t d = r < rows ? min64(kTileDepth, depth - q * kTileDepth) : 0;
        if (d == kTileDepth) {
#if COLONY_AMX_NATIVE
          _mm512_storeu_si512(o, _mm512_loadu_si512(a + q * kTileDepth));  // one move, not memcpy's two
#else
          std::memcpy(o, a + q * kTileDepth, kRowBytes);
#endif
        } else {
          if (d > 0) std::memcpy(o, a + q * kTileDepth, d * 2);
          std::memset(o + (d > 0 ? d : 0), 0, (kTileDepth - (d > 0 ? d : 0)) * 2);
        }
      }
    }
    return;
  }
  // A column-major (A^T @ B, a weight gradient): column p's rows are a_row_stride apart.
  for (int64_t q = 0; q < nq; ++q) {
    uint16_t* o = out + q * kTileElems;
#if COLONY_AMX_NATIVE
    if (rows == kTileRows && g.a_row_stride == 1 && (q + 1) * kTileDepth <= depth) {
      transpose_a_tile(g.a + (p0 + q * kTileDepth) * g.a_col_stride + i, g.a_col_stride, o);
      continue;
    }
#endif
    for (int64_t p = 0; p < kTileDepth; ++p) {
      const int64_t pp = q * kTileDepth + p;
      const uint16_t* a = g.a + (p0 + pp) * g.a_col_stride + i * g.a_row_stride;
      if (pp < depth) {
        for (int64_t r = 0; r < rows; ++r) o[r * kTileDepth + p] = a[r * g.a_row_stride];
        for (int64_t r = rows; r < kTileRows; ++r) o[r * kTileDepth + p] = 0;
      } else {
        for (int64_t r = 0; r < kTileRows; ++r) o[r * kTileDepth + p] = 0;
      }
    }
  }
}

// C tile t covers rows [i, i + 16) and columns [j, j + 16), clipped to m x n.
void start_c(const AmxGemmArgs& g, int t, int64_t i, int64_t j) {
  if (g.c_f32 == nullptr || !g.accumulate) {
    zero_c(t);
    return;
  }
  const int64_t rows = min64(kTileRows, g.m - i), cols = min64(kTileCols, g.n - j);
  float* c = g.c_f32 + i * g.ldc + j;
  if (rows == kTileRows && cols == kTileCols) {
    load_c(t, c, g.ldc * 4);
    return;
  }
  alignas(64) float buf[kTileRows * kTileCols] = {};
  for (int64_t r = 0; r < rows; ++r) std::memcpy(buf + r * kTileCols, c + r * g.ldc, cols * sizeof(float));
  load_c(t, buf, kRowBytes);
}

// A's two 16-row tiles of the block's first depth step (rows 0-15 at a0, 16-31 at a1), the
// elements from one step to the next and the bytes from one row to the next: packed (512, 64) or
// read in place (32, A's row stride).
struct ATiles {
  const uint16_t* a0;
  const uint16_t* a1;
  int64_t step, stride;
  // Read in place and also stored here, in pack_a's layout (rows 16-31 kBlockSteps tiles on), by
  // block<..., true>: a tile load and a tile store pack 1 KB, against 16 loads and 16 stores.
  uint16_t* copy;
};

// The 16 * MR x 16 * NR block at rows i, column tile t (its packed B, step 0, at b_tiles), over
// depth steps [q0, q0 + nq): A's tiles at a, C started from the output (first depth block) or from
// the partial sums at part (16 x 16 float32 tiles: column tile u, row half h at part + 512u +
// 256h), and written back to part.
template <int MR, int NR, bool kCopyA = false>
void block(const AmxGemmArgs& g, const ATiles& a, int64_t i, int64_t t, const uint16_t* b_tiles, int64_t steps,
           int64_t q0, int64_t nq, bool first, float* part) {
  const uint16_t* b0 = b_tiles + q0 * kTileElems;
  const uint16_t* b1 = b0 + steps * kTileElems;
  const uint16_t* a0 = a.a0;
  const uint16_t* a1 = a.a1;
  const int64_t a_step = a.step, a_stride = a.stride;
  const int64_t j = t * kTileCols;
  if (first) {
    start_c(g, 0, i, j);
    if constexpr (NR == 2) start_c(g, 1, i, j + kTileCols);
    if constexpr (MR == 2) start_c(g, 2, i + kTileRows, j);
    if constexpr (MR == 2 && NR == 2) start_c(g, 3, i + kTileRows, j + kTileCols);
  } else {
    load_c(0, part, kRowBytes);
    if constexpr (NR == 2) load_c(1, part + 512, kRowBytes);
    if constexpr (MR == 2) load_c(2, part + 256, kRowBytes);
    if constexpr (MR == 2 && NR == 2) load_c(3, part + 768, kRowBytes);
  }
  for (int64_t q = 0; q < nq; ++q) {
    // Tile 6 (B's first column tile, from L2) is free again after the second product, so its
    // next load has two products' time; in the order 0, 1, 2, 3 it had one.
    COLONY_AMX_LOAD_B(6, b0 + q * kTileElems, kRowBytes);
    COLONY_AMX_LOAD(4, a0 + q * a_step, a_stride);
    if constexpr (kCopyA) COLONY_AMX_STORE(4, a.copy + q * kTileElems, kRowBytes);
    COLONY_AMX_DP(0, 4, 6);
    if constexpr (MR == 2) {
      COLONY_AMX_LOAD(5, a1 + q * a_step, a_stride);
      if constexpr (kCopyA) COLONY_AMX_STORE(5, a.copy + (kBlockSteps + q) * kTileElems, kRowBytes);
      COLONY_AMX_DP(2, 5, 6);
    }
    if constexpr (NR == 2) {
      COLONY_AMX_LOAD_B(7, b1 + q * kTileElems, kRowBytes);
      COLONY_AMX_DP(1, 4, 7);
      if constexpr (MR == 2) COLONY_AMX_DP(3, 5, 7);
    }
  }
  store_c(0, part, kRowBytes);
  if constexpr (NR == 2) store_c(1, part + 512, kRowBytes);
  if constexpr (MR == 2) store_c(2, part + 256, kRowBytes);
  if constexpr (MR == 2 && NR == 2) store_c(3, part + 768, kRowBytes);
}

// Rows [i, i + 32) of column tiles [t0, t_end), summed in part (block's layout, column tile t0
// at part), to the output. gemm calls it for one column pair at a time, once its last depth block
// is summed, right after the next pair's block was issued, so that these loads, conversions and
// stores run while the tile unit works through that block; rounding straight after a block's own
// tilestored (reading the tiles back, presumably before the stores had drained) took 24 % of a
// 1024^3 product (perf, 1 thread), and a whole panel row at the end of the column loop about 20 %
// (the product without it ran 1.26x as fast: 1 thread, 2026-12-05 evening).
void write_out(const AmxGemmArgs& g, int64_t i, int64_t t0, int64_t t_end, const float* part) {
  [[maybe_unused]] const bool plain = g.alpha == 1.0f && g.beta == 0.0f && g.bias == nullptr;  // C = round(A B)
  int64_t t_first = t0;
#if COLONY_AMX_NATIVE
  if (g.c_bf16 != nullptr) {
    // Two whole column tiles at once: 32 outputs rounded by one vcvtne2ps2bf16 (nearest even, as
    // vcvtneps2bf16 below) into one 64-byte store, half the stores of 32-byte rows. With the
    // interleaving above: 1024^3, 1 thread, 1.10-1.14x the product's speed, against 1.06x for the
    // interleaving alone and 1.04x for these rows alone (alternating, 5 rounds each).
    for (; t_first + 1 < t_end && (t_first + 2) * kTileCols <= g.n; t_first += 2) {
      const int64_t j = t_first * kTileCols;
      for (int64_t h = 0; h < 2; ++h) {
        const int64_t i0 = i + h * kTileRows;
        const int64_t rows = min64(kTileRows, g.m - i0);
        const float* tile = part + (t_first - t0) * kTileElems + h * kTileRows * kTileCols;
        for (int64_t r = 0; r < rows; ++r) {
          uint16_t* out = g.c_bf16 + (i0 + r) * g.ldc + j;
          if (plain) {
            const __m512bh both = _mm512_cvtne2ps_pbh(_mm512_load_ps(tile + kTileElems + r * kTileCols),
                                                      _mm512_load_ps(tile + r * kTileCols));
            _mm512_storeu_si512(out, reinterpret_cast<__m512i>(both));
            continue;
          }
          // The epilogue (a bias row, alpha, beta) for both tiles, also in one 64-byte store.
          const uint16_t* bias = g.bias != nullptr ? g.bias + j : nullptr;
          const __m256i lo = epilogue_x16(tile + r * kTileCols, g.alpha, bias, g.beta, 0xffff, out);
          const __m256i hi = epilogue_x16(tile + kTileElems + r * kTileCols, g.alpha,
                                          bias != nullptr ? bias + kTileCols : nullptr, g.beta, 0xffff, out + kTileCols);
          _mm512_storeu_si512(out, _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
        }
      }
    }
  }
#endif
  for (int64_t t = t_first; t < t_end; ++t) {
    const int64_t j = t * kTileCols, cols = min64(kTileCols, g.n - j);
    for (int64_t h = 0; h < 2; ++h) {
      const int64_t i0 = i + h * kTileRows;
      const int64_t rows = min64(kTileRows, g.m - i0);
      const float* tile = part + (t - t0) * kTileElems + h * kTileRows * kTileCols;
      for (int64_t r = 0; r < rows; ++r) {
        const float* v = tile + r * kTileCols;
        if (g.c_f32 != nullptr) {
#if COLONY_AMX_NATIVE
          // One move, not a memcpy call per 16 floats: those calls took 10 % of a LeNet
          // convolution's products (m <= 150, n <= 892; perf, 1 thread).
          if (cols == kTileCols) {
            _mm512_storeu_ps(g.c_f32 + (i0 + r) * g.ldc + j, _mm512_load_ps(v));
            continue;
          }
#endif
          std::memcpy(g.c_f32 + (i0 + r) * g.ldc + j, v, cols * sizeof(float));
          continue;
        }
        uint16_t* out = g.c_bf16 + (i0 + r) * g.ldc + j;
#if COLONY_AMX_NATIVE
        if (cols == kTileCols && plain) {
          // vcvtneps2bf16 rounds to nearest even and quiets NaNs as round_to_bf16 does; it differs
          // only on denormal inputs (read as zero), and tdpbf16ps never leaves one in C.
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(v))));
          continue;
        }
        if (!plain) {
          const auto mask = static_cast<__mmask16>((1u << cols) - 1u);
          _mm256_mask_storeu_epi16(out, mask,
                                   epilogue_x16(v, g.alpha, g.bias != nullptr ? g.bias + j : nullptr, g.beta, mask, out));
          continue;
        }
#endif
        if (g.bias != nullptr) {
          for (int64_t c = 0; c < cols; ++c) out[c] = round_to_bf16(g.alpha * v[c] + bf16_to_float(g.bias[j + c]));
        } else if (g.beta == 0.0f) {
          for (int64_t c = 0; c < cols; ++c) out[c] = round_to_bf16(g.alpha * v[c]);
        } else {
          for (int64_t c = 0; c < cols; ++c) out[c] = round_to_bf16(g.alpha * v[c] + g.beta * bf16_to_float(out[c]));
        }
      }
    }
  }
}

void gemm(const AmxGemmArgs& g, uint16_t* scratch) {
  if (g.m <= 0 || g.n <= 0) return;
  const int64_t steps = (g.k + kTileDepth - 1) / kTileDepth;
  const int64_t col_tiles = (g.n + kTileCols - 1) / kTileCols;
  // Column tiles per panel, even so that the 32-wide blocks stay whole.
  const int64_t panel = amx_panel_tiles(g.k);
  // Depth blocks of at most kBlockSteps steps, as even as they come (one block for k = 0).
  const int64_t blocks = steps > kBlockSteps ? (steps + kBlockSteps - 1) / kBlockSteps : 1;
  const int64_t block_steps = (steps + blocks - 1) / blocks;
  // Every tile row on one cache line: thread_scratch's buffer is only malloc-aligned (16 bytes),
  // and rows straddling two lines ran the whole product at half speed (1024^3, 1 thread).
  uint16_t* a_packed = scratch + ((64 - reinterpret_cast<uintptr_t>(scratch) % 64) % 64) / 2;
  float* part = reinterpret_cast<float*>(a_packed + (g.m + 31) / 32 * blocks * kAPackElems);  // 64-byte aligned too
  // An unpacked B's panel, packed here (after the partial sums: aligned too).
  uint16_t* b_pack = reinterpret_cast<uint16_t*>(part + kMaxPanelTiles * kTileElems);
  // A row-major A is read in place (whole 32-row blocks of whole steps) unless its rows would
  // crowd L1's sets: the 32 rows of a depth block start on 64 / gcd(stride in lines, 64) distinct
  // sets of 64 and take `lines` each, so a set holds about 32 * lines / covered of them; more than
  // 8 of the 12 ways (1024 columns: 16) and the block no longer stays in L1 while B streams past.
  // Rows must also start on cache lines (tile rows straddling two lines ran at half speed).
  // Copying a block costs as much as 12 % of a 128^3 product (matmul_bench 128: A @ B 514-550
  // GFLOP/s in place, 469-483 packed), so it is only done where it keeps A in L1.
  bool in_place = false;
  if (g.a_col_stride == 1 && (g.a_row_stride * 2) % 64 == 0 && reinterpret_cast<uintptr_t>(g.a) % 64 == 0) {
    const int64_t stride_lines = (g.a_row_stride * 2 / 64) % 64;
    int64_t gcd = 64;
    for (int64_t x = stride_lines, y = 64; y != 0;) {
      const int64_t r = x % y;
      x = y;
      y = r;
      gcd = x;
    }
    const int64_t lines = block_steps;  // a step is one 64-byte line per row
    const int64_t covered = min64(64, 64 / gcd * lines);
    in_place = 32 * lines <= 8 * covered;
  }
  configure_tiles();
  for (int64_t t0 = 0; t0 < col_tiles; t0 += panel) {
    const int64_t t_end = min64(t0 + panel, col_tiles);
    const uint16_t* b_panel = g.packed_b != nullptr ? g.packed_b + t0 * steps * kTileElems : b_pack;
    if (g.packed_b == nullptr) {
      const int64_t j0 = t0 * kTileCols;
      amx_pack_b(g.k, min64(g.n - j0, (t_end - t0) * kTileCols), g.b + j0 * g.b_col_stride, g.b_row_stride,
                 g.b_col_stride, b_pack);
    }
    // Every other panel runs its row blocks back to front, so it starts on the rows of A the last
    // panel ended on, still in L2 (1024^3, 1 thread: +1-3 %, 3 alternating rounds).
    const int64_t row_blocks = (g.m + 2 * kTileRows - 1) / (2 * kTileRows);
    const bool reverse = (t0 / panel) % 2 == 1;
    for (int64_t ib = 0; ib < row_blocks; ++ib) {
      const int64_t i = (reverse ? row_blocks - 1 - ib : ib) * 2 * kTileRows;
      const int64_t rows = min64(2 * kTileRows, g.m - i);
      const bool two_rows = rows > kTileRows;
      for (int64_t kb = 0; kb < blocks; ++kb) {
        const int64_t q0 = kb * block_steps, nq = min64(block_steps, steps - q0);
        // A is packed in the first panel and read in tiles by the others: packing it per panel
        // took 16 % of a 1024^3 product (two panels; perf, 1 thread).
        uint16_t* a_pack = a_packed + (i / (2 * kTileRows) * blocks + kb) * kAPackElems;
        ATiles a{a_pack, a_pack + kBlockSteps * kTileElems, kTileElems, kRowBytes, nullptr};
        // The first panel's first column pair reads a row-major A's whole block in place and
        // stores its tiles to a_pack as it goes (ATiles::copy), for the other pairs and panels:
        // 1024^3, 1 thread, 1.13-1.19x the speed before this day's changes against 1.08-1.15x
        // with pack_a (9 runs of 3 alternating rounds, A @ B and A @ B^T). pack_a stays for edge blocks and column-major A.
        const bool copy_a = t0 == 0 && !in_place && g.a_col_stride == 1 && rows == 2 * kTileRows &&
                            (q0 + nq) * kTileDepth <= g.k;
        ATiles raw = a;
        if (copy_a) {
          raw.a0 = g.a + i * g.a_row_stride + q0 * kTileDepth;
          raw.a1 = raw.a0 + kTileRows * g.a_row_stride;
          raw.step = kTileDepth;
          raw.stride = g.a_row_stride * 2;
          raw.copy = a_pack;
        }
        if (in_place && (rows == 2 * kTileRows || g.a_rows_padded) && (q0 + nq) * kTileDepth <= g.k) {
          a.a0 = g.a + i * g.a_row_stride + q0 * kTileDepth;
          a.a1 = a.a0 + kTileRows * g.a_row_stride;
          a.step = kTileDepth;
          a.stride = g.a_row_stride * 2;
        } else if (t0 == 0 && !copy_a) {
          pack_a(g, i, min64(rows, kTileRows), q0, nq, a_pack);
          if (two_rows) pack_a(g, i + kTileRows, rows - kTileRows, q0, nq, a_pack + kBlockSteps * kTileElems);
        }
        const bool first = kb == 0, last = kb == blocks - 1;
        for (int64_t t = t0; t < t_end; t += 2) {
          const bool two_cols = t + 1 < t_end;
          float* p = part + (t - t0) * kTileElems;
          const uint16_t* bt = b_panel + (t - t0) * steps * kTileElems;
          if (copy_a && t == t0) {
            if (two_cols) {
              block<2, 2, true>(g, raw, i, t, bt, steps, q0, nq, first, p);
            } else {
              block<2, 1, true>(g, raw, i, t, bt, steps, q0, nq, first, p);
            }
          } else if (two_rows && two_cols) {
            block<2, 2>(g, a, i, t, bt, steps, q0, nq, first, p);
          } else if (two_rows) {
            block<2, 1>(g, a, i, t, bt, steps, q0, nq, first, p);
          } else if (two_cols) {
            block<1, 2>(g, a, i, t, bt, steps, q0, nq, first, p);
          } else {
            block<1, 1>(g, a, i, t, bt, steps, q0, nq, first, p);
          }
          // The previous pair's output, while the tile unit works through this pair's block.
          if (last && t > t0) write_out(g, i, t - 2, t, part + (t - 2 - t0) * kTileElems);
        }
        if (last) {  // the last pair (or single tile)
          const int64_t t_last = t0 + (t_end - t0 - 1) / 2 * 2;
          write_out(g, i, t_last, t_end, part + (t_last - t0) * kTileElems);
        }
      }
    }
  }
  release_tiles();
}

}  // namespace

const AmxGemmFns& amx_gemm_fns() {
  static const AmxGemmFns fns{COLONY_AMX_NATIVE ? "amx" : "amx_emulated", &gemm};
  return fns;
}

}  // namespace colony::kernels::cpu::COLONY_AMX_ISA

#undef COLONY_AMX_LOAD
#undef COLONY_AMX_LOAD_B
#undef COLONY_AMX_STORE
#undef COLONY_AMX_ZERO
#undef COLONY_AMX_DP

#pragma GCC diagnostic pop
