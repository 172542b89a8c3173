// The product of conv_weight_rows.h (the weight gradient with the pixels on the products' depth),
// written once over a few tile primitives. Not a normal header: a .cc defines
// COLONY_CONV_WEIGHT_ROWS_ISA (the namespace of its copy) and COLONY_CONV_WEIGHT_ROWS_NATIVE, then
// includes this file, which defines that copy's conv_weight_rows_fns().
//  - COLONY_CONV_WEIGHT_ROWS_NATIVE 1 (conv_weight_rows_amx.cc, built with -mamx-tile -mamx-bf16):
//    the tile intrinsics.
//  - COLONY_CONV_WEIGHT_ROWS_NATIVE 0 (conv_weight_rows_emulated.cc, test-only): the tile registers
//    in memory, with the configured shapes, and scalar arithmetic in tdpbf16ps' order (amx_gemm.h),
//    so the tests check the strided A rows, grad_y's tiles and the edge rows and columns on any CPU.
//
// Tiles: 0-4 hold C (one per kernel column of a group of up to 5: `rows` rows v x `cols` output
// channels, float32), 5 and 6 A (`rows` rows x `pixels` bfloat16, read in place from the image
// copy, alternating so that a load does not wait for the product reading the other), 7 B
// (pixels / 2 rows of VNNI pairs). A group's C tiles are loaded from acc once, continue over every
// image, output row and chunk of the call, and are stored once: B is loaded once per (image, row,
// chunk) and A once per product.
// The primitives (TileShapes, configure, the emulated registers and tdpbf16ps' arithmetic) are
// amx_tile_ops.h's. As amx_gemm_tiles.h: internal linkage or the copy's namespace only, no shared
// inline function instantiated here (small_gemm_isa_symbols_test checks the object).
#if !defined(COLONY_CONV_WEIGHT_ROWS_ISA) || !defined(COLONY_CONV_WEIGHT_ROWS_NATIVE)
#error "define COLONY_CONV_WEIGHT_ROWS_ISA and COLONY_CONV_WEIGHT_ROWS_NATIVE before including conv_weight_rows_tiles.h"
#endif

#include <cstdint>
#include <cstring>

#include "kernels/cpu/conv_weight_rows.h"

#if COLONY_CONV_WEIGHT_ROWS_NATIVE
#include <immintrin.h>
#else
#include <cmath>
#endif

namespace colony::kernels::cpu::COLONY_CONV_WEIGHT_ROWS_ISA {
namespace {

constexpr int kMaxGroup = 5;  // C tiles per group

// The tile primitives (the intrinsics, or tile registers in memory for the emulated copy).
#define COLONY_AMX_TILE_OPS_NATIVE COLONY_CONV_WEIGHT_ROWS_NATIVE
#include "kernels/cpu/amx_tile_ops.h"
#undef COLONY_AMX_TILE_OPS_NATIVE

TileShapes shapes_for(const ConvWeightRowsArgs& args) {
  TileShapes s;
  std::memset(&s, 0, sizeof(s));
  s.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    const bool a = t == 5 || t == 6, b = t == 7;
    s.colsb[t] = static_cast<uint16_t>(a ? args.pixels * 2 : args.cols * 4);
    s.rows[t] = static_cast<uint8_t>(b ? args.pixels / 2 : args.rows);
  }
  return s;
}

// C tile I (a literal) of the group: kernel column kw0 + I, its A in tile 5 or 6 by I's parity.
#define WEIGHT_ROWS_PRODUCT(I)                                                      \
  do {                                                                              \
    if constexpr (N > I) {                                                          \
      if constexpr (I % 2 == 0) {                                                   \
        AMX_TILE_LOAD(5, a + I * kernel_col, a_stride);                          \
        AMX_TILE_DP(I, 5, 7);                                                    \
      } else {                                                                      \
        AMX_TILE_LOAD(6, a + I * kernel_col, a_stride);                          \
        AMX_TILE_DP(I, 6, 7);                                                    \
      }                                                                             \
    }                                                                               \
  } while (0)

#define WEIGHT_ROWS_EACH_C(OP)       \
  do {                               \
    OP(0);                           \
    if constexpr (N > 1) OP(1);      \
    if constexpr (N > 2) OP(2);      \
    if constexpr (N > 3) OP(3);      \
    if constexpr (N > 4) OP(4);      \
  } while (0)

// Kernel columns [kw0, kw0 + N) of row tile rt and column tile t, over every image, output row
// and chunk of the call.
template <int N>
void group(const ConvWeightRowsArgs& args, int64_t kw0, int64_t rt, int64_t t) {
  const int64_t row_block = args.row_tiles * args.rows;
  float* acc = args.acc + (kw0 * row_block + rt * args.rows) * args.ldacc + t * args.cols;
  const int64_t c_stride = args.ldacc * 4, c_step = row_block * args.ldacc;
#define WEIGHT_ROWS_LOAD_C(I) AMX_TILE_LOAD(I, acc + I * c_step, c_stride)
#define WEIGHT_ROWS_STORE_C(I) AMX_TILE_STORE(I, acc + I * c_step, c_stride)
  WEIGHT_ROWS_EACH_C(WEIGHT_ROWS_LOAD_C);
  const int64_t a_stride = args.a_row * 2, b_stride = args.cols * 4, kernel_col = args.a_kernel_col;
  const int64_t b_tile = args.pixels * args.cols;
  for (int64_t i = 0; i < args.images; ++i) {
    const uint16_t* a_image = args.a + i * args.a_image + kw0 * kernel_col + rt * args.rows * args.a_row;
    const uint16_t* b_image = args.b + i * args.b_image + t * b_tile;
    for (int64_t h = 0; h < args.out_rows; ++h) {
      for (int64_t k = 0; k < args.chunks; ++k) {
        const uint16_t* a = a_image + h * args.a_out_row + k * args.pixels;
        AMX_TILE_LOAD(7, b_image + (h * args.chunks + k) * args.col_tiles * b_tile, b_stride);
        WEIGHT_ROWS_EACH_C(WEIGHT_ROWS_PRODUCT);
      }
    }
  }
  WEIGHT_ROWS_EACH_C(WEIGHT_ROWS_STORE_C);
#undef WEIGHT_ROWS_LOAD_C
#undef WEIGHT_ROWS_STORE_C
}

void rows(const ConvWeightRowsArgs& args) {
  configure(shapes_for(args));
  for (int64_t rt = 0; rt < args.row_tiles; ++rt) {
    for (int64_t t = 0; t < args.col_tiles; ++t) {
      for (int64_t kw0 = 0; kw0 < args.kernel_w; kw0 += kMaxGroup) {
        switch (args.kernel_w - kw0 < kMaxGroup ? args.kernel_w - kw0 : kMaxGroup) {
          case 5: group<5>(args, kw0, rt, t); break;
          case 4: group<4>(args, kw0, rt, t); break;
          case 3: group<3>(args, kw0, rt, t); break;
          case 2: group<2>(args, kw0, rt, t); break;
          default: group<1>(args, kw0, rt, t); break;
        }
      }
    }
  }
  release();
}

#undef WEIGHT_ROWS_EACH_C
#undef WEIGHT_ROWS_PRODUCT

}  // namespace

// amx_tile_ops.h's macros end with this copy.
#undef AMX_TILE_LOAD
#undef AMX_TILE_STORE
#undef AMX_TILE_ZERO
#undef AMX_TILE_DP

const ConvWeightRowsFns& conv_weight_rows_fns() {
  static const ConvWeightRowsFns fns{COLONY_CONV_WEIGHT_ROWS_NATIVE ? "amx" : "amx_emulated", &rows};
  return fns;
}

}  // namespace colony::kernels::cpu::COLONY_CONV_WEIGHT_ROWS_ISA
