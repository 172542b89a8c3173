// The 16 x 16 transpose of 32-bit words held in 16 AVX-512 registers, shared by the AMX packing of
// column-major operands: amx_gemm.cc's B tiles (a linear layer's W^T) and amx_gemm_tiles.h's A
// tiles (A^T @ B). Word i of r[j] becomes word j of output row i, stored at out + 32 i (a tile row:
// 32 bfloat16). Unpacks of 32-bit then 64-bit pairs, then 128-bit lane shuffles: 48 shuffles for
// 256 words, where the scalar copy moved them one by one.
//
// `static` on purpose: amx_gemm_tiles.h's AMX copy includes this, and a weak (inline) symbol built
// with its flags could be the one the linker keeps for every caller (small_gemm_isa_symbols_test).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace colony::kernels::cpu {

// GCC 12 warns of its own intrinsics' undefined vectors (_mm512_undefined_epi32 inside
// _mm512_unpackhi_epi32 and the like): a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// r is overwritten.
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void transpose_16x16_words(__m512i r[16],
                                                                                                   uint16_t* out) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + c], 128-bit lane l: words 4i to 4i + 3 of output row 4l + c.
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int c = 0; c < 4; ++c) {
    const __m512i u0 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x88), u1 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xdd);
    const __m512i u2 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x88);
    const __m512i u3 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xdd);
    _mm512_storeu_si512(out + c * 32, _mm512_shuffle_i32x4(u0, u2, 0x88));
    _mm512_storeu_si512(out + (8 + c) * 32, _mm512_shuffle_i32x4(u0, u2, 0xdd));
    _mm512_storeu_si512(out + (4 + c) * 32, _mm512_shuffle_i32x4(u1, u3, 0x88));
    _mm512_storeu_si512(out + (12 + c) * 32, _mm512_shuffle_i32x4(u1, u3, 0xdd));
  }
}

#pragma GCC diagnostic pop

}  // namespace colony::kernels::cpu
