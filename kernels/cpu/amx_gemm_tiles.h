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
// tiles for four tdpbf16ps. A block's C tiles stay in registers over the whole depth and are
// stored once. The column tiles are walked in panels whose packed B takes at most kPanelBytes, so a
// panel stays in the core's L2 cache (2 MB on Sapphire Rapids) while every 32-row block of A
// passes over it; the 32 rows of A (64 bytes per depth step and row) stay in L1/L2 across the
// panel's columns. From L1, four loads and four tdpbf16ps run at 3.27 TFLOP/s on the 2-core Xeon
// (a register-resident probe); from L2 the loads bound it. Tried and dropped (1024^3, alternating
// runs on that busy VM): copying A's 32 rows to tiles first (no gain; interleaving the two
// halves' tiles was slower), 256 KB to 2 MB panels (no difference), and depth blocks of 8 to 32
// steps with C's partial sums in scratch (slower).
#if !defined(COLONY_AMX_ISA) || !defined(COLONY_AMX_NATIVE)
#error "define COLONY_AMX_ISA and COLONY_AMX_NATIVE before including amx_gemm_tiles.h"
#endif

#include <cstdint>
#include <cstring>

#include "kernels/cpu/amx_gemm.h"

#if COLONY_AMX_NATIVE
#include <immintrin.h>
#else
#include <cmath>
#endif

namespace colony::kernels::cpu::COLONY_AMX_ISA {
namespace {

constexpr int64_t kTileRows = 16;    // rows of every tile
constexpr int64_t kTileDepth = 32;   // bfloat16 per row of an A tile (64 bytes): one depth step
constexpr int64_t kTileCols = 16;    // float32 per row of a C tile
constexpr int64_t kTileElems = 512;  // bfloat16 per packed B tile (16 rows of 32)
constexpr int64_t kRowBytes = 64;
// Packed B kept per panel (see above): 512 KB, a quarter of the L2, leaving room for A's rows and
// C; 1024^3 ran at the same speed with 256 KB and 1 MB panels (benchmarks/matmul_bench).
constexpr int64_t kPanelBytes = int64_t{512} << 10;

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

// out[c] = round_to_bf16(alpha * v[c] + beta * out[c]) for 16 columns (beta == 0: out not read),
// in AVX-512: the scalar loop, which GCC does not vectorize, took 1.2 ms of a 1024^3 product's
// 4.1 (Intel Xeon, Sapphire Rapids class).
inline void round_row_to_bf16(const float* v, float alpha, float beta, uint16_t* out) {
  __m512 x = _mm512_mul_ps(_mm512_loadu_ps(v), _mm512_set1_ps(alpha));
  if (beta != 0.0f) {
    const __m256i old = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out));
    const __m512 old_f = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(old), 16));
    x = _mm512_add_ps(x, _mm512_mul_ps(_mm512_set1_ps(beta), old_f));  // as the scalar a * v + b * c
  }
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i biased = _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff)), lsb);
  const __m512i rounded = _mm512_srli_epi32(biased, 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet)));
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

// 16 rows of A for the depth steps: step q < direct_steps reads base + 32q (row stride `stride`
// bytes, A in place or a zero-padded copy); the step after them, if any, reads `tail` (a
// zero-padded 16 x 32 copy of the last, partial step).
struct ARows {
  const uint16_t* base;
  int64_t stride;
  int64_t direct_steps;
  const uint16_t* tail;
  const uint16_t* step(int64_t q) const { return q < direct_steps ? base + q * kTileDepth : tail; }
  int64_t step_stride(int64_t q) const { return q < direct_steps ? stride : kRowBytes; }
};

// Rows [i, i + rows) of A (rows <= 16) for `steps` depth steps: in place when all 16 rows are
// there and A is row-major (only a partial last step copied, to scratch's first 512 elements),
// else copied whole to scratch (16 x 32 * steps, zeros past m and k).
ARows prepare_a(const AmxGemmArgs& g, int64_t i, int64_t rows, int64_t steps, uint16_t* scratch) {
  const int64_t depth = steps * kTileDepth;
  if (rows == kTileRows && g.a_col_stride == 1) {
    const int64_t whole = g.k / kTileDepth;
    const uint16_t* a = g.a + i * g.a_row_stride;
    if (whole < steps) {
      const int64_t p0 = whole * kTileDepth;
      for (int64_t r = 0; r < kTileRows; ++r)
        for (int64_t p = 0; p < kTileDepth; ++p)
          scratch[r * kTileDepth + p] = p0 + p < g.k ? a[r * g.a_row_stride + p0 + p] : 0;
    }
    return {a, g.a_row_stride * 2, whole, scratch};
  }
  for (int64_t r = 0; r < kTileRows; ++r) {
    uint16_t* out = scratch + r * depth;
    const uint16_t* a = g.a + (i + r) * g.a_row_stride;
    for (int64_t p = 0; p < depth; ++p) out[p] = r < rows && p < g.k ? a[p * g.a_col_stride] : 0;
  }
  return {scratch, depth * 2, steps, nullptr};
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

void finish_c(const AmxGemmArgs& g, int t, int64_t i, int64_t j) {
  const int64_t rows = min64(kTileRows, g.m - i), cols = min64(kTileCols, g.n - j);
  if (g.c_f32 != nullptr && rows == kTileRows && cols == kTileCols) {
    store_c(t, g.c_f32 + i * g.ldc + j, g.ldc * 4);
    return;
  }
  alignas(64) float buf[kTileRows * kTileCols];
  store_c(t, buf, kRowBytes);
  if (g.c_f32 != nullptr) {
    for (int64_t r = 0; r < rows; ++r) std::memcpy(g.c_f32 + (i + r) * g.ldc + j, buf + r * kTileCols, cols * 4);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    uint16_t* out = g.c_bf16 + (i + r) * g.ldc + j;
    const float* v = buf + r * kTileCols;
#if COLONY_AMX_NATIVE
    if (cols == kTileCols) {
      round_row_to_bf16(v, g.alpha, g.beta, out);
      continue;
    }
#endif
    if (g.beta == 0.0f) {
      for (int64_t c = 0; c < cols; ++c) out[c] = round_to_bf16(g.alpha * v[c]);
    } else {
      for (int64_t c = 0; c < cols; ++c) out[c] = round_to_bf16(g.alpha * v[c] + g.beta * bf16_to_float(out[c]));
    }
  }
}

// The 16 * MR x 16 * NR block at rows i, column tile t, over `steps` depth steps.
template <int MR, int NR>
void block(const AmxGemmArgs& g, const ARows* a, int64_t i, int64_t t, int64_t steps) {
  const uint16_t* b0 = g.packed_b + t * steps * kTileElems;
  const uint16_t* b1 = b0 + steps * kTileElems;
  const int64_t j = t * kTileCols;
  start_c(g, 0, i, j);
  if constexpr (NR == 2) start_c(g, 1, i, j + kTileCols);
  if constexpr (MR == 2) start_c(g, 2, i + kTileRows, j);
  if constexpr (MR == 2 && NR == 2) start_c(g, 3, i + kTileRows, j + kTileCols);
  for (int64_t q = 0; q < steps; ++q) {
    COLONY_AMX_LOAD(6, b0 + q * kTileElems, kRowBytes);
    COLONY_AMX_LOAD(4, a[0].step(q), a[0].step_stride(q));
    COLONY_AMX_DP(0, 4, 6);
    if constexpr (NR == 2) {
      COLONY_AMX_LOAD(7, b1 + q * kTileElems, kRowBytes);
      COLONY_AMX_DP(1, 4, 7);
    }
    if constexpr (MR == 2) {
      COLONY_AMX_LOAD(5, a[1].step(q), a[1].step_stride(q));
      COLONY_AMX_DP(2, 5, 6);
      if constexpr (NR == 2) COLONY_AMX_DP(3, 5, 7);
    }
  }
  finish_c(g, 0, i, j);
  if constexpr (NR == 2) finish_c(g, 1, i, j + kTileCols);
  if constexpr (MR == 2) finish_c(g, 2, i + kTileRows, j);
  if constexpr (MR == 2 && NR == 2) finish_c(g, 3, i + kTileRows, j + kTileCols);
}

void gemm(const AmxGemmArgs& g, uint16_t* scratch) {
  if (g.m <= 0 || g.n <= 0) return;
  const int64_t steps = (g.k + kTileDepth - 1) / kTileDepth;
  const int64_t col_tiles = (g.n + kTileCols - 1) / kTileCols;
  // Column tiles per panel, even so that the 32-wide blocks stay whole.
  int64_t panel = kPanelBytes / (steps * kTileElems * 2 + 1);
  panel = panel < 2 ? 2 : panel & ~int64_t{1};
  uint16_t* scratch_hi = scratch + kTileRows * steps * kTileDepth;
  configure_tiles();
  for (int64_t t0 = 0; t0 < col_tiles; t0 += panel) {
    const int64_t t_end = min64(t0 + panel, col_tiles);
    for (int64_t i = 0; i < g.m; i += 2 * kTileRows) {
      const int64_t rows = min64(2 * kTileRows, g.m - i);
      ARows a[2];
      a[0] = prepare_a(g, i, min64(rows, kTileRows), steps, scratch);
      const bool two_rows = rows > kTileRows;
      if (two_rows) a[1] = prepare_a(g, i + kTileRows, rows - kTileRows, steps, scratch_hi);
      for (int64_t t = t0; t < t_end; t += 2) {
        const bool two_cols = t + 1 < t_end;
        if (two_rows && two_cols) {
          block<2, 2>(g, a, i, t, steps);
        } else if (two_rows) {
          block<2, 1>(g, a, i, t, steps);
        } else if (two_cols) {
          block<1, 2>(g, a, i, t, steps);
        } else {
          block<1, 1>(g, a, i, t, steps);
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
#undef COLONY_AMX_STORE
#undef COLONY_AMX_ZERO
#undef COLONY_AMX_DP
