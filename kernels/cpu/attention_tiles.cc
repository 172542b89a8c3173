// attention_tiles.h: the copy over amx_gemm and the choice between it and the native one.
#include "kernels/cpu/attention_tiles.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/cpu/amx_gemm.h"

namespace colony::kernels::cpu {
namespace {

void no_tiles() {}

// One amx_gemm per column tile of 16, as packed B's column tiles are b_steps apart whatever the
// product's depth; A's strides say whether it is transposed.
void product_over_amx_gemm(const AttentionTileProduct& p) {
  const int64_t b_steps = p.b_steps > 0 ? p.b_steps : p.k / 32;
  for (int64_t j = 0; j < p.n; j += 16) {
    if (p.k == 0) {
      if (!p.accumulate) {
        for (int64_t i = 0; i < p.m; ++i) std::fill(p.c + i * p.ldc + j, p.c + i * p.ldc + j + 16, 0.0f);
      }
      continue;
    }
    AmxGemmArgs g;
    g.m = p.m;
    g.n = 16;
    g.k = p.k;
    g.a = p.a;
    g.a_row_stride = p.a_transposed ? 1 : p.lda;
    g.a_col_stride = p.a_transposed ? p.lda : 1;
    g.packed_b = p.packed_b + (j / 16) * b_steps * 512;
    g.c_f32 = p.c + j;
    g.ldc = p.ldc;
    g.accumulate = p.accumulate;
    amx_gemm(g);
  }
}

}  // namespace

const AttentionTileFns& attention_tile_fns_over_amx_gemm() {
  static const AttentionTileFns fns{"amx_gemm", &no_tiles, &no_tiles, &product_over_amx_gemm};
  return fns;
}

const AttentionTileFns& active_attention_tile_fns() {
  if (!has_amx_gemm()) throw std::logic_error("attention tiles: AMX is not active; callers must check has_amx_gemm()");
  return amx_gemm_is_native() ? amx_bf16::attention_tile_fns() : attention_tile_fns_over_amx_gemm();
}

}  // namespace colony::kernels::cpu
