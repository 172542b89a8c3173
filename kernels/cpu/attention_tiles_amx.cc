// attention_tiles.h's products on the AMX instructions; called only where amx_gemm's active copy is
// the hardware's (AmxBf16 active). Built with -mamx-tile -mamx-bf16 on x86-64-v4: everything here
// has internal linkage but the table function, in namespace amx_bf16 (the ISA copies' rule:
// small_gemm_isa_symbols_test).
//
// The output is computed 32 x 32 at a time as amx_gemm_tiles.h does it: four C tiles (0-3) fed by
// two A tiles (4, 5: rows 0-15 and 16-31) and two B tiles (6, 7: columns 0-15 and 16-31), the B
// tile loaded first so that it has two products' time to arrive. The C tiles start from zero or
// from C and are stored straight back to C.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/transpose_words.h"

// GCC 12 warns of its own intrinsics' undefined vectors once inlined (see amx_gemm_tiles.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace colony::kernels::cpu::amx_bf16 {
namespace {

constexpr int64_t kTileElems = 512;  // bfloat16 per A or B tile: 16 rows of 32
constexpr int64_t kRowBytes = 64;
constexpr int64_t kMaxSteps = kAttentionTileMaxDepth / 32;

// ldtilecfg's 64-byte operand, palette 1: eight tiles of 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

void begin() {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = kRowBytes;
    cfg.rows[t] = 16;
  }
  _tile_loadconfig(&cfg);
}

void end() { _tile_release(); }

// The 16 x 32 A tile of X^T at rows [i, i + 16) and depth [p, p + 32): column p + 2s and p + 2s + 1
// of A are X's rows p + 2s and p + 2s + 1 (16 elements from i), interleaved into word s of every
// tile row by one permute of the two rows side by side, then the 16 x 16 transpose of words.
// `src` is X + p * ld + i.
void transpose_tile(const uint16_t* src, int64_t ld, uint16_t* out) {
  // Element 2w of the result is element w of the low half (row 2s), 2w + 1 element w of the high.
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                                              22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  __m512i r[16];
  for (int s = 0; s < 16; ++s) {
    const __m256i even = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * s * ld));
    const __m256i odd = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + (2 * s + 1) * ld));
    r[s] = _mm512_permutexvar_epi16(interleave, _mm512_inserti64x4(_mm512_castsi256_si512(even), odd, 1));
  }
  transpose_16x16_words(r, out);
}

// C tiles for rows i (MR halves of 16) and columns j (NR tiles of 16), over `steps` depth steps:
// A's row halves at a0 and a1, `a_step` elements from one step to the next, rows a_stride bytes
// apart; B's column tiles at b0 and b1.
template <int MR, int NR>
void block(const uint16_t* a0, const uint16_t* a1, int64_t a_step, int64_t a_stride, const uint16_t* b0,
           const uint16_t* b1, int64_t steps, float* c, int64_t ldc, bool accumulate) {
  const int64_t cs = ldc * 4;
  float* c1 = c + 16;
  float* c2 = c + 16 * ldc;
  float* c3 = c2 + 16;
  if (accumulate) {
    _tile_loadd(0, c, cs);
    if constexpr (NR == 2) _tile_loadd(1, c1, cs);
    if constexpr (MR == 2) _tile_loadd(2, c2, cs);
    if constexpr (MR == 2 && NR == 2) _tile_loadd(3, c3, cs);
  } else {
    _tile_zero(0);
    if constexpr (NR == 2) _tile_zero(1);
    if constexpr (MR == 2) _tile_zero(2);
    if constexpr (MR == 2 && NR == 2) _tile_zero(3);
  }
  for (int64_t q = 0; q < steps; ++q) {
    _tile_loadd(6, b0 + q * kTileElems, kRowBytes);
    _tile_loadd(4, a0 + q * a_step, a_stride);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (MR == 2) {
      _tile_loadd(5, a1 + q * a_step, a_stride);
      _tile_dpbf16ps(2, 5, 6);
    }
    if constexpr (NR == 2) {
      _tile_loadd(7, b1 + q * kTileElems, kRowBytes);
      _tile_dpbf16ps(1, 4, 7);
      if constexpr (MR == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, c, cs);
  if constexpr (NR == 2) _tile_stored(1, c1, cs);
  if constexpr (MR == 2) _tile_stored(2, c2, cs);
  if constexpr (MR == 2 && NR == 2) _tile_stored(3, c3, cs);
}

void product(const AttentionTileProduct& p) {
  const int64_t steps = p.k / 32, b_steps = p.b_steps > 0 ? p.b_steps : steps;
  alignas(64) uint16_t transposed[2][kMaxSteps * kTileElems];
  for (int64_t i = 0; i < p.m; i += 32) {
    const bool two_rows = p.m - i > 16;
    const uint16_t *a0, *a1;
    int64_t a_step, a_stride;
    if (p.a_transposed) {
      for (int64_t h = 0; h < (two_rows ? 2 : 1); ++h) {
        for (int64_t q = 0; q < steps; ++q)
          transpose_tile(p.a + q * 32 * p.lda + i + 16 * h, p.lda, transposed[h] + q * kTileElems);
      }
      a0 = transposed[0];
      a1 = transposed[1];
      a_step = kTileElems;
      a_stride = kRowBytes;
    } else {
      a0 = p.a + i * p.lda;
      a1 = a0 + 16 * p.lda;
      a_step = 32;
      a_stride = p.lda * 2;
    }
    for (int64_t j = 0; j < p.n; j += 32) {
      const bool two_cols = p.n - j > 16;
      const uint16_t* b0 = p.packed_b + (j / 16) * b_steps * kTileElems;
      const uint16_t* b1 = b0 + b_steps * kTileElems;
      float* c = p.c + i * p.ldc + j;
      if (two_rows && two_cols) {
        block<2, 2>(a0, a1, a_step, a_stride, b0, b1, steps, c, p.ldc, p.accumulate);
      } else if (two_rows) {
        block<2, 1>(a0, a1, a_step, a_stride, b0, b1, steps, c, p.ldc, p.accumulate);
      } else if (two_cols) {
        block<1, 2>(a0, a1, a_step, a_stride, b0, b1, steps, c, p.ldc, p.accumulate);
      } else {
        block<1, 1>(a0, a1, a_step, a_stride, b0, b1, steps, c, p.ldc, p.accumulate);
      }
    }
  }
}

}  // namespace

const AttentionTileFns& attention_tile_fns() {
  static const AttentionTileFns fns{"amx", &begin, &end, &product};
  return fns;
}

}  // namespace colony::kernels::cpu::amx_bf16

#pragma GCC diagnostic pop
