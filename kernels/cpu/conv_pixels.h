// bfloat16 convolution forward on AMX tiles with the output pixels on the tiles' rows: an implicit
// GEMM, Y[pixel, out channel] = sum over (kh, kw, c) X[pixel + offset(kh, kw), c] W[(kh, kw, c),
// out channel], float32 sums, each output rounded once (conv.h's ConvAlgorithm::AmxPixels).
//
// Why: LeNet's layers have 6 and 16 output channels. With the output channels on a tile's 16 rows
// (conv.cc's "bfloat16 on AMX tiles") a C tile is 6/16 or full, but every image's implicit im2col
// must be packed into VNNI tiles first, which cost as much as the products. With the pixels on the
// rows, every C tile is full in M, and the A tiles are loaded straight from a channels-last copy
// of the image: consecutive output pixels of the pitched grid (the direct algorithm's: output
// (y, x) at y * Wp + x, Wp the padded width, Wp - Wo columns computed and dropped) read their
// kw x C run at a fixed stride of C elements, one depth step per kernel row (or a few, for runs
// longer than 32), its `depth` configured to the run so that no step reads a neighbour's pixels.
// Only the weights are packed (once per call), and the image is transposed to channels-last
// (C x H x W elements: for LeNet's conv2 1,176 per image against the im2col matrix's 150 x 136).
//
// The product is written once (conv_pixels_tiles.h) and built twice: on the AMX instructions
// (conv_pixels_amx.cc) and over scalar arithmetic in tdpbf16ps' order (conv_pixels_emulated.cc,
// test-only), as amx_gemm.h's tiles are.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/half.h"
#include "kernels/cpu/isa_dispatch.h"

namespace colony::kernels::cpu {

// bfloat16 per packed weight tile slot: 16 rows of 32 (a step of depth d uses d / 2 rows).
constexpr int64_t kConvPixelsWeightTile = 512;

// One image's product: out[q * ldo + 16 t + j] = sum over steps s and p < depth of
// image[q * pixel_stride + step_offsets[s] + p] * B_s,t(p, j), for rows q < `rows` (a multiple of
// 16; the image readable that far) and output-channel tiles t < n_tiles. B_s,t's VNNI tile (row r:
// (B(2r, j), B(2r + 1, j)) for j < 16) at packed_w + (t * steps + s) * kConvPixelsWeightTile.
struct ConvPixelsArgs {
  const uint16_t* image = nullptr;
  int64_t pixel_stride = 0;
  int64_t rows = 0;
  int64_t steps = 0;
  const int64_t* step_offsets = nullptr;
  int64_t depth = 0;  // even, 2 to 32
  const uint16_t* packed_w = nullptr;
  int64_t n_tiles = 0;
  float* out = nullptr;
  int64_t ldo = 0;
};

// One build of the product.
struct ConvPixelsFns {
  const char* isa;  // "amx", "amx_emulated"
  void (*pixels)(const ConvPixelsArgs& args);
};

namespace conv_pixels_amx {  // built with -mamx-tile -mamx-bf16
const ConvPixelsFns& conv_pixels_fns();
}
namespace conv_pixels_emulated {  // conv_pixels_emulated.cc, in //kernels/cpu:small_gemm_bf16_emulated
const ConvPixelsFns& conv_pixels_fns();
}

// The copy the convolution uses now: an override's (below), else the AMX one where amx_gemm runs
// on the hardware (active_amx_gemm_fns() is amx_bf16's), else null (conv.cc then keeps its other
// paths).
const ConvPixelsFns* active_conv_pixels_fns();

// Tests (defined in //kernels/cpu:small_gemm_bf16_emulated): the emulated copy and, where AMX is
// usable, the AMX one.
std::vector<const ConvPixelsFns*> runnable_conv_pixels_copies();

// Tests and benchmarks: the convolution's pixel-major products through `fns` (null: none) while
// alive (isa_dispatch.h).
using ScopedConvPixelsFns = ScopedFns<ConvPixelsFns>;

// Whether conv2d_forward_pixels takes this shape: stride 1, dilation 1, one group.
bool conv_pixels_fit(const Conv2dGeometry& g);

// y = conv(x, w) + bias on active_conv_pixels_fns() (which must be non-null), images split over
// the pool; x, w, bias (may be null), y bfloat16, contiguous NCHW. Requires conv_pixels_fit(g).
void conv2d_forward_pixels(const Conv2dGeometry& g, const BFloat16* x, const BFloat16* w, const BFloat16* bias,
                           BFloat16* y);

// Whether conv2d_backward_input_pixels takes this shape: conv_pixels_fit, and padding at most the
// kernel's size less one (the transposed convolution's padding is kernel - 1 - padding).
bool conv_pixels_input_fit(const Conv2dGeometry& g);

// grad_x of conv2d_forward_pixels' convolution as the transposed convolution on the same product:
// grad_y padded by kernel - 1 - padding, convolved with the weights flipped in both kernel axes
// and their channel axes swapped (O input channels, C output channels), each output rounded once.
// Requires conv_pixels_input_fit(g) and active_conv_pixels_fns().
void conv2d_backward_input_pixels(const Conv2dGeometry& g, const BFloat16* grad_y, const BFloat16* w,
                                  BFloat16* grad_x);

}  // namespace colony::kernels::cpu
