// The product of conv_channels.h (output channels on the tiles' rows, pixels on their columns),
// written once over a few tile primitives. Not a normal header: a .cc defines
// COLONY_CONV_CHANNELS_ISA (the namespace of its copy) and COLONY_CONV_CHANNELS_NATIVE, then
// includes this file, which defines that copy's conv_channels_fns().
//  - COLONY_CONV_CHANNELS_NATIVE 1 (conv_channels_amx.cc, built with -mamx-tile -mamx-bf16): the
//    tile intrinsics.
//  - COLONY_CONV_CHANNELS_NATIVE 0 (conv_channels_emulated.cc, test-only): the tile registers in
//    memory, with the configured shapes, and scalar arithmetic in tdpbf16ps' order (amx_gemm.h), so
//    the tests check the layouts' addresses, the weights' tiles, the groups at a row's end and the
//    steps on any CPU.
//
// Tiles: 0-3 hold C (m output channels x 16 pixels, float32), 4 and 5 A (m x 2 vc bfloat16, the
// packed weights of a step), 6 and 7 B (vc rows of 16 VNNI pairs, loaded in place from the pair
// layout). A block is two C tiles (set 0: tiles 0 and 1, set 1: 2 and 3, alternating from block to
// block) of consecutive units (16 pixels of an output row) for one tile of output channels; each
// step loads A once (alternating between 4 and 5 from step to step)
// and B once per C tile (alternating between 6 and 7), so that a load never waits for the product
// still reading the other register.
// As amx_gemm_tiles.h: internal linkage or the copy's namespace only, no shared inline function
// instantiated here (small_gemm_isa_symbols_test checks the object).
#if !defined(COLONY_CONV_CHANNELS_ISA) || !defined(COLONY_CONV_CHANNELS_NATIVE)
#error "define COLONY_CONV_CHANNELS_ISA and COLONY_CONV_CHANNELS_NATIVE before including conv_channels_tiles.h"
#endif

#include <cstdint>
#include <cstring>

#include "kernels/cpu/conv_channels.h"

#if COLONY_CONV_CHANNELS_NATIVE
#include <immintrin.h>
#else
#include <cmath>
#endif

namespace colony::kernels::cpu::COLONY_CONV_CHANNELS_ISA {
namespace {

constexpr int64_t kPixels = 16;    // pixels per C tile (its columns)
constexpr int64_t kRowBytes = 64;  // bytes per C, A (as packed) and B tile row
constexpr int64_t kWeightTile = kConvChannelsWeightTile;

// The tile primitives (the intrinsics, or tile registers in memory for the emulated copy):
// AMX_TILE_LOAD, AMX_TILE_STORE, AMX_TILE_ZERO, AMX_TILE_DP.
#define COLONY_AMX_TILE_OPS_NATIVE COLONY_CONV_CHANNELS_NATIVE
#include "kernels/cpu/amx_tile_ops.h"

// ldtilecfg's operand: C m x 64 bytes, A m x 4 vc bytes, B vc x 64 bytes.
TileShapes shapes_for(int64_t m, int64_t vc) {
  TileShapes s;
  std::memset(&s, 0, sizeof(s));
  s.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    const bool a = t == 4 || t == 5, b = t >= 6;
    s.colsb[t] = static_cast<uint16_t>(a ? vc * 4 : kRowBytes);
    s.rows[t] = static_cast<uint8_t>(b ? vc : m);
  }
  return s;
}

// One step of a block: A's tile (4 or 5: the intrinsics take literal tile numbers) loaded once,
// then C tile C0 (and C1) += A times B of unit 0 (and 1), loaded into 6 (and 7), b[i] its rows' start.
#define CONV_CHANNELS_STEP(A, C0, C1)                        \
  do {                                                       \
    AMX_TILE_LOAD(A, w, kRowBytes);                          \
    AMX_TILE_LOAD(6, b[0] + off, stride);                    \
    AMX_TILE_DP(C0, A, 6);                                   \
    if constexpr (Tiles > 1) {                               \
      AMX_TILE_LOAD(7, b[1] + off, stride);                  \
      AMX_TILE_DP(C1, A, 7);                                 \
    }                                                        \
  } while (0)

// Set 0 accumulates in C tiles 0 and 1, set 1 in 2 and 3.
template <int Tiles, int Set>
inline void step(bool a4, const uint32_t* const* b, int64_t off, int64_t stride, const uint16_t* w) {
  if (a4) {
    if constexpr (Set == 0) {
      CONV_CHANNELS_STEP(4, 0, 1);
    } else {
      CONV_CHANNELS_STEP(4, 2, 3);
    }
  } else {
    if constexpr (Set == 0) {
      CONV_CHANNELS_STEP(5, 0, 1);
    } else {
      CONV_CHANNELS_STEP(5, 2, 3);
    }
  }
}

// A block's outputs: the C tiles of a set, where block() left them.
struct Pending {
  int set = -1;
  int tiles = 0;
  float* out[2] = {nullptr, nullptr};
};

void store(const Pending& p, int64_t ld) {
  if (p.set == 0) {
    AMX_TILE_STORE(0, p.out[0], ld);
    if (p.tiles > 1) AMX_TILE_STORE(1, p.out[1], ld);
  } else if (p.set == 1) {
    AMX_TILE_STORE(2, p.out[0], ld);
    if (p.tiles > 1) AMX_TILE_STORE(3, p.out[1], ld);
  }
}

// Units [u0, u0 + Tiles) of output-channel tile t into C tile set Set; their stores are left to
// the caller, which issues them after the next block's products (a store waits for the last
// product into its tile: issued right after them, the pipeline drained at every block, a tenth of
// the product's samples on the instruction after the stores).
template <int Tiles, int Set>
Pending block(const ConvChannelsArgs& args, int64_t u0, int64_t t) {
  if constexpr (Set == 0) {
    AMX_TILE_ZERO(0);
    if constexpr (Tiles > 1) AMX_TILE_ZERO(1);
  } else {
    AMX_TILE_ZERO(2);
    if constexpr (Tiles > 1) AMX_TILE_ZERO(3);
  }
  Pending done;
  done.set = Set;
  done.tiles = Tiles;
  int64_t unit_in[Tiles];
  float* out = args.out + t * args.m * args.out_channel;
  for (int i = 0; i < Tiles; ++i) {
    const int64_t oh = (u0 + i) / args.groups, ow0 = (u0 + i) % args.groups * kPixels;
    unit_in[i] = oh * args.cp * args.pitch + ow0;
    done.out[i] = out + oh * args.out_row + ow0;
  }
  const int64_t stride = args.pitch * 4;
  const uint16_t* w = args.packed_w + t * args.kps * args.chunks * kWeightTile;
  const uint32_t* b[Tiles];
  int64_t s = 0;
  for (int64_t kp = 0; kp < args.kps; ++kp) {
    const uint32_t* layout = args.odd != nullptr && kp + 1 == args.kps ? args.odd : args.pairs;
    for (int i = 0; i < Tiles; ++i) b[i] = layout + unit_in[i];
    for (int64_t chunk = 0; chunk < args.chunks; ++chunk, ++s, w += kWeightTile)
      step<Tiles, Set>(s % 2 == 0, b, chunk * args.vc * args.pitch + 2 * kp, stride, w);
  }
  return done;
}

// Up to three steps (LeNet's conv1: three kernel column pairs of one step each): A resident in
// tiles 2 .. 1 + Steps, loaded once per output-channel tile; a block is one unit, in C tile 0 or 1
// (alternating, its store issued after the next unit's products), its steps' B in tiles 5, 6, 7.
TileShapes resident_shapes_for(int64_t m, int64_t vc) {
  TileShapes s;
  std::memset(&s, 0, sizeof(s));
  s.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    const bool a = t >= 2 && t <= 4, b = t >= 5;
    s.colsb[t] = static_cast<uint16_t>(a ? vc * 4 : kRowBytes);
    s.rows[t] = static_cast<uint8_t>(b ? vc : m);
  }
  return s;
}

#define CONV_CHANNELS_UNIT(C)                                \
  do {                                                       \
    AMX_TILE_ZERO(C);                                        \
    AMX_TILE_LOAD(5, step_in[0] + in, stride);               \
    AMX_TILE_DP(C, 2, 5);                                    \
    if constexpr (Steps > 1) {                               \
      AMX_TILE_LOAD(6, step_in[1] + in, stride);             \
      AMX_TILE_DP(C, 3, 6);                                  \
    }                                                        \
    if constexpr (Steps > 2) {                               \
      AMX_TILE_LOAD(7, step_in[2] + in, stride);             \
      AMX_TILE_DP(C, 4, 7);                                  \
    }                                                        \
  } while (0)

template <int Steps>
void channels_resident(const ConvChannelsArgs& args) {
  configure(resident_shapes_for(args.m, args.vc));
  const int64_t stride = args.pitch * 4, ld = args.out_channel * 4;
  const uint32_t* step_in[3] = {nullptr, nullptr, nullptr};
  for (int64_t kp = 0, s = 0; kp < args.kps; ++kp) {
    const uint32_t* layout = args.odd != nullptr && kp + 1 == args.kps ? args.odd : args.pairs;
    for (int64_t chunk = 0; chunk < args.chunks; ++chunk, ++s) step_in[s] = layout + chunk * args.vc * args.pitch + 2 * kp;
  }
  float* pending = nullptr;
  int64_t u = 0;
  for (int64_t t = 0; t < args.n_tiles; ++t) {
    const uint16_t* w = args.packed_w + t * Steps * kWeightTile;
    AMX_TILE_LOAD(2, w, kRowBytes);
    if constexpr (Steps > 1) AMX_TILE_LOAD(3, w + kWeightTile, kRowBytes);
    if constexpr (Steps > 2) AMX_TILE_LOAD(4, w + 2 * kWeightTile, kRowBytes);
    float* out = args.out + t * args.m * args.out_channel;
    for (int64_t v = 0; v < args.units; ++v, ++u) {
      const int64_t oh = v / args.groups, ow0 = v % args.groups * kPixels;
      const int64_t in = oh * args.cp * args.pitch + ow0;
      if (u % 2 == 0) {
        CONV_CHANNELS_UNIT(0);
        if (pending != nullptr) AMX_TILE_STORE(1, pending, ld);
      } else {
        CONV_CHANNELS_UNIT(1);
        AMX_TILE_STORE(0, pending, ld);
      }
      pending = out + oh * args.out_row + ow0;
    }
  }
  if (pending != nullptr) {
    if (u % 2 == 1) {
      AMX_TILE_STORE(0, pending, ld);
    } else {
      AMX_TILE_STORE(1, pending, ld);
    }
  }
  release();
}
#undef CONV_CHANNELS_UNIT

void channels(const ConvChannelsArgs& args) {
  switch (args.kps * args.chunks) {
    case 1: channels_resident<1>(args); return;
    case 2: channels_resident<2>(args); return;
    case 3: channels_resident<3>(args); return;
    default: break;
  }
  configure(shapes_for(args.m, args.vc));
  const int64_t ld = args.out_channel * 4;
  Pending pending;
  int set = 0;
  for (int64_t t = 0; t < args.n_tiles; ++t) {
    for (int64_t u = 0; u < args.units; u += 2, set ^= 1) {
      const bool two = u + 2 <= args.units;
      const Pending done = set == 0 ? (two ? block<2, 0>(args, u, t) : block<1, 0>(args, u, t))
                                    : (two ? block<2, 1>(args, u, t) : block<1, 1>(args, u, t));
      store(pending, ld);
      pending = done;
    }
  }
  store(pending, ld);
  release();
}

#undef CONV_CHANNELS_STEP

}  // namespace

const ConvChannelsFns& conv_channels_fns() {
  static const ConvChannelsFns fns{COLONY_CONV_CHANNELS_NATIVE ? "amx" : "amx_emulated", &channels};
  return fns;
}

}  // namespace colony::kernels::cpu::COLONY_CONV_CHANNELS_ISA
