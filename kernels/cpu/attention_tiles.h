// The AMX products of attention's whole-head bfloat16 kernels (attention_short_amx.h), without
// amx_gemm's per-call work. At a GPT's heads (64 x 32, up to 256 x 64) each product is a few tile
// steps, and amx_gemm's fixed cost per call (tile configuration, A copied into scratch, partial
// sums through scratch and then copied to C, the thread's scratch looked up) outweighed them: the
// backward made ten calls and six packs per head (docs/benchmarks.md, "Attention's row loops under
// --amp bf16 in 16 lanes"). Here the caller configures the tiles once per run of products
// (begin/end), A is read in place (rows) or transposed tile by tile from rows (A = X^T), and the C
// tiles are stored straight into the caller's float32 buffer, whose shapes are padded to whole
// tiles, so no edge tile needs a copy.
//
// Results equal amx_gemm's bit for bit (same steps, in the same order, on the same tdpbf16ps), so
// the copy that runs over amx_gemm (whatever copy is active: the emulated tiles in tests on any
// CPU) stands in for the native one where AMX is not the active amx_gemm copy, and
// tests/kernels/attention_tiles_test.cc compares the two where AMX runs.
#pragma once

#include <cstdint>

namespace colony::kernels::cpu {

// C = A B (or C += A B) for A m x k bfloat16 and B packed by amx_pack_b, float32 C.
//  - m and n multiples of 16, k a multiple of 32 (k = 0: C = 0, or C unchanged when accumulating),
//    k at most kAttentionTileMaxDepth; every row of A up to m and column up to k readable (the
//    caller pads its buffers with zeros, or reads a tensor whose shape is whole tiles).
//  - A(i, p) = a[i * lda + p], or with a_transposed A(i, p) = a[p * lda + i] (A = X^T for a
//    row-major X: P^T and dS^T of attention's backward).
//  - B: k x n as amx_pack_b laid it out for b_steps 32-deep steps per column tile (0: k / 32),
//    starting at step 0 of the product: a later step of a packed matrix is packed_b + 512 q.
//  - C(i, j) at c[i * ldc + j], m x n written whole.
struct AttentionTileProduct {
  int64_t m = 0, n = 0, k = 0;
  const uint16_t* a = nullptr;
  int64_t lda = 0;
  bool a_transposed = false;
  const uint16_t* packed_b = nullptr;
  int64_t b_steps = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
};

// The deepest product: a whole head's keys (attention_short_amx.h's kMaxKeys) or head dimension.
constexpr int64_t kAttentionTileMaxDepth = 256;

struct AttentionTileFns {
  const char* isa;  // "amx", "amx_gemm"
  // Tile configuration for the products that follow on this thread, and its release (the OS then
  // need not save 8 KB of tiles at each context switch).
  void (*begin)();
  void (*end)();
  void (*product)(const AttentionTileProduct& p);
};

namespace amx_bf16 {  // attention_tiles_amx.cc, built with -mamx-tile -mamx-bf16
const AttentionTileFns& attention_tile_fns();
}

// Over amx_gemm: one call per column tile, its tiles configured by each call.
const AttentionTileFns& attention_tile_fns_over_amx_gemm();

// The native copy where amx_gemm's active copy is the hardware's, else the one over amx_gemm (the
// emulated tiles a test routed amx_gemm through). Requires has_amx_gemm().
const AttentionTileFns& active_attention_tile_fns();

}  // namespace colony::kernels::cpu
