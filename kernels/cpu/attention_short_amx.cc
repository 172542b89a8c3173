// attention_short_amx.h: the whole-head bfloat16 kernels.
#include "kernels/cpu/attention_short_amx.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/attention_rows.h"
#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

// Query rows per block: two 16-row A tiles.
constexpr int64_t kBlockRows = 32;
// Backward: query rows whose P and dS (bfloat16, up to kShortAttentionMaxKeys wide: 128 KB each) are
// kept for the dV and dK products of a group; 256 rows make those products 8 tile steps deep (the
// tiles' limit, kAttentionTileMaxDepth) and take every row of a GPT's context of up to 256 at once.
constexpr int64_t kGroupRows = kAttentionTileMaxDepth;

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

const uint16_t* bits_of(const BFloat16* p) { return reinterpret_cast<const uint16_t*>(p); }
uint16_t* bits_of(BFloat16* p) { return reinterpret_cast<uint16_t*>(p); }

// Zero-initialised elements on a 64-byte boundary: tile rows that straddle two cache lines load at
// half speed (amx_gemm_tiles.h).
template <typename T>
struct Buffer {
  std::vector<T> storage;
  T* data;
  explicit Buffer(int64_t n) : storage(n + 64 / sizeof(T)) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + (64 - p % 64) % 64 / sizeof(T);
  }
};

// The A operand of `rows` rows of a bfloat16 matrix (row stride `stride`, `cols` columns): read in
// place where the rows fill whole tiles (16 rows, 32 columns at a time), else copied into `pad`
// (zero-padded to 16 rows and 32 columns). Returns the rows and sets their stride.
const uint16_t* rows_operand(const BFloat16* src, int64_t stride, int64_t rows, int64_t cols, uint16_t* pad,
                             int64_t& ld) {
  if (cols % 32 == 0 && rows % 16 == 0) {
    ld = stride;
    return bits_of(src);
  }
  ld = round_up(cols, 32);
  const int64_t padded = round_up(rows, 16);
  for (int64_t r = 0; r < padded; ++r) {
    uint16_t* d = pad + r * ld;
    const int64_t n = r < rows ? cols : 0;
    if (n > 0) std::memcpy(d, src + r * stride, n * sizeof(uint16_t));
    std::memset(d + n, 0, (ld - n) * sizeof(uint16_t));
  }
  return pad;
}

// Row i's additive mask (its first n columns), contiguous: in place, or gathered into `gathered`.
const float* mask_row(const AttentionArgs& a, const float* mask, int64_t i, int64_t n, std::vector<float>& gathered) {
  if (mask == nullptr) return nullptr;
  const float* m = mask + i * a.ms.row;
  if (a.ms.col == 1) return m;
  for (int64_t c = 0; c < n; ++c) gathered[c] = m[c * a.ms.col];
  return gathered.data();
}

// One (b, h)'s inputs.
struct HeadInputs {
  const BFloat16 *q, *k, *v;
  const float* mask;
  HeadInputs(const AttentionArgs& a, int64_t bh)
      : q(head_base(static_cast<const BFloat16*>(a.q), a.qs, a, bh)),
        k(head_base(static_cast<const BFloat16*>(a.k), a.ks, a, bh)),
        v(head_base(static_cast<const BFloat16*>(a.v), a.vs, a, bh)),
        mask(a.mask ? head_base(static_cast<const float*>(a.mask), a.ms, a, bh) : nullptr) {}
};

AttentionTileProduct product(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, bool a_transposed,
                             const uint16_t* packed_b, int64_t b_steps, float* c, int64_t ldc, bool accumulate) {
  return {m, n, k, a, lda, a_transposed, packed_b, b_steps, c, ldc, accumulate};
}

}  // namespace

bool short_amx_attention_applies(const AttentionArgs& a) {
  return a.dtype == DType::BFloat16 && a.dropout_p == 0.0 && a.S <= kShortAttentionMaxKeys &&
         a.E <= kAttentionTileMaxDepth && a.Ev <= kAttentionTileMaxDepth && has_amx_gemm();
}

void short_amx_attention_forward(const AttentionArgs& a) {
  const int64_t E = a.E, Ev = a.Ev, S = a.S, L = a.L;
  const int64_t E32 = round_up(E, 32), S16 = round_up(S, 16), S32 = round_up(S, 32), Ev16 = round_up(Ev, 16);
  const int64_t q_blocks = (L + kBlockRows - 1) / kBlockRows;
  const float scale = static_cast<float>(a.scale);
  const AttentionTileFns& tiles = active_attention_tile_fns();
  const AttentionRowFns& row_fns = active_attention_row_fns();
  parallel_for(a.batch * a.heads * q_blocks, 1, [&](int64_t begin, int64_t end) {
    // K^T (the B of S = Q K^T, [E, S]) and V (the B of O = P V, [S, Ev]), packed once per head.
    Buffer<uint16_t> kt(amx_packed_b_size(E, S)), vp(amx_packed_b_size(S, Ev));
    Buffer<uint16_t> p(kBlockRows * S32), q_pad(kBlockRows * E32);
    Buffer<float> s(kBlockRows * S16), o(kBlockRows * Ev16);
    std::vector<float> gathered(a.mask ? S : 0);
    float row_max[kBlockRows], row_sum[kBlockRows];
    int64_t packed_bh = -1;
    tiles.begin();
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bh = task / q_blocks, i0 = (task % q_blocks) * kBlockRows;
      const int64_t rows = std::min(kBlockRows, L - i0), m = round_up(rows, 16);
      const HeadInputs h(a, bh);
      if (bh != packed_bh) {
        amx_pack_b(E, S, bits_of(h.k), 1, a.ks.row, kt.data);
        amx_pack_b(S, Ev, bits_of(h.v), a.vs.row, 1, vp.data);
        packed_bh = bh;
      }
      // Causal: the keys the block's last row sees, in whole tiles of columns (scores) and of depth
      // (P V: P is zero past each row's own keys).
      const int64_t seen = a.causal ? std::min(S, i0 + rows) : S, depth = round_up(seen, 32);
      int64_t ldq = 0;
      const uint16_t* qa = rows_operand(h.q + i0 * a.qs.row, a.qs.row, rows, E, q_pad.data, ldq);
      tiles.product(product(m, round_up(seen, 16), E32, qa, ldq, false, kt.data, 0, s.data, S16, false));
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r, n = a.causal ? std::min(S, i + 1) : S;
        row_sum[r] = row_fns.softmax_row(s.data + r * S16, n, depth, scale, mask_row(a, h.mask, i, n, gathered),
                                         p.data + r * S32, &row_max[r]);
      }
      tiles.product(product(m, Ev16, depth, p.data, S32, false, vp.data, S32 / 32, o.data, Ev16, false));
      BFloat16* out = head_base(static_cast<BFloat16*>(a.out), a.os, a, bh);
      float* lse = static_cast<float*>(a.lse) + bh * L;
      for (int64_t r = 0; r < rows; ++r) {
        const bool empty = row_sum[r] == 0.0f;  // every key masked: a zero output, lse = -inf
        row_fns.scale_round_row(o.data + r * Ev16, Ev, empty ? 0.0f : 1.0f / row_sum[r],
                                bits_of(out + (i0 + r) * a.os.row));
        lse[i0 + r] = empty ? -std::numeric_limits<float>::infinity() : row_max[r] + std::log(row_sum[r]);
      }
    }
    tiles.end();
  });
}

void short_amx_attention_backward(const AttentionArgs& a) {
  const int64_t E = a.E, Ev = a.Ev, S = a.S, L = a.L;
  const int64_t E16 = round_up(E, 16), E32 = round_up(E, 32), Ev16 = round_up(Ev, 16), Ev32 = round_up(Ev, 32);
  const int64_t S16 = round_up(S, 16), S32 = round_up(S, 32);
  const int64_t group = std::min(L, kGroupRows), group32 = round_up(group, 32);
  const float scale = static_cast<float>(a.scale);
  const AttentionTileFns& tiles = active_attention_tile_fns();
  const AttentionRowFns& row_fns = active_attention_row_fns();
  parallel_for(a.batch * a.heads, 1, [&](int64_t begin, int64_t end) {
    // Per head: K^T, V^T (the B of S = Q K^T and dP = dO V^T) and K (the B of dQ = dS K); per group
    // of query rows: Q and dO (the B of dK = dS^T Q and dV = P^T dO), and P and dS as rows.
    Buffer<uint16_t> kt(amx_packed_b_size(E, S)), vt(amx_packed_b_size(Ev, S)), kp(amx_packed_b_size(S, E));
    Buffer<uint16_t> qp(amx_packed_b_size(group, E)), dop(amx_packed_b_size(group, Ev));
    Buffer<uint16_t> pb(group32 * S32), dsb(group32 * S32), pad(kBlockRows * std::max(E32, Ev32));
    Buffer<float> s(kBlockRows * S16), dp(kBlockRows * S16), dq(kBlockRows * E16), dk(S32 * E16), dv(S32 * Ev16);
    std::vector<float> gathered(a.mask ? S : 0);
    tiles.begin();
    for (int64_t bh = begin; bh < end; ++bh) {
      const HeadInputs h(a, bh);
      const BFloat16* go = head_base(static_cast<const BFloat16*>(a.grad_out), a.gs, a, bh);
      const BFloat16* out = head_base(static_cast<const BFloat16*>(a.out), a.os, a, bh);
      const float* lse = static_cast<const float*>(a.lse) + bh * L;
      BFloat16* dq_out = head_base(static_cast<BFloat16*>(a.dq), a.dqs, a, bh);
      amx_pack_b(E, S, bits_of(h.k), 1, a.ks.row, kt.data);
      amx_pack_b(Ev, S, bits_of(h.v), 1, a.vs.row, vt.data);
      amx_pack_b(S, E, bits_of(h.k), a.ks.row, 1, kp.data);
      for (int64_t g0 = 0; g0 < L; g0 += group) {
        const int64_t rows_g = std::min(group, L - g0), steps_g = round_up(rows_g, 32) / 32;
        amx_pack_b(rows_g, E, bits_of(h.q + g0 * a.qs.row), a.qs.row, 1, qp.data);
        amx_pack_b(rows_g, Ev, bits_of(go + g0 * a.gs.row), a.gs.row, 1, dop.data);
        // Rows past L in the last step: zeros, as the depth of dV and dK runs over them.
        std::memset(pb.data + rows_g * S32, 0, (steps_g * 32 - rows_g) * S32 * sizeof(uint16_t));
        std::memset(dsb.data + rows_g * S32, 0, (steps_g * 32 - rows_g) * S32 * sizeof(uint16_t));
        for (int64_t i0 = g0; i0 < g0 + rows_g; i0 += kBlockRows) {
          const int64_t rows = std::min(kBlockRows, g0 + rows_g - i0), m = round_up(rows, 16);
          const int64_t seen = a.causal ? std::min(S, i0 + rows) : S, depth = round_up(seen, 32);
          int64_t ld = 0;
          const uint16_t* qa = rows_operand(h.q + i0 * a.qs.row, a.qs.row, rows, E, pad.data, ld);
          tiles.product(product(m, round_up(seen, 16), E32, qa, ld, false, kt.data, 0, s.data, S16, false));
          const uint16_t* ga = rows_operand(go + i0 * a.gs.row, a.gs.row, rows, Ev, pad.data, ld);
          tiles.product(product(m, round_up(seen, 16), Ev32, ga, ld, false, vt.data, 0, dp.data, S16, false));
          uint16_t* p_rows = pb.data + (i0 - g0) * S32;
          uint16_t* ds_rows = dsb.data + (i0 - g0) * S32;
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = i0 + r, n = a.causal ? std::min(S, i + 1) : S;
            const float d = row_fns.dot_bf16_row(bits_of(go + i * a.gs.row), bits_of(out + i * a.os.row), Ev);
            row_fns.softmax_grad_row(s.data + r * S16, dp.data + r * S16, n, S32, scale,
                                     mask_row(a, h.mask, i, n, gathered), lse[i], d, p_rows + r * S32,
                                     ds_rows + r * S32);
          }
          // dQ = scale dS K over the keys the block sees, whole for these rows.
          tiles.product(product(m, E16, depth, ds_rows, S32, false, kp.data, S32 / 32, dq.data, E16, false));
          for (int64_t r = 0; r < rows; ++r) {
            row_fns.scale_round_row(dq.data + r * E16, E, scale, bits_of(dq_out + (i0 + r) * a.dqs.row));
          }
        }
        // dV += P^T dO and dK += dS^T Q over the group's rows, 32 keys at a time; causal: from the
        // first block of rows that sees the keys (the rows above weigh them 0).
        for (int64_t j0 = 0; j0 < S16; j0 += 32) {
          const int64_t keys = std::min<int64_t>(32, S16 - j0);
          const int64_t first = a.causal ? std::max<int64_t>(0, j0 - g0) / 32 : 0;
          const int64_t steps = std::max<int64_t>(0, steps_g - first);
          const int64_t at = first * 32 * S32 + j0;
          tiles.product(product(keys, Ev16, steps * 32, pb.data + at, S32, true, dop.data + first * 512, steps_g,
                                dv.data + j0 * Ev16, Ev16, g0 > 0));
          tiles.product(product(keys, E16, steps * 32, dsb.data + at, S32, true, qp.data + first * 512, steps_g,
                                dk.data + j0 * E16, E16, g0 > 0));
        }
      }
      BFloat16* dk_out = head_base(static_cast<BFloat16*>(a.dk), a.dks, a, bh);
      BFloat16* dv_out = head_base(static_cast<BFloat16*>(a.dv), a.dvs, a, bh);
      for (int64_t j = 0; j < S; ++j) {
        row_fns.scale_round_row(dk.data + j * E16, E, scale, bits_of(dk_out + j * a.dks.row));
        row_fns.scale_round_row(dv.data + j * Ev16, Ev, 1.0f, bits_of(dv_out + j * a.dvs.row));
      }
    }
    tiles.end();
  });
}

}  // namespace colony::kernels::cpu
