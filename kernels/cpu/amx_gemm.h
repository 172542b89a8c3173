// bfloat16 matrix products on Intel AMX tiles (AMX-BF16, Sapphire Rapids on), float32 accumulation,
// each output rounded once: gemm.h's bfloat16 path where active_cpu_isa() reaches AmxBf16 and the
// shapes suit (gemm.cc).
//
// A tile register holds 16 rows of 64 bytes; tdpbf16ps multiplies a 16 x 32 bfloat16 tile of A by a
// 32 x 16 one of B into a 16 x 16 float32 tile of C: 16,384 flops per instruction, against 64 for an
// AVX-512 float32 FMA. B must be in VNNI order, each tile row holding the pairs (B(2r, j),
// B(2r + 1, j)) of 16 columns: amx_pack_b writes that once per product (the weights of a linear
// layer, reused by every row block), zero-padded to whole tiles so that no tile ever reads past
// the matrix. A is copied into zero-padded tiles in scratch, 32 rows by a depth block at a time,
// once per product (amx_gemm_tiles.h: the blocking and what it measured).
//
// What the hardware computes (measured on an Intel Xeon, Sapphire Rapids class, and matching
// Intel's description of denormals as treated as zero and flushed, with round to nearest even):
// for each 16 x 32 step and each output, the 16 products of the even positions of the pairs and
// the 16 of the odd positions are summed separately, E = (...((p0 + p2) + p4)...) and
// O = (...((p1 + p3) + p5)...), each addition of an exact product rounded to float32 and flushed
// to zero when denormal, and C becomes flush(C + flush(E + O)), inputs' denormals read as zero.
// Not the sequential order of Intel's pseudo-code (which differs in about one output in ten);
// tests/kernels/amx_gemm_test.cc compares that model with the hardware bit for bit.
//
// The source is written once (amx_gemm_tiles.h) and built twice: with the tile intrinsics
// (amx_bf16.cc, -mamx-tile -mamx-bf16) and over scalar arithmetic in the order above
// (amx_bf16_emulated.cc, test-only), so any CPU tests the packing, blocking and edge tiles.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/isa_dispatch.h"

namespace colony::kernels::cpu {

// Elements of amx_pack_b's output for a k x n matrix: whole 32 x 16 tiles.
int64_t amx_packed_b_size(int64_t k, int64_t n);

// Packs B(p, j) = b[p * b_row_stride + j * b_col_stride] (k x n bfloat16 bits) into tiles: column
// tile t (columns 16t to 16t + 15) and depth step q (rows 32q to 32q + 31) at
// packed + (t * ceil(k / 32) + q) * 512, row r of the tile holding B(32q + 2r, 16t + j) at 2j and
// B(32q + 2r + 1, 16t + j) at 2j + 1; zeros past k and n.
void amx_pack_b(int64_t k, int64_t n, const uint16_t* b, int64_t b_row_stride, int64_t b_col_stride,
                uint16_t* packed);

// amx_pack_b for a B whose rows start anywhere: B(p, j) = b[b_rows[p] + j], each row read up to
// B(p, n - 1) and no further. The direct convolution's implicit im2col (conv.cc): row (c, i, j) of
// it is the padded image read from that window's offset on. zeros_kept: `packed` already holds
// this k and n's zeros past k (an earlier call wrote them), so only the rows of B are written: the
// zero rows were 30 % of packing a LeNet conv1 image (75 rows padded to 96).
void amx_pack_b_rows(int64_t k, int64_t n, const uint16_t* b, const int64_t* b_rows, uint16_t* packed,
                     bool zeros_kept = false);

// amx_pack_b for a B whose columns start anywhere: B(p, j) = b[b_cols[j] + p], each column read up
// to B(k - 1, j) and no further. The implicit im2col transposed (a convolution's weight gradient).
void amx_pack_b_cols(int64_t k, int64_t n, const uint16_t* b, const int64_t* b_cols, uint16_t* packed);

// One product: C = A B for A (m x k, A(i, p) = a[i * a_row_stride + p * a_col_stride]) and B packed
// by amx_pack_b, or B as it is (b: packed here a panel at a time, see below). The output is either
// float32 (c_f32, C(i, j) at c_f32[i * ldc + j]; accumulate adds the product to C, as one more tile
// step would) or bfloat16 (c_bf16: C = round(alpha * A B + beta * C), C read only when beta != 0,
// or round(alpha * A B + bias) with a bias row, below).
struct AmxGemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const uint16_t* a = nullptr;
  int64_t a_row_stride = 0, a_col_stride = 1;
  // A's storage goes on past row m to a whole 16 rows (readable; their outputs are dropped), so a
  // row-major A whose rows start on cache lines is read in place even in a last, partial row
  // block (a convolution's weights, 6 or 16 rows: packing them per image took 4-10 %).
  bool a_rows_padded = false;
  const uint16_t* packed_b = nullptr;
  // Or (packed_b null) B as it is, B(p, j) = b[p * b_row_stride + j * b_col_stride]: each panel of
  // it (amx_gemm_tiles.h, at most kAmxPanelBytes) is packed by amx_pack_b into this thread's
  // scratch just before the row blocks pass over it, so the tiles read it from L2 where it was
  // written, rather than from a whole packed copy gone out to L3. For a product whose B one call
  // uses alone (one thread); the same results bit for bit as packing B first.
  const uint16_t* b = nullptr;
  int64_t b_row_stride = 0, b_col_stride = 1;
  float* c_f32 = nullptr;
  bool accumulate = false;
  uint16_t* c_bf16 = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  // With c_bf16 and beta == 0: a row of n bfloat16 added to every row's float32 sums before the
  // one rounding, C(i, j) = round(alpha * (A B)(i, j) + bias[j]), C not read. A linear layer's
  // bias, which otherwise had to be copied into every output row first and read back (beta = 1):
  // the copy and that read were 3.3 % and 4.4 % of the char GPT's bf16 step (docs/benchmarks.md).
  const uint16_t* bias = nullptr;
  int64_t ldc = 0;
};

// Whether the AMX products can run here (AmxBf16 active: cpu_isa.h), unless overridden below.
bool has_amx_gemm();

// Runs args on the active copy (single-threaded; gemm.cc splits rows over the pool). Requires
// has_amx_gemm().
void amx_gemm(const AmxGemmArgs& args);

// One build of the tiles.
struct AmxGemmFns {
  const char* isa;  // "amx", "amx_emulated"
  // scratch: amx_scratch_size(m, n, k, packed_b == nullptr) elements of this thread's own.
  void (*gemm)(const AmxGemmArgs& args, uint16_t* scratch);
};

// The tiles' blocking (amx_gemm_tiles.h): depth blocks of at most kAmxBlockSteps 32-deep steps
// (32 rows of A packed per block: 32 KB, in L1), panels of at most kAmxMaxPanelTiles column tiles.
constexpr int64_t kAmxBlockSteps = 16;
constexpr int64_t kAmxMaxPanelTiles = 64;
// Bytes of packed B per panel (amx_gemm_tiles.h: what chose them).
constexpr int64_t kAmxPanelBytes = int64_t{768} << 10;

// Column tiles per panel for depth k: as many as kAmxPanelBytes hold, even (32-wide blocks stay
// whole), 2 to kAmxMaxPanelTiles.
int64_t amx_panel_tiles(int64_t k);

// Elements of the scratch a gemm call of m x k A takes: all of A in tiles (packed in the first
// panel of columns, read by the rest), and the float32 partial sums of 32 rows of a panel between
// depth blocks.
int64_t amx_scratch_size(int64_t m, int64_t k);

// Elements a gemm call of m x k A and k x n B takes, with B unpacked (AmxGemmArgs::b) or packed:
// amx_scratch_size plus, for an unpacked B, one packed panel of it.
int64_t amx_scratch_size(int64_t m, int64_t n, int64_t k, bool b_unpacked);

namespace amx_bf16 {  // built with -mamx-tile -mamx-bf16
const AmxGemmFns& amx_gemm_fns();
}
namespace amx_emulated {  // amx_bf16_emulated.cc, in //kernels/cpu:small_gemm_bf16_emulated (testonly)
const AmxGemmFns& amx_gemm_fns();
}

// Tests (defined in //kernels/cpu:small_gemm_bf16_emulated): the emulated copy and, where AMX is
// usable, amx_bf16.
std::vector<const AmxGemmFns*> runnable_amx_copies();

// The copy amx_gemm uses now: amx_bf16 where active_cpu_isa() reaches AmxBf16, else null.
const AmxGemmFns* active_amx_gemm_fns();

// Whether amx_gemm runs on the hardware: the active copy is amx_bf16's (not the emulated tiles a
// test routed it through, nor none). The kernels that bypass amx_gemm with tiles of their own
// (conv_pixels.h, conv_channels.h, conv_weight_rows.h, attention_tiles.h) follow it.
bool amx_gemm_is_native();

// Tests and benchmarks: route amx_gemm (and so gemm.cc's bfloat16 products) through `fns` (null:
// none) while alive (isa_dispatch.h).
using ScopedAmxGemmFns = ScopedFns<AmxGemmFns>;

}  // namespace colony::kernels::cpu
