// The AMX tile primitives with configurable shapes that the convolutions' tile products are
// written over (conv_pixels_tiles.h, conv_channels_tiles.h, conv_weight_rows_tiles.h): ldtilecfg's
// operand, and load, store, zero and tdpbf16ps either as the intrinsics or, for the tests, over
// tile registers in memory with scalar arithmetic in tdpbf16ps' order (amx_gemm.h), so that a CPU
// without AMX runs the same product with the same configured shapes. Not a normal header: a tiles
// header defines COLONY_AMX_TILE_OPS_NATIVE (1: the intrinsics, built with -mamx-tile -mamx-bf16;
// 0: emulated) and includes it inside its copy's anonymous namespace, after <cstdint>, <cstring>
// and <immintrin.h> (native) or <cmath> (emulated); it defines AMX_TILE_LOAD, AMX_TILE_STORE,
// AMX_TILE_ZERO and AMX_TILE_DP, which that header undefines at its end.
#if !defined(COLONY_AMX_TILE_OPS_NATIVE)
#error "define COLONY_AMX_TILE_OPS_NATIVE before including amx_tile_ops.h"
#endif

// ldtilecfg's operand (palette 1): per tile its rows and bytes per row.
struct alignas(64) TileShapes {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

#if COLONY_AMX_TILE_OPS_NATIVE

inline void configure(const TileShapes& s) { _tile_loadconfig(&s); }
// Back to the init state, so the OS need not save 8 KB of tiles at each context switch.
inline void release() { _tile_release(); }
#define AMX_TILE_LOAD(t, p, stride) _tile_loadd(t, p, stride)
#define AMX_TILE_STORE(t, p, stride) _tile_stored(t, p, stride)
#define AMX_TILE_ZERO(t) _tile_zero(t)
#define AMX_TILE_DP(c, a, b) _tile_dpbf16ps(c, a, b)

#else  // emulated

struct Registers {
  unsigned char t[8][16 * 64];
  TileShapes shapes;
};
thread_local Registers regs;

inline void configure(const TileShapes& s) { regs.shapes = s; }
inline void release() {}
inline void tile_load(int t, const void* p, int64_t stride) {
  std::memset(regs.t[t], 0, sizeof(regs.t[t]));
  for (int64_t r = 0; r < regs.shapes.rows[t]; ++r)
    std::memcpy(regs.t[t] + r * 64, static_cast<const unsigned char*>(p) + r * stride, regs.shapes.colsb[t]);
}
inline void tile_store(int t, void* p, int64_t stride) {
  for (int64_t r = 0; r < regs.shapes.rows[t]; ++r)
    std::memcpy(static_cast<unsigned char*>(p) + r * stride, regs.t[t] + r * 64, regs.shapes.colsb[t]);
}
inline void tile_zero(int t) { std::memset(regs.t[t], 0, sizeof(regs.t[t])); }

// tdpbf16ps' arithmetic (amx_gemm.h): denormals read as zero and every result flushed; per output
// the even and the odd positions' exact products summed apart, then C + (E + O), over C's
// configured rows and columns. Pairs past A's configured depth add zero products, as
// tests/kernels/amx_reference.h's whole 32-deep steps do.
inline float flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
inline double operand(uint16_t bits) {
  const uint32_t w = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &w, sizeof(f));
  return static_cast<double>(flush(f));
}
inline void tile_dp(int c, int a, int b) {
  float* cv = reinterpret_cast<float*>(regs.t[c]);
  const uint16_t* av = reinterpret_cast<const uint16_t*>(regs.t[a]);
  const uint16_t* bv = reinterpret_cast<const uint16_t*>(regs.t[b]);
  const int64_t pairs = regs.shapes.colsb[a] / 4, rows = regs.shapes.rows[c], cols = regs.shapes.colsb[c] / 4;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float even = 0.0f, odd = 0.0f;
      for (int64_t r = 0; r < 16; ++r) {
        const bool in = r < pairs;
        const uint16_t* ap = av + i * 32 + 2 * r;
        const uint16_t* bp = bv + r * 32 + 2 * j;
        even = flush(static_cast<float>(static_cast<double>(even) + (in ? operand(ap[0]) * operand(bp[0]) : 0.0)));
        odd = flush(static_cast<float>(static_cast<double>(odd) + (in ? operand(ap[1]) * operand(bp[1]) : 0.0)));
      }
      float& out = cv[i * 16 + j];
      out = flush(flush(out) + flush(even + odd));
    }
  }
}
#define AMX_TILE_LOAD(t, p, stride) tile_load(t, p, stride)
#define AMX_TILE_STORE(t, p, stride) tile_store(t, p, stride)
#define AMX_TILE_ZERO(t) tile_zero(t)
#define AMX_TILE_DP(c, a, b) tile_dp(c, a, b)

#endif
