// bfloat16 convolution forward on AMX tiles with the output channels on the tiles' rows and 16
// consecutive output pixels of one output row on their columns, the im2col read straight from the
// image by strided tile loads (conv.h's ConvAlgorithm::AmxChannels): C^T = W . im2col^T, float32
// sums, each output rounded once.
//
// Why: LeNet's conv1 (3 -> 6 channels, 5 x 5, 32 x 32) lost on every AMX layout tried before. With
// the output channels on the rows and a packed im2col (conv.cc's forward_amx) the packing cost as
// much as the products; with the pixels on the rows (conv_pixels.h) an image takes 280 products
// whose C tiles are 6/16 full and whose steps are 15/32 deep. Here B needs no packing at all:
// per image the input is copied once into a pair layout Zp[row][c][col] of 4-byte entries
// (x[c][row][col], x[c][row][col + 1]) (zero padding included), so that for kernel column pair kp
// the B tile of pixels (oh, ow0 .. ow0 + 15) is one tile load: its row v = r * cp + c (kernel row r,
// channel c) starts at Zp + ((oh + r) * cp + c) * pitch + ow0 + 2 kp entries, rows `pitch` entries
// apart, 16 VNNI pairs each. An odd kernel width's last column reads Z0[row][c][col] =
// (x[c][row][col], 0) instead, so that its zero weight multiplies a zero, never a neighbour pixel
// (0 * inf would be NaN). The weights are packed once per call into A tiles, A_kp[oc][2 v + j] =
// w[oc][c][r][2 kp + j] (zero past the kernel width and the channels); the C tiles hold M = min(O,
// 16) output channels, so a 6-channel layer's tiles are configured 6 rows tall. LeNet's conv1 is
// 3 products per 16 pixels (K = 30 of 32), 168 per image, against the pixel path's 280; pixels past
// the output row's end are computed and dropped (a column of C depends only on its column of B).
//
// The product is written once (conv_channels_tiles.h) and built twice: on the AMX instructions
// (conv_channels_amx.cc) and over scalar arithmetic in tdpbf16ps' order (conv_channels_emulated.cc,
// test-only), as conv_pixels.h's is.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/half.h"
#include "kernels/cpu/isa_dispatch.h"

namespace colony::kernels::cpu {

// bfloat16 per packed weight tile slot: up to 16 rows (output channels) of 32 (16 pairs of v).
constexpr int64_t kConvChannelsWeightTile = 512;

// One image's product. For output-channel tile t < n_tiles and unit u < units (output row oh = u /
// groups, pixels ow0 = 16 (u % groups) .. ow0 + 15):
//   out[(t * m + i) * out_channel + oh * out_row + ow0 + j] = sum over steps s = (kp, chunk) of
//   sum over rows q < vc of the pair at layout(kp) + (oh * cp + chunk * vc + q) * pitch + ow0 + 2 kp + j
//   times A_s,t(i, 2q .. 2q + 1),
// for i < m, j < 16, layout(kp) `odd` for the last kp where `odd` is non-null, else `pairs`. A_s,t's
// tile (row i: 2 vc bfloat16, rows 64 bytes apart) at packed_w + (t * steps + s) *
// kConvChannelsWeightTile, steps = kps * chunks, s = kp * chunks + chunk.
struct ConvChannelsArgs {
  const uint32_t* pairs = nullptr;
  const uint32_t* odd = nullptr;  // the last kernel column's (x, 0) layout; null: KW even
  int64_t pitch = 0;              // entries per (row, channel) line
  int64_t cp = 0;                 // channel lines per image row (C, or a few zero lines more)
  int64_t kps = 0;                // kernel column pairs: (KW + 1) / 2
  int64_t chunks = 0;             // steps per kernel column pair
  int64_t vc = 0;                 // B rows (pairs of depth) per step, 1 to 16
  int64_t m = 0;                  // output channels per tile, 1 to 16
  int64_t n_tiles = 0;
  int64_t units = 0, groups = 0;
  const uint16_t* packed_w = nullptr;
  float* out = nullptr;
  int64_t out_row = 0, out_channel = 0;
};

// One build of the product.
struct ConvChannelsFns {
  const char* isa;  // "amx", "amx_emulated"
  void (*channels)(const ConvChannelsArgs& args);
};

namespace conv_channels_amx {  // built with -mamx-tile -mamx-bf16
const ConvChannelsFns& conv_channels_fns();
}
namespace conv_channels_emulated {  // conv_channels_emulated.cc, in //kernels/cpu:small_gemm_bf16_emulated
const ConvChannelsFns& conv_channels_fns();
}

// The copy the convolution uses now: an override's (below), else the AMX one where amx_gemm runs
// on the hardware (active_amx_gemm_fns() is amx_bf16's), else null.
const ConvChannelsFns* active_conv_channels_fns();

// Tests (defined in //kernels/cpu:small_gemm_bf16_emulated): the emulated copy and, where AMX is
// usable, the AMX one.
std::vector<const ConvChannelsFns*> runnable_conv_channels_copies();

// Tests and benchmarks: the convolution's channel-major products through `fns` (null: none) while
// alive (isa_dispatch.h).
using ScopedConvChannelsFns = ScopedFns<ConvChannelsFns>;

// How conv2d_forward_channels cuts a shape's depth: each kernel column pair's KH x cp rows of v
// (cp >= C channel lines, the extra ones zero) in `chunks` steps of vc <= 16 rows, the fewest steps,
// then the fewest zero lines. Exposed for the tests' reference.
struct ConvChannelsDepth {
  int64_t cp = 0, chunks = 0, vc = 0;
};
ConvChannelsDepth conv_channels_depth(int64_t in_channels, int64_t kernel_h);

// Whether conv2d_forward_channels takes this shape: stride 1, dilation 1, one group.
bool conv_channels_fit(const Conv2dGeometry& g);

// y = conv(x, w) + bias on active_conv_channels_fns() (which must be non-null), images split over
// the pool; x, w, bias (may be null), y bfloat16, contiguous NCHW. Requires conv_channels_fit(g).
void conv2d_forward_channels(const Conv2dGeometry& g, const BFloat16* x, const BFloat16* w, const BFloat16* bias,
                             BFloat16* y);
// The same with a float32 x, rounded to bfloat16 (to nearest even, BFloat16's rounding) as the pair
// layouts are built: bit for bit the bfloat16 call on x rounded first (autocast's cast of a first
// layer's input), without that pass over memory and its bfloat16 copy. A kernel entry point only:
// no op or autograd node calls it yet.
void conv2d_forward_channels(const Conv2dGeometry& g, const float* x, const BFloat16* w, const BFloat16* bias,
                             BFloat16* y);

}  // namespace colony::kernels::cpu
