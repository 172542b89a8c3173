// amx_gemm.h's packing and dispatch; the tiles are in amx_gemm_tiles.h.
#include "kernels/cpu/amx_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/transpose_words.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kDepth = 32, kCols = 16, kTile = 512;

int64_t steps_of(int64_t k) { return (k + kDepth - 1) / kDepth; }

struct AmxScratch;

// out[2j] = r0[j], out[2j + 1] = r1[j] for j < 16, in AVX2 (the baseline ISA): a 1024 x 1024 B
// packed in 0.65 ms element by element, a third of the AMX product's time.
void interleave_rows(const uint16_t* r0, const uint16_t* r1, uint16_t* out) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1));
  const __m256i lo = _mm256_unpacklo_epi16(a, b);  // pairs 0-3 | 8-11
  const __m256i hi = _mm256_unpackhi_epi16(a, b);  // pairs 4-7 | 12-15
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
}

// Rows row0 and row1 of B (p0 and p0 + 1; row1 null past k: zeros), interleaved for all n
// columns: 32 columns of two rows per two permutes, half the instructions of interleave_rows, the
// last 1 to 31 by masked loads (zeros past n; the scalar copy of a last partial tile took 40 % of
// a LeNet conv1 image's packing). `out` is the pair's tile row in the first column tile; column
// tile t's is steps * kTile * t further on. AVX-512 is there wherever AMX is; callers check.
__attribute__((target("avx512f,avx512bw"))) void pack_row_pair_avx512(const uint16_t* row0, const uint16_t* row1,
                                                                       int64_t n, int64_t steps, uint16_t* out) {
  // Element 2j of a tile row is row0[j] and 2j + 1 is row1[j] (index 32 + j); the next tile 16 on.
  const __m512i lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37,
                                      5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
  const int64_t wide = n / (2 * kCols), rest = n % (2 * kCols);
  for (int64_t w = 0; w <= wide; ++w) {
    if (w == wide && rest == 0) break;
    const __mmask32 mask = w < wide ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << rest) - 1);
    const __m512i r0 = _mm512_maskz_loadu_epi16(mask, row0 + w * 2 * kCols);
    const __m512i r1 = row1 != nullptr ? _mm512_maskz_loadu_epi16(mask, row1 + w * 2 * kCols) : _mm512_setzero_si512();
    uint16_t* o = out + 2 * w * steps * kTile;
    _mm512_storeu_si512(o, _mm512_permutex2var_epi16(r0, lo, r1));
    if (w < wide || rest > kCols) _mm512_storeu_si512(o + steps * kTile, _mm512_permutex2var_epi16(r0, hi, r1));
  }
}

// The tile row of row pair p0 (even) in the first column tile.
uint16_t* pair_row(uint16_t* packed, int64_t p0) { return packed + (p0 / kDepth) * kTile + (p0 % kDepth) / 2 * kDepth; }

// A row-major B's whole row pairs (p0 + 1 < k) and whole pairs of column tiles, a call per row
// pair rather than per tile (a call per 32 columns from the loop below took 10 % of a 1024^3
// product). Rows in the same order as amx_pack_b, front to back.
void pack_b_pairs_avx512(int64_t k, int64_t n, const uint16_t* b, int64_t ld, uint16_t* packed) {
  const int64_t steps = steps_of(k), wide = n / (2 * kCols);
  for (int64_t p0 = 0; p0 + 1 < k; p0 += 2) {
    const uint16_t* row0 = b + p0 * ld;
    pack_row_pair_avx512(row0, row0 + ld, wide * 2 * kCols, steps, pair_row(packed, p0));
  }
}

// GCC 12 warns of its own intrinsics' undefined vectors (_mm512_undefined_epi32 inside
// _mm512_unpackhi_epi32 and the like) in the AVX-512 functions below: a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// One whole tile of a column-major B (a linear layer's W^T): source row j (column j of B, 32
// depths = 16 pairs as 32-bit words) at row(j) becomes word j of each tile row, so the tile is the
// 16 x 16 transpose of 32-bit words. The scalar copy moved 256 words one by one.
template <typename RowAt>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void transpose_tile_words(const RowAt& row,
                                                                                            uint16_t* out) {
  __m512i r[16];
  for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_si512(row(j));
  transpose_16x16_words(r, out);
}

// Column-major B, columns src + j * src_stride.
__attribute__((target("avx512f,avx512bw"))) void transpose_strided_tile(const uint16_t* src, int64_t src_stride,
                                                                         uint16_t* out) {
  transpose_tile_words([&](int j) { return src + j * src_stride; }, out);
}

// Columns at rows[j], 32 elements each.
__attribute__((target("avx512f,avx512bw"))) void transpose_listed_tile(const uint16_t* const* rows, uint16_t* out) {
  transpose_tile_words([&](int j) { return rows[j]; }, out);
}

#pragma GCC diagnostic pop

}  // namespace

int64_t amx_packed_b_size(int64_t k, int64_t n) { return steps_of(k) * ((n + kCols - 1) / kCols) * kTile; }

int64_t amx_scratch_size(int64_t m, int64_t k) {
  // 32-row blocks of A by depth blocks of at most kAmxBlockSteps steps (amx_gemm_tiles.h), the
  // float32 sums, and 32 elements to align them to 64 bytes.
  const int64_t steps = steps_of(k);
  const int64_t blocks = steps > kAmxBlockSteps ? (steps + kAmxBlockSteps - 1) / kAmxBlockSteps : 1;
  return ((m + 31) / 32) * blocks * 2 * kAmxBlockSteps * kTile + 2 * (kAmxMaxPanelTiles * 2 * 16 * 16) + 32;
}

int64_t amx_panel_tiles(int64_t k) {
  const int64_t panel = kAmxPanelBytes / (steps_of(k) * kTile * 2 + 1);
  return panel < 2 ? 2 : panel > kAmxMaxPanelTiles ? kAmxMaxPanelTiles : panel & ~int64_t{1};
}

int64_t amx_scratch_size(int64_t m, int64_t n, int64_t k, bool b_unpacked) {
  const int64_t panel = std::min(amx_panel_tiles(k), (n + kCols - 1) / kCols);
  return amx_scratch_size(m, k) + (b_unpacked ? panel * steps_of(k) * kTile : 0);
}

void amx_pack_b(int64_t k, int64_t n, const uint16_t* b, int64_t b_row_stride, int64_t b_col_stride,
                uint16_t* packed) {
  const int64_t steps = steps_of(k), col_tiles = (n + kCols - 1) / kCols;
  const bool avx512 = active_cpu_isa() >= CpuIsa::Avx512;
  if (avx512 && b_row_stride == 1) {
    // Column-major B: the whole tiles by transposes, tile by tile; the rest below.
    for (int64_t t = 0; t < n / kCols; ++t)
      for (int64_t q = 0; q < k / kDepth; ++q)
        transpose_strided_tile(b + t * kCols * b_col_stride + q * kDepth, b_col_stride,
                               packed + (t * steps + q) * kTile);
  }
  const bool pairs_done = avx512 && b_col_stride == 1;
  if (pairs_done) pack_b_pairs_avx512(k, n, b, b_row_stride, packed);
  // Row pairs outer, column tiles inner: a row-major B is read once, front to back.
  for (int64_t q = 0; q < steps; ++q) {
    for (int64_t r = 0; r < kDepth / 2; ++r) {
      const int64_t p0 = q * kDepth + 2 * r;
      const bool has0 = p0 < k, has1 = p0 + 1 < k;
      const bool transposed = avx512 && b_row_stride == 1 && (q + 1) * kDepth <= k;
      // Start past the tiles done above: stepping over them one by one took 3 % of a 1024^3
      // product (perf, 1 thread, 2026-12-05).
      const int64_t t_first = transposed ? n / kCols : pairs_done && has1 ? n / (2 * kCols) * 2 : 0;
      for (int64_t t = t_first; t < col_tiles; ++t) {
        uint16_t* out = packed + (t * steps + q) * kTile + r * kDepth;
        const int64_t j0 = t * kCols, cols = std::min(kCols, n - j0);
        if (transposed && cols == kCols) continue;  // done above
        // Rows p0 and p0 + 1 of B, interleaved; zeros past k and n.
        const uint16_t* row0 = has0 ? b + p0 * b_row_stride + j0 * b_col_stride : nullptr;
        const uint16_t* row1 = has1 ? row0 + b_row_stride : nullptr;
        if (pairs_done && has1 && t < n / (2 * kCols) * 2) continue;  // done above
        if (has1 && cols == kCols && b_col_stride == 1) {
          interleave_rows(row0, row1, out);
          continue;
        }
        if (has1 && b_row_stride == 1) {  // column-major B (a linear layer's W^T): pairs are adjacent
          for (int64_t j = 0; j < cols; ++j) std::memcpy(out + 2 * j, row0 + j * b_col_stride, 4);
          for (int64_t j = cols; j < kCols; ++j) out[2 * j] = out[2 * j + 1] = 0;
          continue;
        }
        for (int64_t j = 0; j < cols; ++j) {
          out[2 * j] = has0 ? row0[j * b_col_stride] : 0;
          out[2 * j + 1] = has1 ? row1[j * b_col_stride] : 0;
        }
        for (int64_t j = cols; j < kCols; ++j) out[2 * j] = out[2 * j + 1] = 0;
      }
    }
  }
}

void amx_pack_b_rows(int64_t k, int64_t n, const uint16_t* b, const int64_t* b_rows, uint16_t* packed,
                     bool zeros_kept) {
  const int64_t steps = steps_of(k), col_tiles = (n + kCols - 1) / kCols;
  const bool avx512 = active_cpu_isa() >= CpuIsa::Avx512;
  for (int64_t p0 = 0; p0 < steps * kDepth; p0 += 2) {
    uint16_t* out = pair_row(packed, p0);
    if (p0 >= k) {  // the last step's rows past k
      if (zeros_kept) break;
      for (int64_t t = 0; t < col_tiles; ++t) std::memset(out + t * steps * kTile, 0, kDepth * sizeof(uint16_t));
      continue;
    }
    const uint16_t* row0 = b + b_rows[p0];
    const uint16_t* row1 = p0 + 1 < k ? b + b_rows[p0 + 1] : nullptr;
    int64_t t = 0;
    if (avx512) {
      pack_row_pair_avx512(row0, row1, n, steps, out);
      t = col_tiles;
    }
    for (; t < col_tiles; ++t) {
      uint16_t* o = out + t * steps * kTile;
      const int64_t j0 = t * kCols, cols = std::min(kCols, n - j0);
      if (row1 != nullptr && cols == kCols) {
        interleave_rows(row0 + j0, row1 + j0, o);
        continue;
      }
      for (int64_t j = 0; j < cols; ++j) {
        o[2 * j] = row0[j0 + j];
        o[2 * j + 1] = row1 != nullptr ? row1[j0 + j] : 0;
      }
      for (int64_t j = cols; j < kCols; ++j) o[2 * j] = o[2 * j + 1] = 0;
    }
  }
}

void amx_pack_b_cols(int64_t k, int64_t n, const uint16_t* b, const int64_t* b_cols, uint16_t* packed) {
  const int64_t steps = steps_of(k), col_tiles = (n + kCols - 1) / kCols;
  const bool avx512 = active_cpu_isa() >= CpuIsa::Avx512;
  static const uint16_t kZeros[kDepth] = {};
  uint16_t staged[kCols][kDepth];  // a last, partial step's columns, zero-padded
  for (int64_t t = 0; t < col_tiles; ++t) {
    const int64_t j0 = t * kCols, cols = std::min(kCols, n - j0);
    for (int64_t q = 0; q < steps; ++q) {
      uint16_t* o = packed + (t * steps + q) * kTile;
      const int64_t p0 = q * kDepth, depth = std::min(kDepth, k - p0);
      if (avx512) {
        const uint16_t* rows[kCols];
        for (int64_t j = 0; j < kCols; ++j) {
          if (j >= cols) {
            rows[j] = kZeros;
          } else if (depth == kDepth) {
            rows[j] = b + b_cols[j0 + j] + p0;
          } else {
            std::memcpy(staged[j], b + b_cols[j0 + j] + p0, depth * sizeof(uint16_t));
            std::memset(staged[j] + depth, 0, (kDepth - depth) * sizeof(uint16_t));
            rows[j] = staged[j];
          }
        }
        transpose_listed_tile(rows, o);
        continue;
      }
      // Tile row r: the pairs (B(p0 + 2r, j), B(p0 + 2r + 1, j)) of the tile's columns.
      for (int64_t r = 0; r < kDepth / 2; ++r) {
        const int64_t p = p0 + 2 * r;
        for (int64_t j = 0; j < kCols; ++j) {
          const uint16_t* col = j < cols ? b + b_cols[j0 + j] : nullptr;
          o[r * kDepth + 2 * j] = col != nullptr && p < k ? col[p] : 0;
          o[r * kDepth + 2 * j + 1] = col != nullptr && p + 1 < k ? col[p + 1] : 0;
        }
      }
    }
  }
}

template class ScopedFns<AmxGemmFns>;

const AmxGemmFns* active_amx_gemm_fns() {
  return active_copy<AmxGemmFns>({{CpuIsa::AmxBf16, &amx_bf16::amx_gemm_fns}});
}

bool amx_gemm_is_native() {
  const AmxGemmFns* fns = active_amx_gemm_fns();
  return fns != nullptr && fns == &amx_bf16::amx_gemm_fns();
}

bool has_amx_gemm() { return active_amx_gemm_fns() != nullptr; }

void amx_gemm(const AmxGemmArgs& args) {
  const AmxGemmFns* fns = active_amx_gemm_fns();
  if (fns == nullptr) {
    throw std::logic_error(std::string("amx_gemm: AMX is not active (") +
                           (amx_usable() ? "capped by COLONY_CPU_ISA" : amx_unusable_reason()) +
                           "); callers must check has_amx_gemm()");
  }
  if ((args.c_f32 == nullptr) == (args.c_bf16 == nullptr)) {
    throw std::invalid_argument("amx_gemm: give exactly one of c_f32 and c_bf16");
  }
  if (args.bias != nullptr && (args.c_bf16 == nullptr || args.beta != 0.0f)) {
    throw std::invalid_argument("amx_gemm: a bias row takes a bfloat16 output with beta = 0 (C is not read)");
  }
  if ((args.packed_b == nullptr) == (args.b == nullptr)) {
    throw std::invalid_argument("amx_gemm: give exactly one of packed_b and b (B unpacked)");
  }
  fns->gemm(args, thread_scratch<AmxScratch, uint16_t, 0>(
                      amx_scratch_size(args.m, args.n, args.k, args.packed_b == nullptr)));
}

}  // namespace colony::kernels::cpu
