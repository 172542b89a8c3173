// The product of conv_pixels.h (pixels on the tiles' rows), written once over a few tile
// primitives. Not a normal header: a .cc defines COLONY_CONV_PIXELS_ISA (the namespace of its copy)
// and COLONY_CONV_PIXELS_NATIVE, then includes this file, which defines that copy's
// conv_pixels_fns().
//  - COLONY_CONV_PIXELS_NATIVE 1 (conv_pixels_amx.cc, built with -mamx-tile -mamx-bf16): the tile
//    intrinsics.
//  - COLONY_CONV_PIXELS_NATIVE 0 (conv_pixels_emulated.cc, test-only): the tile registers in memory,
//    with the configured shapes, and scalar arithmetic in tdpbf16ps' order (amx_gemm.h), so the
//    tests check the steps' offsets, the weights' tiles and the edge rows on any CPU.
//
// Tiles: 0-3 hold C (16 pixels x 16 output channels, float32), 4 and 5 A (16 pixels x `depth`
// bfloat16: A's rows are read in place from the channels-last image, `pixel_stride` apart), 6 and
// 7 B (depth / 2 rows of VNNI pairs, 16 output channels). A block is up to four C tiles of 64
// consecutive pixels for one column tile of output channels; each step loads B once (alternating
// between 6 and 7, so that a load never waits for the product still reading the other) and A once
// per C tile.
// As amx_gemm_tiles.h: internal linkage or the copy's namespace only, no shared inline function
// instantiated here (small_gemm_isa_symbols_test checks the object).
#if !defined(COLONY_CONV_PIXELS_ISA) || !defined(COLONY_CONV_PIXELS_NATIVE)
#error "define COLONY_CONV_PIXELS_ISA and COLONY_CONV_PIXELS_NATIVE before including conv_pixels_tiles.h"
#endif

#include <cstdint>
#include <cstring>

#include "kernels/cpu/conv_pixels.h"

#if COLONY_CONV_PIXELS_NATIVE
#include <immintrin.h>
#else
#include <cmath>
#endif

namespace colony::kernels::cpu::COLONY_CONV_PIXELS_ISA {
namespace {

constexpr int64_t kRows = 16;      // pixels per tile
constexpr int64_t kRowBytes = 64;  // bytes per C and B tile row
constexpr int64_t kWeightTile = kConvPixelsWeightTile;

// The tile primitives (the intrinsics, or tile registers in memory for the emulated copy).
#define COLONY_AMX_TILE_OPS_NATIVE COLONY_CONV_PIXELS_NATIVE
#include "kernels/cpu/amx_tile_ops.h"
#define CONV_PIXELS_LOAD(t, p, stride) AMX_TILE_LOAD(t, p, stride)
#define CONV_PIXELS_STORE(t, p, stride) AMX_TILE_STORE(t, p, stride)
#define CONV_PIXELS_ZERO(t) AMX_TILE_ZERO(t)
#define CONV_PIXELS_DP(c, a, b) AMX_TILE_DP(c, a, b)

// ldtilecfg's operand: the shapes above, A `depth` bfloat16 wide.
TileShapes shapes_for(int64_t depth) {
  TileShapes s;
  std::memset(&s, 0, sizeof(s));
  s.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    const bool a = t == 4 || t == 5, b = t >= 6;
    s.colsb[t] = static_cast<uint16_t>(a ? depth * 2 : kRowBytes);
    s.rows[t] = static_cast<uint8_t>(b ? depth / 2 : kRows);
  }
  return s;
}

// One step of a block: B's tile (6 or 7: the intrinsics take literal tile numbers) loaded once,
// then C tile i += A rows q0 + 16 i (loaded into 4 or 5) times B.
#define CONV_PIXELS_STEP(B)                                          \
  do {                                                               \
    CONV_PIXELS_LOAD(B, w, kRowBytes);                               \
    CONV_PIXELS_LOAD(4, a, stride);                                  \
    CONV_PIXELS_DP(0, 4, B);                                         \
    if constexpr (Tiles > 1) {                                       \
      CONV_PIXELS_LOAD(5, a + kRows * pixel, stride);                \
      CONV_PIXELS_DP(1, 5, B);                                       \
    }                                                                \
    if constexpr (Tiles > 2) {                                       \
      CONV_PIXELS_LOAD(4, a + 2 * kRows * pixel, stride);            \
      CONV_PIXELS_DP(2, 4, B);                                       \
    }                                                                \
    if constexpr (Tiles > 3) {                                       \
      CONV_PIXELS_LOAD(5, a + 3 * kRows * pixel, stride);            \
      CONV_PIXELS_DP(3, 5, B);                                       \
    }                                                                \
  } while (0)

template <int Tiles>
inline void step_b6(const uint16_t* a, int64_t pixel, const uint16_t* w) {
  const int64_t stride = pixel * 2;
  CONV_PIXELS_STEP(6);
}
template <int Tiles>
inline void step_b7(const uint16_t* a, int64_t pixel, const uint16_t* w) {
  const int64_t stride = pixel * 2;
  CONV_PIXELS_STEP(7);
}

// Pixels [q0, q0 + 16 Tiles) of output-channel tile t.
template <int Tiles>
void block(const ConvPixelsArgs& args, int64_t q0, int64_t t) {
  CONV_PIXELS_ZERO(0);
  if constexpr (Tiles > 1) CONV_PIXELS_ZERO(1);
  if constexpr (Tiles > 2) CONV_PIXELS_ZERO(2);
  if constexpr (Tiles > 3) CONV_PIXELS_ZERO(3);
  const int64_t pixel = args.pixel_stride;
  const uint16_t* a = args.image + q0 * pixel;
  const uint16_t* w = args.packed_w + t * args.steps * kWeightTile;
  int64_t s = 0;
  for (; s + 2 <= args.steps; s += 2) {
    step_b6<Tiles>(a + args.step_offsets[s], pixel, w + s * kWeightTile);
    step_b7<Tiles>(a + args.step_offsets[s + 1], pixel, w + (s + 1) * kWeightTile);
  }
  if (s < args.steps) step_b6<Tiles>(a + args.step_offsets[s], pixel, w + s * kWeightTile);
  float* out = args.out + q0 * args.ldo + t * 16;
  const int64_t ld = args.ldo * 4;
  CONV_PIXELS_STORE(0, out, ld);
  if constexpr (Tiles > 1) CONV_PIXELS_STORE(1, out + kRows * args.ldo, ld);
  if constexpr (Tiles > 2) CONV_PIXELS_STORE(2, out + 2 * kRows * args.ldo, ld);
  if constexpr (Tiles > 3) CONV_PIXELS_STORE(3, out + 3 * kRows * args.ldo, ld);
}

void pixels(const ConvPixelsArgs& args) {
  configure(shapes_for(args.depth));
  const int64_t tiles = args.rows / kRows;
  for (int64_t t = 0; t < args.n_tiles; ++t) {
    int64_t i = 0;
    for (; i + 4 <= tiles; i += 4) block<4>(args, i * kRows, t);
    switch (tiles - i) {
      case 3: block<3>(args, i * kRows, t); break;
      case 2: block<2>(args, i * kRows, t); break;
      case 1: block<1>(args, i * kRows, t); break;
      default: break;
    }
  }
  release();
}

#undef CONV_PIXELS_STEP
#undef CONV_PIXELS_LOAD
#undef CONV_PIXELS_STORE
#undef CONV_PIXELS_ZERO
#undef CONV_PIXELS_DP
#undef AMX_TILE_LOAD
#undef AMX_TILE_STORE
#undef AMX_TILE_ZERO
#undef AMX_TILE_DP
#undef COLONY_AMX_TILE_OPS_NATIVE

}  // namespace

const ConvPixelsFns& conv_pixels_fns() {
#if COLONY_CONV_PIXELS_NATIVE
  static const ConvPixelsFns fns{"amx", &pixels};
#else
  static const ConvPixelsFns fns{"amx_emulated", &pixels};
#endif
  return fns;
}

}  // namespace colony::kernels::cpu::COLONY_CONV_PIXELS_ISA
