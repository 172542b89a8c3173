// bfloat16 convolution weight gradient on AMX tiles with the implicit im2col read by strided tile
// loads: dW^T[(r, c)][o] for each kernel column kw = sum over pixels of X[(r, c)][pixel] dY^T[pixel][o],
// the pixels of one output row on the products' depth, float32 sums (conv2d_backward's weight
// gradient, rounded once by the caller).
//
// Why: LeNet's conv1 (3 -> 6 channels, 5 x 5) computes its weight gradient in float32 under
// bfloat16 (conv.cc's backward_widened: ~200 us of a 1,600 us step), because the AMX path with the
// output channels on the tiles' rows packs every image's im2col into VNNI tiles first (564 us).
// Here nothing of the image is packed: a copy of image n with its channels interleaved per row,
// Z[row][c][col] (bfloat16, padded), holds the operand A of kernel column kw and output row oh as
// one tile load: A row v = r * C + c (kernel row r, input channel c) starts at
// Z + ((oh + r) * C + c) * Wp + kw, rows Wp apart, Wo pixels deep (a row of the output). Only
// grad_y is packed, once per image, into VNNI pairs of pixels (B: pixels / 2 rows x the output
// channels). One C tile per kernel column stays in the tile registers over every output row of the
// images of a call: conv1 takes 5 C tiles, 140 products per image.
// Where a chunk of pixels would read past the output row's end (an odd Wo, or rows cut in chunks
// of at most 32 that do not divide Wo), the copy is made per kernel column instead (Zk[kw][row][c]
// [col] = Z[row][c][col + kw], zeros past Wo), so no pixel outside the output is ever multiplied
// (a zero weight times an infinite input would give NaN).
//
// The product is written once (conv_weight_rows_tiles.h) and built twice: on the AMX instructions
// (conv_weight_rows_amx.cc) and over scalar arithmetic in tdpbf16ps' order
// (conv_weight_rows_emulated.cc, test-only), as conv_pixels.h's is.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/half.h"
#include "kernels/cpu/isa_dispatch.h"

namespace colony::kernels::cpu {

// One call of the product, over `images` image copies:
//   acc[(kw * row_tiles * rows + v) * ldacc + o] += sum over images i, output rows h < out_rows,
//   chunks k < chunks, pixels p < pixels of A(i, h, kw, k)[v][p] * B(i, h, k, o / cols)[p][o % cols]
// in that order (each (i, h, k) one tile product of `pixels` depth), for v < row_tiles * rows and
// o < col_tiles * cols. A(i, h, kw, k)'s row v is at a + i * a_image + h * a_out_row + kw * a_kernel_col
// + k * pixels + v * a_row (bfloat16 bits); B(i, h, k, t)'s tile, pixels / 2 rows of `cols` VNNI
// pairs (row q: (B(2q, j), B(2q + 1, j)) for j < cols), at b + i * b_image + ((h * chunks + k) *
// col_tiles + t) * pixels * cols, rows cols * 2 elements apart.
struct ConvWeightRowsArgs {
  const uint16_t* a = nullptr;
  int64_t images = 0;
  int64_t a_image = 0, a_out_row = 0, a_kernel_col = 0, a_row = 0;
  int64_t out_rows = 0, chunks = 0;
  int64_t pixels = 0;  // even, 2 to 32
  int64_t kernel_w = 0;
  int64_t rows = 0, row_tiles = 0;  // rows 1 to 16
  const uint16_t* b = nullptr;
  int64_t b_image = 0;
  int64_t cols = 0, col_tiles = 0;  // cols 1 to 16
  float* acc = nullptr;
  int64_t ldacc = 0;
};

// One build of the product.
struct ConvWeightRowsFns {
  const char* isa;  // "amx", "amx_emulated"
  void (*rows)(const ConvWeightRowsArgs& args);
};

namespace conv_weight_rows_amx {  // built with -mamx-tile -mamx-bf16
const ConvWeightRowsFns& conv_weight_rows_fns();
}
namespace conv_weight_rows_emulated {  // conv_weight_rows_emulated.cc, in //kernels/cpu:small_gemm_bf16_emulated
const ConvWeightRowsFns& conv_weight_rows_fns();
}

// The copy the convolution uses now: an override's (below), else the AMX one where amx_gemm runs
// on the hardware (active_amx_gemm_fns() is amx_bf16's), else null.
const ConvWeightRowsFns* active_conv_weight_rows_fns();

// Tests (defined in //kernels/cpu:small_gemm_bf16_emulated): the emulated copy and, where AMX is
// usable, the AMX one.
std::vector<const ConvWeightRowsFns*> runnable_conv_weight_rows_copies();

// Tests and benchmarks: the weight gradient's products through `fns` (null: none, so Auto keeps
// its other paths) while alive (isa_dispatch.h).
using ScopedConvWeightRowsFns = ScopedFns<ConvWeightRowsFns>;

// Whether conv_weight_rows_accumulate takes this shape: stride 1, dilation 1, one group.
bool conv_weight_rows_fit(const Conv2dGeometry& g);

// gw[o][c][r][kw] += the float32 sums above over images [n0, n1) of grad_y and x (bfloat16,
// contiguous NCHW), on active_conv_weight_rows_fns() (which must be non-null), on the calling
// thread; gw float32 [O, C, KH, KW]. Each (o, c, r, kw) is one float32 sum started at zero and
// continued image by image, output row by output row, then added to gw once. Requires
// conv_weight_rows_fit(g).
void conv_weight_rows_accumulate(const Conv2dGeometry& g, const BFloat16* grad_y, const BFloat16* x, int64_t n0,
                                 int64_t n1, float* gw);

}  // namespace colony::kernels::cpu
