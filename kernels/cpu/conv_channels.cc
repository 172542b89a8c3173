// conv_channels.h's plan, the pair layouts, the weights' tiles and the output planes; the product is
// in conv_channels_tiles.h.
#include "kernels/cpu/conv_channels.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/vec_math.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kPixels = 16, kMaxRows = 16;

// How one shape's image is laid out and stepped through.
struct ChannelsPlan {
  ConvChannelsDepth depth;
  int64_t kps = 0;
  int64_t hp = 0;
  int64_t groups = 0, wg = 0;  // 16-pixel units per output row, and the grid's row: 16 groups
  int64_t pitch = 0;           // entries per (row, channel) line: the widest read, whole 8s
  int64_t layout_entries = 0;  // hp * cp * pitch
  int64_t m = 0, n_tiles = 0;
};

ChannelsPlan plan_channels(const Conv2dGeometry& g) {
  ChannelsPlan p;
  p.depth = conv_channels_depth(g.in_channels, g.kernel_h);
  p.kps = (g.kernel_w + 1) / 2;
  p.hp = g.in_h + 2 * g.pad_h;
  p.groups = (g.out_w + kPixels - 1) / kPixels;
  p.wg = p.groups * kPixels;
  // A unit's B rows read entries ow0 .. ow0 + 15 + 2 kp; the lines hold the padded row whole and
  // pair_row's whole 8s past it.
  const int64_t widest = std::max(g.pad_w + (g.in_w + 7) / 8 * 8, p.wg + 2 * (p.kps - 1));
  p.pitch = (widest + 7) / 8 * 8;
  p.layout_entries = p.hp * p.depth.cp * p.pitch;
  p.m = std::min<int64_t>(g.out_channels, kMaxRows);
  p.n_tiles = (g.out_channels + p.m - 1) / p.m;
  return p;
}

// The weights as A of every step (kp, chunk) and output-channel tile t: row i (output channel t m +
// i), element 2 q + j: w[oc][c][r][2 kp + j] for v = chunk * vc + q = r * cp + c, zero for the zero
// channel lines, past the kernel's width and past the output channels; on a 64-byte boundary.
struct ChannelsWeights {
  std::vector<uint16_t> storage;
  uint16_t* data;
  ChannelsWeights(const Conv2dGeometry& g, const ChannelsPlan& p, const BFloat16* w) {
    const int64_t C = g.in_channels, O = g.out_channels, KH = g.kernel_h, KW = g.kernel_w;
    const ConvChannelsDepth& d = p.depth;
    const int64_t steps = p.kps * d.chunks;
    storage.assign(p.n_tiles * steps * kConvChannelsWeightTile + 32, 0);
    data = storage.data() + ((64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64) / 2;
    for (int64_t t = 0; t < p.n_tiles; ++t) {
      for (int64_t kp = 0; kp < p.kps; ++kp) {
        for (int64_t chunk = 0; chunk < d.chunks; ++chunk) {
          uint16_t* tile = data + (t * steps + kp * d.chunks + chunk) * kConvChannelsWeightTile;
          for (int64_t i = 0; i < p.m && t * p.m + i < O; ++i) {
            const int64_t oc = t * p.m + i;
            for (int64_t q = 0; q < d.vc; ++q) {
              const int64_t v = chunk * d.vc + q, r = v / d.cp, c = v % d.cp;
              if (c >= C) continue;
              for (int64_t j = 0; j < 2 && 2 * kp + j < KW; ++j)
                tile[i * 32 + 2 * q + j] = w[((oc * C + c) * KH + r) * KW + 2 * kp + j].bits;
            }
          }
        }
      }
    }
  }
};

// x's elements as bfloat16 bits: bfloat16 as they are, float32 rounded (to nearest even, a NaN
// kept quiet: BFloat16's rounding, autocast's cast), eight at a time or one.
inline __m128i load8_bits(const uint16_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m128i load8_bits(const float* p) { return vec::Avx2::round_bf16(_mm256_loadu_ps(p)); }
inline uint32_t bits_of(uint16_t v) { return v; }
inline uint32_t bits_of(float v) { return BFloat16(v).bits; }

// One image row's entries in both layouts, read straight from x's row `src` (W elements; when
// `vector`, readable to W rounded up to whole 8s, else read element by element): pairs[pw + i] =
// (src[i], src[i + 1])
// and odd[pw + i] = (src[i], 0) for i < W, with src[W] read as 0, and pairs[pw - 1] = (0, src[0]).
// Eight at a time, the entries from pw + W to the next whole 8 take the next row's elements and are
// zeroed again after (the line leaves room for them: ChannelsPlan::pitch). Through a copy of the
// row in a buffer, the unaligned loads waited on the copy's stores (store forwarding fails): 14 %
// of the layout and rounding work's samples on one load (perf, Intel Xeon). Each 8 is loaded (and
// for float32 rounded) once, the partners src[i + 1 ..] taken from it and the next 8 by a byte shift.
template <typename T>
inline void pair_row(const T* src, int64_t w, int64_t pw, bool vector, uint32_t* pairs, uint32_t* odd) {
  int64_t i = 0;
  if (vector) {
    const __m128i zero = _mm_setzero_si128();
    __m128i next = load8_bits(src);
    for (; i < w; i += 8) {
      const __m128i a = next;
      next = i + 8 < w ? load8_bits(src + i + 8) : zero;
      const __m128i b = _mm_alignr_epi8(next, a, 2);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(pairs + pw + i), _mm_unpacklo_epi16(a, b));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(pairs + pw + i + 4), _mm_unpackhi_epi16(a, b));
      if (odd != nullptr) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(odd + pw + i), _mm_unpacklo_epi16(a, zero));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(odd + pw + i + 4), _mm_unpackhi_epi16(a, zero));
      }
    }
    for (int64_t e = pw + w; e < pw + i; ++e) {
      pairs[e] = 0;
      if (odd != nullptr) odd[e] = 0;
    }
  } else {
    for (; i + 1 < w; ++i) pairs[pw + i] = bits_of(src[i]) | bits_of(src[i + 1]) << 16;
    if (odd != nullptr)
      for (int64_t e = 0; e < w; ++e) odd[pw + e] = bits_of(src[e]);
  }
  pairs[pw + w - 1] = bits_of(src[w - 1]);
  if (pw > 0) pairs[pw - 1] = bits_of(src[0]) << 16;
}

// Image `image`'s interior lines of both layouts (T: uint16_t, bfloat16 bits, or float);
// the padding rows, the zero channel lines and the entries outside pair_row's are zeros the
// caller wrote once. `end`: the end of x.
template <typename T>
void to_pair_layouts(const Conv2dGeometry& g, const ChannelsPlan& p, const T* image, const T* end, uint32_t* pairs,
                     uint32_t* odd) {
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w, cp = p.depth.cp;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t y = 0; y < H; ++y) {
      const T* src = image + (c * H + y) * W;
      const int64_t at = ((y + g.pad_h) * cp + c) * p.pitch;
      pair_row(src, W, g.pad_w, src + (W + 7) / 8 * 8 <= end, pairs + at, odd != nullptr ? odd + at : nullptr);
    }
  }
}

// The output planes of one image from the grid (plane o's row oh at (o * Ho + oh) * wg), each
// output rounded once with its bias. Rows are rounded in whole 8s where those stay inside the
// image's output (the few past a row's end land on the next row, written after it).
void write_planes(const Conv2dGeometry& g, const ChannelsPlan& p, const float* grid, const BFloat16* bias,
                  BFloat16* y) {
  const int64_t Ho = g.out_h, Wo = g.out_w, rows = g.out_channels * Ho, whole = (Wo + 7) / 8 * 8;
  for (int64_t o = 0, r = 0; o < g.out_channels; ++o) {
    for (int64_t oh = 0; oh < Ho; ++oh, ++r) {
      const int64_t n = r * Wo + whole <= rows * Wo ? whole : Wo;
      if (bias != nullptr) {
        round_row_to_bf16<true>(grid + r * p.wg, n, static_cast<float>(bias[o]), y + r * Wo);
      } else {
        round_row_to_bf16<false>(grid + r * p.wg, n, 0.0f, y + r * Wo);
      }
    }
  }
}

struct ChannelsScratch;

}  // namespace

ConvChannelsDepth conv_channels_depth(int64_t in_channels, int64_t kernel_h) {
  for (int64_t chunks = (kernel_h * in_channels + kMaxRows - 1) / kMaxRows;; ++chunks) {
    for (int64_t cp = in_channels; cp < in_channels + chunks; ++cp) {
      if ((kernel_h * cp) % chunks == 0 && kernel_h * cp / chunks <= kMaxRows) return {cp, chunks, kernel_h * cp / chunks};
    }
  }
}

template class ScopedFns<ConvChannelsFns>;

const ConvChannelsFns* active_conv_channels_fns() {
  return overridden_or<ConvChannelsFns>(
      [] { return amx_gemm_is_native() ? &conv_channels_amx::conv_channels_fns() : nullptr; });
}

bool conv_channels_fit(const Conv2dGeometry& g) {
  return g.unit_stride_dilation_one_group();
}

namespace {

// conv2d_forward_channels for x of bfloat16 bits (uint16_t) or float32 (T).
template <typename T>
void forward_channels(const Conv2dGeometry& g, const T* x, const BFloat16* w, const BFloat16* bias, BFloat16* y) {
  const ConvChannelsFns* fns = active_conv_channels_fns();
  if (fns == nullptr || !conv_channels_fit(g)) {
    throw std::invalid_argument("conv2d: the channel-major AMX product needs AMX-BF16 active and stride 1, "
                                "dilation 1, one group");
  }
  if (g.batch == 0) return;
  const ChannelsPlan p = plan_channels(g);
  const ChannelsWeights weights(g, p, w);
  const bool odd_kw = g.kernel_w % 2 == 1;
  const int64_t image_in = g.in_channels * g.in_h * g.in_w, image_out = g.out_channels * g.out_h * g.out_w;
  const int64_t grid_elems = p.n_tiles * p.m * g.out_h * p.wg;
  parallel_for(g.batch, 1, [&](int64_t n0, int64_t n1) {
    uint32_t* pairs = thread_scratch<ChannelsScratch, uint32_t, 0>(p.layout_entries);
    uint32_t* odd = odd_kw ? thread_scratch<ChannelsScratch, uint32_t, 1>(p.layout_entries) : nullptr;
    float* grid = thread_scratch<ChannelsScratch, float, 3>(grid_elems);
    std::fill(pairs, pairs + p.layout_entries, 0u);
    if (odd != nullptr) std::fill(odd, odd + p.layout_entries, 0u);
    ConvChannelsArgs args;
    args.pairs = pairs;
    args.odd = odd;
    args.pitch = p.pitch;
    args.cp = p.depth.cp;
    args.kps = p.kps;
    args.chunks = p.depth.chunks;
    args.vc = p.depth.vc;
    args.m = p.m;
    args.n_tiles = p.n_tiles;
    args.units = g.out_h * p.groups;
    args.groups = p.groups;
    args.packed_w = weights.data;
    args.out = grid;
    args.out_row = p.wg;
    args.out_channel = g.out_h * p.wg;
    for (int64_t n = n0; n < n1; ++n) {
      to_pair_layouts(g, p, x + n * image_in, x + g.batch * image_in, pairs, odd);
      fns->channels(args);
      write_planes(g, p, grid, bias, y + n * image_out);
    }
  });
}

}  // namespace

void conv2d_forward_channels(const Conv2dGeometry& g, const BFloat16* x, const BFloat16* w, const BFloat16* bias,
                             BFloat16* y) {
  forward_channels(g, reinterpret_cast<const uint16_t*>(x), w, bias, y);
}

void conv2d_forward_channels(const Conv2dGeometry& g, const float* x, const BFloat16* w, const BFloat16* bias,
                             BFloat16* y) {
  forward_channels(g, x, w, bias, y);
}

}  // namespace colony::kernels::cpu
