// conv_weight_rows.h's plan, the image copies and grad_y's VNNI tiles; the product is in
// conv_weight_rows_tiles.h.
#include "kernels/cpu/conv_weight_rows.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/scratch.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kTileRows = 16, kTileDepth = 32;

// Images per call of the product: the tiles are configured, C loaded and stored, and the tile state
// released once per call. `conv_bench --weight-rows` (batch 32, 1 thread, us; Intel Xeon, load
// 2.0-2.4, 2026-12-06 03:19-03:21, alternating): LeNet's conv1 95-100 with 2 images per call, 92-94
// with 4, 82-89 with 8, 83-91 with 32; conv2 61-62, 57-61, 52-53, 48-52. Eight images' copies and
// grad_y tiles take 124 KB for conv1 (in L2), against 31 KB for two. Larger images take fewer, so
// that a call's copies and tiles stay within kCallBytes, half of L2 (2 MB here): every shape
// conv_bench measures keeps 8 (64 -> 64 channels, 16 x 16: 590 KB).
constexpr int64_t kImagesPerCall = 8;
constexpr int64_t kCallBytes = 1 << 20;

struct RowsPlan {
  int64_t hp = 0, wp = 0;
  int64_t chunks = 0, pixels = 0;  // an output row in `chunks` equal chunks of `pixels` (even, <= 32)
  bool per_column = false;          // chunks * pixels != Wo: one copy per kernel column
  int64_t width = 0;                // elements per copy row: Wp, or chunks * pixels per kernel column
  int64_t rows = 0, row_tiles = 0;  // v = r * C + c in row_tiles tiles of `rows`
  int64_t cols = 0, col_tiles = 0;  // output channels in col_tiles tiles of `cols`
  int64_t copy_rows = 0;            // rows of `width` per copy (per kernel column where per_column)
  int64_t image_elems = 0;          // one image's copy, its slack included, a multiple of 32
  int64_t b_image = 0;              // one image's grad_y tiles
};

RowsPlan plan_rows(const Conv2dGeometry& g) {
  RowsPlan p;
  const int64_t C = g.in_channels, O = g.out_channels, V = g.kernel_h * C, Wo = g.out_w;
  p.hp = g.in_h + 2 * g.pad_h;
  p.wp = g.in_w + 2 * g.pad_w;
  p.chunks = (Wo + kTileDepth - 1) / kTileDepth;
  p.pixels = ((Wo + p.chunks - 1) / p.chunks + 1) / 2 * 2;
  p.per_column = p.chunks * p.pixels != Wo;
  p.width = p.per_column ? p.chunks * p.pixels : p.wp;
  p.row_tiles = (V + kTileRows - 1) / kTileRows;
  p.rows = (V + p.row_tiles - 1) / p.row_tiles;
  p.col_tiles = (O + kTileRows - 1) / kTileRows;
  p.cols = (O + p.col_tiles - 1) / p.col_tiles;
  // The last row tile of the last output row reads rows * row_tiles - V rows past the image's.
  p.copy_rows = p.hp * C + p.rows * p.row_tiles - V;
  const int64_t copies = p.per_column ? g.kernel_w : 1;
  p.image_elems = (copies * p.copy_rows * p.width + 31) / 32 * 32;
  p.b_image = g.out_h * p.chunks * p.col_tiles * p.pixels * p.cols;
  return p;
}

// Image n's copy: Z[row][c][col] = the padded image (zeros outside x), or per kernel column
// Zk[kw][row][c][j] = Z[row][c][j + kw] for j < Wo and zeros past it. Only the interior is
// written: the caller zeroed the copy once, and every image writes the same elements.
void copy_image(const Conv2dGeometry& g, const RowsPlan& p, const uint16_t* x, uint16_t* z) {
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w;
  if (!p.per_column) {
    for (int64_t y = 0; y < H; ++y)
      for (int64_t c = 0; c < C; ++c)
        std::memcpy(z + ((y + g.pad_h) * C + c) * p.wp + g.pad_w, x + (c * H + y) * W, W * sizeof(uint16_t));
    return;
  }
  for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
    uint16_t* zk = z + kw * p.copy_rows * p.width;
    // Output column j reads input column j + kw - pad_w: those inside the image.
    const int64_t j0 = std::max<int64_t>(0, g.pad_w - kw), j1 = std::min<int64_t>(g.out_w, W + g.pad_w - kw);
    if (j1 <= j0) continue;
    for (int64_t y = 0; y < H; ++y)
      for (int64_t c = 0; c < C; ++c)
        std::memcpy(zk + ((y + g.pad_h) * C + c) * p.width + j0, x + (c * H + y) * W + j0 + kw - g.pad_w,
                    (j1 - j0) * sizeof(uint16_t));
  }
}

// 8 x 8 words of 32 bits transposed in AVX2 registers: v[i] holds row i on entry, column i on exit.
inline void transpose_8x8_dwords(__m256i v[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
    t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
    u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
    u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
    v[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
  }
}

// One B tile from whole pairs: row q, pair j = the 32-bit pair q of src + j * plane (j < `valid_cols`;
// zeros past it up to cols), for q < pairs. Blocks of 8 pairs x 8 channels are transposed in
// registers and stored a row of the tile at a time, in address order: with cols not a multiple of
// 8, a row's last store runs into the next row's first pairs, which that row's store (after it)
// rewrites; the caller leaves 8 pairs of room past the last tile. The last block of pairs is read
// with a mask, never past its row.
inline void pack_pairs(const uint32_t* src, int64_t plane, int64_t valid_cols, int64_t pairs, int64_t cols,
                       uint32_t* dst) {
  const int64_t col_blocks = (cols + 7) / 8;
  for (int64_t q0 = 0; q0 < pairs; q0 += 8) {
    const int64_t n = std::min<int64_t>(8, pairs - q0);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256i v[2][8];
    for (int64_t cb = 0; cb < col_blocks; ++cb) {
      for (int64_t i = 0; i < 8; ++i) {
        const int64_t j = cb * 8 + i;
        v[cb][i] = j < valid_cols ? _mm256_maskload_epi32(reinterpret_cast<const int*>(src + j * plane + q0), mask)
                                  : _mm256_setzero_si256();
      }
      transpose_8x8_dwords(v[cb]);
    }
    for (int64_t q = 0; q < n; ++q)
      for (int64_t cb = 0; cb < col_blocks; ++cb)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (q0 + q) * cols + cb * 8), v[cb][q]);
  }
}

// Image n's grad_y as the product's B tiles (conv_weight_rows.h): tile (h, k, t) row q holds the
// pairs (dy[o][h][k * pixels + 2q], dy[o][h][k * pixels + 2q + 1]) of output channels o = t * cols
// + j, zeros past Wo and past the output channels. With an even Wo and whole chunks the pairs are
// moved 32 bits at a time (pack_pairs: element by element, this was 60 % of the call outside the
// tiles in LeNet's step; perf, Intel Xeon).
void pack_grad(const Conv2dGeometry& g, const RowsPlan& p, const uint16_t* gy, uint16_t* b) {
  const int64_t O = g.out_channels, Ho = g.out_h, Wo = g.out_w, pairs = p.pixels / 2;
  const int64_t tile = p.pixels * p.cols;
  const bool whole_pairs = !p.per_column && Wo % 2 == 0;
  for (int64_t h = 0; h < Ho; ++h) {
    for (int64_t k = 0; k < p.chunks; ++k) {
      for (int64_t t = 0; t < p.col_tiles; ++t) {
        uint16_t* dst = b + ((h * p.chunks + k) * p.col_tiles + t) * tile;
        const int64_t first = k * p.pixels, valid = std::min(p.pixels, Wo - first);
        const int64_t o0 = t * p.cols, valid_cols = std::min(p.cols, O - o0);
        const uint16_t* src = gy + (o0 * Ho + h) * Wo + first;
        if (whole_pairs) {
          pack_pairs(reinterpret_cast<const uint32_t*>(src), Ho * Wo / 2, valid_cols, pairs, p.cols,
                     reinterpret_cast<uint32_t*>(dst));
          continue;
        }
        for (int64_t j = 0; j < p.cols; ++j) {
          for (int64_t e = 0; e < p.pixels; ++e) {
            dst[2 * ((e / 2) * p.cols + j) + e % 2] = j < valid_cols && e < valid ? src[j * Ho * Wo + e] : 0;
          }
        }
      }
    }
  }
}

struct RowsScratch;

}  // namespace

template class ScopedFns<ConvWeightRowsFns>;

const ConvWeightRowsFns* active_conv_weight_rows_fns() {
  return overridden_or<ConvWeightRowsFns>(
      [] { return amx_gemm_is_native() ? &conv_weight_rows_amx::conv_weight_rows_fns() : nullptr; });
}

bool conv_weight_rows_fit(const Conv2dGeometry& g) {
  return g.unit_stride_dilation_one_group();
}

void conv_weight_rows_accumulate(const Conv2dGeometry& g, const BFloat16* grad_y, const BFloat16* x, int64_t n0,
                                 int64_t n1, float* gw) {
  const ConvWeightRowsFns* fns = active_conv_weight_rows_fns();
  if (fns == nullptr || !conv_weight_rows_fit(g)) {
    throw std::invalid_argument("conv2d_backward: the AMX weight gradient with the pixels on the products' depth needs "
                                "AMX-BF16 active and stride 1, dilation 1, one group");
  }
  if (n1 <= n0) return;
  const RowsPlan p = plan_rows(g);
  const int64_t C = g.in_channels, O = g.out_channels, KH = g.kernel_h, KW = g.kernel_w;
  const int64_t row_block = p.rows * p.row_tiles, ldacc = p.cols * p.col_tiles;
  const int64_t image_in = C * g.in_h * g.in_w, image_out = O * g.out_h * g.out_w;
  // Copies and tiles on 64-byte boundaries (tile rows across two cache lines load at half speed).
  const int64_t per_call = std::clamp<int64_t>(kCallBytes / (2 * (p.image_elems + p.b_image)), 1, kImagesPerCall);
  uint16_t* z_raw = thread_scratch<RowsScratch, uint16_t, 0>(per_call * p.image_elems + 32);
  uint16_t* z = z_raw + ((64 - reinterpret_cast<uintptr_t>(z_raw) % 64) % 64) / 2;
  // pack_pairs' last stores run up to 8 pairs past the tiles.
  uint16_t* b_raw = thread_scratch<RowsScratch, uint16_t, 1>(per_call * p.b_image + 32 + 16);
  uint16_t* b = b_raw + ((64 - reinterpret_cast<uintptr_t>(b_raw) % 64) % 64) / 2;
  float* acc = thread_scratch<RowsScratch, float, 2>(KW * row_block * ldacc);
  std::fill(z, z + per_call * p.image_elems, uint16_t{0});
  std::fill(acc, acc + KW * row_block * ldacc, 0.0f);
  ConvWeightRowsArgs args;
  args.a = z;
  args.a_image = p.image_elems;
  args.a_out_row = C * p.width;
  args.a_kernel_col = p.per_column ? p.copy_rows * p.width : 1;
  args.a_row = p.width;
  args.out_rows = g.out_h;
  args.chunks = p.chunks;
  args.pixels = p.pixels;
  args.kernel_w = KW;
  args.rows = p.rows;
  args.row_tiles = p.row_tiles;
  args.b = b;
  args.b_image = p.b_image;
  args.cols = p.cols;
  args.col_tiles = p.col_tiles;
  args.acc = acc;
  args.ldacc = ldacc;
  const uint16_t* xb = reinterpret_cast<const uint16_t*>(x);
  const uint16_t* gyb = reinterpret_cast<const uint16_t*>(grad_y);
  for (int64_t n = n0; n < n1; n += per_call) {
    args.images = std::min(per_call, n1 - n);
    for (int64_t i = 0; i < args.images; ++i) {
      copy_image(g, p, xb + (n + i) * image_in, z + i * p.image_elems);
      pack_grad(g, p, gyb + (n + i) * image_out, b + i * p.b_image);
    }
    fns->rows(args);
  }
  // acc[(kw * row_block + r * C + c) * ldacc + o] is dW[o][c][r][kw].
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < KH; ++r)
        for (int64_t kw = 0; kw < KW; ++kw)
          gw[((o * C + c) * KH + r) * KW + kw] += acc[(kw * row_block + r * C + c) * ldacc + o];
}

}  // namespace colony::kernels::cpu
