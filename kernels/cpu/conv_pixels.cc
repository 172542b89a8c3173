// conv_pixels.h's plan, the channels-last images, the weights' tiles and the output planes; the
// product is in conv_pixels_tiles.h.
#include "kernels/cpu/conv_pixels.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scratch.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kTileRows = 16, kTileDepth = 32;
// The widest kernel row taken: chunks of a kw x C run stay at most 32 deep only while 2 kw <= 16
// (plan_pixels pads C by at most 2 x chunks - 1).
constexpr int64_t kMaxKernelW = 8;

// How one shape's image is laid out and stepped through.
struct PixelsPlan {
  int64_t cp = 0;      // channels per pixel in the channels-last image (C, or a few more zeros)
  int64_t chunks = 0;  // depth steps per kernel row
  int64_t depth = 0;   // bfloat16 per step: kw * cp / chunks, even, at most 32
  int64_t hp = 0, wp = 0;
  int64_t nq = 0;      // grid positions with an output: (Ho - 1) * Wp + Wo
  int64_t rows = 0;    // nq rounded up to whole tiles
  int64_t image_elems = 0;  // the channels-last image, and what the last tile's steps read past it
  int64_t n_tiles = 0, ldo = 0;
  std::vector<int64_t> offsets;  // per step (kh, chunk): kh * Wp * cp + chunk * depth
};

// The fewest steps per kernel row, then the fewest padding channels, that cut the kw x cp run into
// equal even steps of at most 32: one tile configuration for every step.
PixelsPlan plan_pixels(const Conv2dGeometry& g) {
  PixelsPlan p;
  const int64_t C = g.in_channels, kw = g.kernel_w;
  for (p.chunks = (kw * C + kTileDepth - 1) / kTileDepth; p.cp == 0; ++p.chunks) {
    for (int64_t cp = C; cp < C + 2 * p.chunks; ++cp) {
      if ((kw * cp) % (2 * p.chunks) == 0 && kw * cp / p.chunks <= kTileDepth) {
        p.cp = cp;
        break;
      }
    }
    if (p.cp != 0) break;
  }
  p.depth = kw * p.cp / p.chunks;
  p.hp = g.in_h + 2 * g.pad_h;
  p.wp = g.in_w + 2 * g.pad_w;
  p.nq = (g.out_h - 1) * p.wp + g.out_w;
  p.rows = (p.nq + kTileRows - 1) / kTileRows * kTileRows;
  for (int64_t kh = 0; kh < g.kernel_h; ++kh)
    for (int64_t ch = 0; ch < p.chunks; ++ch) p.offsets.push_back(kh * p.wp * p.cp + ch * p.depth);
  // The tiles' last rows read up to the last step's run; pixels_to_channels_last stores 8 words per pixel.
  p.image_elems = std::max(p.hp * p.wp * p.cp + 8, (p.rows - 1) * p.cp + p.offsets.back() + p.depth);
  p.n_tiles = (g.out_channels + 15) / 16;
  p.ldo = p.n_tiles * 16;
  return p;
}

// The weights as B of every step: step s = (kh, chunk), element p of the step is (kw, c) = ((chunk *
// depth + p) / cp, (chunk * depth + p) % cp) of the run, zero for the padding channels and past the
// output channels; VNNI tiles (conv_pixels.h), on a 64-byte boundary.
struct PixelsWeights {
  std::vector<uint16_t> storage;
  uint16_t* data;
  PixelsWeights(const Conv2dGeometry& g, const PixelsPlan& p, const BFloat16* w) {
    const int64_t steps = static_cast<int64_t>(p.offsets.size());
    const int64_t C = g.in_channels, O = g.out_channels, KH = g.kernel_h, KW = g.kernel_w;
    storage.assign(p.n_tiles * steps * kConvPixelsWeightTile + 32, 0);
    data = storage.data() + ((64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64) / 2;
    for (int64_t kh = 0; kh < KH; ++kh) {
      for (int64_t ch = 0; ch < p.chunks; ++ch) {
        const int64_t s = kh * p.chunks + ch;
        for (int64_t e = 0; e < p.depth; ++e) {
          const int64_t run = ch * p.depth + e, kwi = run / p.cp, c = run % p.cp;
          if (c >= C) continue;
          for (int64_t o = 0; o < O; ++o) {
            uint16_t* tile = data + (o / 16 * steps + s) * kConvPixelsWeightTile;
            tile[e / 2 * kTileDepth + 2 * (o % 16) + e % 2] = w[((o * C + c) * KH + kh) * KW + kwi].bits;
          }
        }
      }
    }
  }
};

// Pixels [x, x + count) of one input row, channels-last: channels 0..7 (rows of `src`, `plane`
// apart; past `channels` zeros) of 8 pixels loaded, transposed as 8 x 8 words, and each pixel's 8
// words stored at out + i * cp. With cp < 8 a store runs into the next pixel's slots, which that
// pixel's own store (after it) rewrites; the caller leaves room past the last pixel. Written out
// without arrays, as transpose8x8.
inline void pixels_to_channels_last(const uint16_t* src, int64_t plane, int64_t channels, int64_t count,
                                    int64_t cp, uint16_t* out) {
  auto load = [&](int64_t c) {
    return c < channels ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + c * plane)) : _mm_setzero_si128();
  };
  const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3), r4 = load(4), r5 = load(5), r6 = load(6),
                r7 = load(7);
  // a: pixels 0-3 (lo) or 4-7 (hi) of a channel pair; b: two pixels of four channels.
  const __m128i a0 = _mm_unpacklo_epi16(r0, r1), a1 = _mm_unpackhi_epi16(r0, r1), a2 = _mm_unpacklo_epi16(r2, r3),
                a3 = _mm_unpackhi_epi16(r2, r3), a4 = _mm_unpacklo_epi16(r4, r5), a5 = _mm_unpackhi_epi16(r4, r5),
                a6 = _mm_unpacklo_epi16(r6, r7), a7 = _mm_unpackhi_epi16(r6, r7);
  const __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2), b2 = _mm_unpacklo_epi32(a1, a3),
                b3 = _mm_unpackhi_epi32(a1, a3), b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6),
                b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
  const __m128i px[8] = {_mm_unpacklo_epi64(b0, b4), _mm_unpackhi_epi64(b0, b4), _mm_unpacklo_epi64(b1, b5),
                         _mm_unpackhi_epi64(b1, b5), _mm_unpacklo_epi64(b2, b6), _mm_unpackhi_epi64(b2, b6),
                         _mm_unpacklo_epi64(b3, b7), _mm_unpackhi_epi64(b3, b7)};
  if (count == 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), px[0]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + cp), px[1]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * cp), px[2]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * cp), px[3]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * cp), px[4]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 5 * cp), px[5]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 6 * cp), px[6]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 7 * cp), px[7]);
    return;
  }
  for (int64_t i = 0; i < count; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * cp), px[i]);
}

// Image n of x channels-last in `out` (pixel (y, x) of the padded grid at (y * Wp + x) * cp), its
// interior written; the padding and the slack past it are zeros the caller wrote once. Up to 8
// channels, 8 pixels at a time (pixels_to_channels_last; the loads of a row's last block may read
// past the row, not past `end`, the end of x); element by element, this was a third of LeNet
// conv1's forward outside the tiles (perf, Intel Xeon).
void to_channels_last(const Conv2dGeometry& g, const PixelsPlan& p, const BFloat16* image, const BFloat16* end,
                      uint16_t* out) {
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w;
  const uint16_t* bits = reinterpret_cast<const uint16_t*>(image);
  for (int64_t y = 0; y < H; ++y) {
    uint16_t* row = out + ((y + g.pad_h) * p.wp + g.pad_w) * p.cp;
    int64_t x = 0;
    if (C <= 8) {
      for (; x < W; x += 8) {
        const uint16_t* src = bits + y * W + x;
        if (src + (C - 1) * H * W + 8 > reinterpret_cast<const uint16_t*>(end)) break;
        pixels_to_channels_last(src, H * W, C, std::min<int64_t>(8, W - x), p.cp, row + x * p.cp);
      }
    }
    for (int64_t c = 0; c < C; ++c)
      for (int64_t xs = x; xs < W; ++xs) row[xs * p.cp + c] = bits[(c * H + y) * W + xs];
  }
}

// 8 x 8 floats transposed in AVX2 registers: out[j * ldo + i] = in[i * ld + j]. Written out
// without arrays: indexed arrays of vectors went through the stack.
inline void transpose8x8(const float* in, int64_t ld, float* out, int64_t ldo) {
  const __m256 r0 = _mm256_loadu_ps(in), r1 = _mm256_loadu_ps(in + ld), r2 = _mm256_loadu_ps(in + 2 * ld),
               r3 = _mm256_loadu_ps(in + 3 * ld), r4 = _mm256_loadu_ps(in + 4 * ld), r5 = _mm256_loadu_ps(in + 5 * ld),
               r6 = _mm256_loadu_ps(in + 6 * ld), r7 = _mm256_loadu_ps(in + 7 * ld);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
               t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
               t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee),
               u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee),
               u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee),
               u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(out + ldo, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(out + 2 * ldo, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(out + 3 * ldo, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(out + 4 * ldo, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(out + 5 * ldo, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(out + 6 * ldo, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(out + 7 * ldo, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// The output planes of one image from the products' pixel-major grid: y[o][r][x] =
// round(grid[(r * Wp + x) * ldo + o] + bias[o]), a row of every plane at a time: the grid's 8 x 8
// blocks transposed into `rows` (whole 8s of pixels per channel), then rounded, whole 8s too, into
// y, where the few past a row's end land on the next row, written after it (the last row goes
// through `last`). Element by element into a row buffer, the vector loads that round it waited
// on 8 scalar stores each (store forwarding fails): 80 % of conv1's forward outside the tiles,
// and the scalar rounding of each row's last 1-7 a tenth (perf, Intel Xeon).
void write_planes(const Conv2dGeometry& g, const PixelsPlan& p, const float* grid, const BFloat16* bias,
                  BFloat16* y, float* rows, BFloat16* last) {
  const int64_t Ho = g.out_h, Wo = g.out_w, O = g.out_channels, pitch = (Wo + 7) / 8 * 8;
  for (int64_t r = 0; r < Ho; ++r) {
    const float* src = grid + r * p.wp * p.ldo;
    for (int64_t x = 0; x < Wo; x += 8)
      for (int64_t o = 0; o < O; o += 8) transpose8x8(src + x * p.ldo + o, p.ldo, rows + o * pitch + x, pitch);
    for (int64_t o = 0; o < O; ++o) {
      const float b = bias != nullptr ? static_cast<float>(bias[o]) : 0.0f;
      BFloat16* dst = y + (o * Ho + r) * Wo;
      if (r + 1 < Ho) {
        round_row_to_bf16<true>(rows + o * pitch, pitch, b, dst);
      } else {
        round_row_to_bf16<true>(rows + o * pitch, pitch, b, last);
        std::memcpy(dst, last, Wo * sizeof(BFloat16));
      }
    }
  }
}

struct PixelsScratch;

}  // namespace

template class ScopedFns<ConvPixelsFns>;

const ConvPixelsFns* active_conv_pixels_fns() {
  return overridden_or<ConvPixelsFns>(
      [] { return amx_gemm_is_native() ? &conv_pixels_amx::conv_pixels_fns() : nullptr; });
}

bool conv_pixels_fit(const Conv2dGeometry& g) {
  return g.unit_stride_dilation_one_group() && g.kernel_w <= kMaxKernelW;
}

void conv2d_forward_pixels(const Conv2dGeometry& g, const BFloat16* x, const BFloat16* w, const BFloat16* bias,
                           BFloat16* y) {
  const ConvPixelsFns* fns = active_conv_pixels_fns();
  if (fns == nullptr || !conv_pixels_fit(g)) {
    throw std::invalid_argument("conv2d: the pixel-major AMX product needs AMX-BF16 active and stride 1, "
                                "dilation 1, one group, kernel width <= " + std::to_string(kMaxKernelW));
  }
  if (g.batch == 0) return;
  const PixelsPlan p = plan_pixels(g);
  const PixelsWeights weights(g, p, w);
  const int64_t image_in = g.in_channels * g.in_h * g.in_w, image_out = g.out_channels * g.out_h * g.out_w;
  parallel_for(g.batch, 1, [&](int64_t n0, int64_t n1) {
    uint16_t* image = thread_scratch<PixelsScratch, uint16_t, 0>(p.image_elems);
    // write_planes reads whole blocks of 8 pixels: up to 7 past the last row's output.
    float* grid = thread_scratch<PixelsScratch, float, 1>((p.rows + 8) * p.ldo);
    float* rows = thread_scratch<PixelsScratch, float, 2>((p.ldo + 8) * ((g.out_w + 7) / 8 * 8));
    BFloat16* last = thread_scratch<PixelsScratch, BFloat16, 3>((g.out_w + 7) / 8 * 8);
    std::fill(image, image + p.image_elems, uint16_t{0});
    ConvPixelsArgs args;
    args.image = image;
    args.pixel_stride = p.cp;
    args.rows = p.rows;
    args.steps = static_cast<int64_t>(p.offsets.size());
    args.step_offsets = p.offsets.data();
    args.depth = p.depth;
    args.packed_w = weights.data;
    args.n_tiles = p.n_tiles;
    args.out = grid;
    args.ldo = p.ldo;
    for (int64_t n = n0; n < n1; ++n) {
      to_channels_last(g, p, x + n * image_in, x + g.batch * image_in, image);
      fns->pixels(args);
      write_planes(g, p, grid, bias, y + n * image_out, rows, last);
    }
  });
}

bool conv_pixels_input_fit(const Conv2dGeometry& g) {
  return conv_pixels_fit(g) && g.pad_h <= g.kernel_h - 1 && g.pad_w <= g.kernel_w - 1;
}

void conv2d_backward_input_pixels(const Conv2dGeometry& g, const BFloat16* grad_y, const BFloat16* w,
                                  BFloat16* grad_x) {
  if (!conv_pixels_input_fit(g)) {
    throw std::invalid_argument("conv2d_backward: the pixel-major AMX input gradient needs stride 1, dilation 1, one "
                                "group, kernel width <= " + std::to_string(kMaxKernelW) +
                                " and padding below the kernel's size");
  }
  Conv2dGeometry t = g;
  t.in_channels = g.out_channels;
  t.in_h = g.out_h;
  t.in_w = g.out_w;
  t.out_channels = g.in_channels;
  t.pad_h = g.kernel_h - 1 - g.pad_h;
  t.pad_w = g.kernel_w - 1 - g.pad_w;
  t.out_h = g.in_h;
  t.out_w = g.in_w;
  const int64_t C = g.in_channels, O = g.out_channels, KH = g.kernel_h, KW = g.kernel_w;
  std::vector<BFloat16> flipped(C * O * KH * KW);
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < KH; ++i)
        for (int64_t j = 0; j < KW; ++j)
          flipped[((c * O + o) * KH + i) * KW + j] = w[((o * C + c) * KH + (KH - 1 - i)) * KW + (KW - 1 - j)];
  conv2d_forward_pixels(t, grad_y, flipped.data(), nullptr, grad_x);
}

}  // namespace colony::kernels::cpu
