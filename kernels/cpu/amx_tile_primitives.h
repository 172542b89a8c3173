// The AMX tile primitives of a textual tile copy, written once: ldtilecfg's operand (TileShapes),
// configure() and release(), and for the emulated build the tile registers in memory with the
// configured shapes and tdpbf16ps' arithmetic in scalar code. Not a normal header: a copy's tiles
// header (conv_pixels_tiles.h, conv_weight_rows_tiles.h) includes it inside its anonymous namespace, after defining
// COLONY_AMX_TILE_PRIMITIVES_NATIVE (1: the intrinsics, built with -mamx-tile -mamx-bf16; 0: the
// emulated registers, test-only), so every copy gets its own internal definitions.
#if !defined(COLONY_AMX_TILE_PRIMITIVES_NATIVE)
#error "define COLONY_AMX_TILE_PRIMITIVES_NATIVE before including amx_tile_primitives.h"
#endif

// ldtilecfg's operand (palette 1).
struct alignas(64) TileShapes {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

#if COLONY_AMX_TILE_PRIMITIVES_NATIVE

inline void configure(const TileShapes& s) { _tile_loadconfig(&s); }
inline void release() { _tile_release(); }

#else  // emulated

constexpr int64_t kTileRegisterRowBytes = 64;

struct Registers {
  unsigned char t[8][16 * kTileRegisterRowBytes];
  TileShapes shapes;
};
thread_local Registers regs;

inline void configure(const TileShapes& s) {
  regs.shapes = s;
  std::memset(regs.t, 0, sizeof(regs.t));  // ldtilecfg zeroes the tiles
}
inline void release() {}
inline void tile_load(int t, const void* p, int64_t stride) {
  std::memset(regs.t[t], 0, sizeof(regs.t[t]));
  for (int64_t r = 0; r < regs.shapes.rows[t]; ++r) {
    std::memcpy(regs.t[t] + r * kTileRegisterRowBytes, static_cast<const unsigned char*>(p) + r * stride,
                regs.shapes.colsb[t]);
  }
}
inline void tile_store(int t, void* p, int64_t stride) {
  for (int64_t r = 0; r < regs.shapes.rows[t]; ++r) {
    std::memcpy(static_cast<unsigned char*>(p) + r * stride, regs.t[t] + r * kTileRegisterRowBytes,
                regs.shapes.colsb[t]);
  }
}
inline void tile_zero(int t) { std::memset(regs.t[t], 0, sizeof(regs.t[t])); }

// tdpbf16ps' arithmetic (amx_gemm.h): denormals read as zero and every result flushed; per output
// of C's configured rows and columns the even and the odd positions' exact products summed apart,
// then C + (E + O). Pairs past A's configured depth add zero products, as
// tests/kernels/amx_reference.h's whole 32-deep steps do.
inline float flush_subnormal(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
inline double tile_operand(uint16_t bits) {
  const uint32_t w = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &w, sizeof(f));
  return static_cast<double>(flush_subnormal(f));
}
inline void tile_dp(int c, int a, int b) {
  float* cv = reinterpret_cast<float*>(regs.t[c]);
  const uint16_t* av = reinterpret_cast<const uint16_t*>(regs.t[a]);
  const uint16_t* bv = reinterpret_cast<const uint16_t*>(regs.t[b]);
  const int64_t pairs = regs.shapes.colsb[a] / 4;
  for (int64_t i = 0; i < regs.shapes.rows[c]; ++i) {
    for (int64_t j = 0; j < regs.shapes.colsb[c] / 4; ++j) {
      float even = 0.0f, odd = 0.0f;
      for (int64_t r = 0; r < 16; ++r) {
        const bool in = r < pairs;
        const uint16_t* ap = av + i * 32 + 2 * r;
        const uint16_t* bp = bv + r * 32 + 2 * j;
        even = flush_subnormal(
            static_cast<float>(static_cast<double>(even) + (in ? tile_operand(ap[0]) * tile_operand(bp[0]) : 0.0)));
        odd = flush_subnormal(
            static_cast<float>(static_cast<double>(odd) + (in ? tile_operand(ap[1]) * tile_operand(bp[1]) : 0.0)));
      }
      float& out = cv[i * 16 + j];
      out = flush_subnormal(flush_subnormal(out) + flush_subnormal(even + odd));
    }
  }
}

#endif
