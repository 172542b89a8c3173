// Fused attention under bfloat16 on AMX for short sequences: every key of a head in one block
// (S <= kMaxKeys), so the softmax is never online (no running max, no rescaling of the output)
// and the backward computes dQ of a block of query rows at once, with no dQ accumulator across
// key tiles. The products run on attention_tiles.h (the tiles configured once per thread's run of
// heads, C stored straight into float32 rows), the float32 rows between them on
// attention_rows.h's softmax_row and softmax_grad_row (scale, mask, exponentials, dS and the
// rounding of P and dS in one pass each).
//
// Numerics as attention.cc's AMX path and PyTorch's CPU flash attention under bfloat16: products
// with float32 sums, scores, softmax statistics and D in float32, P and dS rounded to bfloat16
// before the products that take them, each output rounded once.
//
// Per head (b, h), the backward packs K^T, V^T (the B of S = Q K^T and dP = dO V^T) and K (the B of
// dQ = dS K) once, Q and dO once per group of up to kGroupRows query rows (the B of dK = dS^T Q and
// dV = P^T dO); per block of 32 query rows it makes three products (S, dP, dQ), and per group and
// 32 keys two (dV, dK, reading P and dS transposed). kernels/common/attention.h has the algorithm.
#pragma once

#include <cstdint>

#include "kernels/common/attention.h"

namespace colony::kernels::cpu {

constexpr int64_t kShortAttentionMaxKeys = 256;

// Whether the bfloat16 attention `a` runs here: AMX active (has_amx_gemm()), S and both head dims
// at most 256, no dropout (dropout takes attention.cc's AMX path, which draws it per weight).
bool short_amx_attention_applies(const AttentionArgs& a);

// Forward and backward under bfloat16; every stride of AttentionArgs honoured. Require
// short_amx_attention_applies(a).
void short_amx_attention_forward(const AttentionArgs& a);
void short_amx_attention_backward(const AttentionArgs& a);

}  // namespace colony::kernels::cpu
