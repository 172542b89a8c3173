// Fused float32 attention over whole rows of keys (S <= kHeadAttentionMaxKeys): every score of a
// query row is computed before its softmax, so the softmax is never online (no running max, no
// rescaled output) and the backward computes dQ of a panel of query rows at once, with no dQ
// accumulator across key tiles. The products are register tiles of R rows by up to 4 vectors
// (16 lanes where the CPU has AVX-512, 8 on AVX2), with A's elements broadcast and B's rows loaded,
// and the rows between them (scale, mask, max, exp, dS = P (dP - D)) one pass each over vec_math.h's
// exp. Written once over vec_math.h's ISA trait (attention_head_kernels.h), in an AVX2 copy (the
// build's baseline) and an AVX-512 one (attention_head_avx512.cc), chosen at run time.
//
// Per head (b, h) only K^T and V^T are packed ([E, S] and [Ev, S], the B of S = Q K^T and
// dP = dO V^T); Q, K, V and dO are read in place, as the A (broadcast) of a product or, where
// their width is a whole number of vectors, as its B (otherwise packed into padded rows).
// Causal: a block of R query rows computes the scores of the keys its last row sees, and sums
// P V and dS K over those keys only; dV = P^T dO and dK = dS^T Q of a block of keys sum over the
// query rows from the block's first key on. kernels/common/attention.h has the algorithm; the
// 8-lane, 32 x 32-tile kernel in attention.cc keeps float64, dropout and S > kHeadAttentionMaxKeys.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/attention.h"

namespace colony::kernels::cpu {

// Keys of a head that one panel's scores hold whole: 256 (a GPT's context at width 384) makes a
// panel's scores and weights 64 KB each, in L2. Longer sequences take attention.cc's online softmax.
constexpr int64_t kHeadAttentionMaxKeys = 256;
// Query rows per panel: the forward's unit of work (tasks (b, h, panel) over the threads) and the
// backward's step through a head. At the GPT's T = 64 one panel is the whole head.
constexpr int64_t kHeadPanelRows = 64;

// Whether float32 attention `a` runs here: S at most kHeadAttentionMaxKeys, no dropout (dropout
// takes attention.cc's tiles, which draw it per weight).
bool head_attention_applies(const AttentionArgs& a);

// Float buffers on a 64-byte boundary (a 16-lane row load that straddles two cache lines costs two).
struct AlignedFloats {
  std::vector<float> storage;
  float* data = nullptr;
  // At least n elements, zeroed only when newly grown.
  float* get(int64_t n);
};

// One thread's buffers, reused across its heads and calls; packed_bh says whose K^T and V^T it holds
// (in this call).
struct HeadAttentionScratch {
  AlignedFloats kt, vt, k_rows, v_rows, q_rows, go_rows, s, dp, dk, dv, d, mask_row;
  int64_t packed_bh = -1;
};

// This thread's buffers, kept between calls as scratch.h's thread_scratch keeps its own: a training
// step repeats the same shapes, so after the first step no call allocates or zero-fills them (the
// kernels write every element they read). packed_bh is reset: a new call brings new K and V. Take
// it once per parallel_for chunk.
HeadAttentionScratch& thread_head_scratch();

// One ISA's kernels.
struct AttentionHeadFns {
  const char* isa;  // "avx2", "avx512"
  // Forward of query rows [i0, min(i0 + kHeadPanelRows, L)) of head bh: out and lse.
  void (*forward_panel)(const AttentionArgs& a, int64_t bh, int64_t i0, HeadAttentionScratch& scratch);
  // Backward of head bh: its rows of dq, dk and dv.
  void (*backward_head)(const AttentionArgs& a, int64_t bh, HeadAttentionScratch& scratch);
};

namespace avx2 {
const AttentionHeadFns& attention_head_fns();
}
namespace avx512 {  // built with -march=x86-64-v4 (attention_head_avx512.cc); call only where the CPU has it
const AttentionHeadFns& attention_head_fns();
}

// avx512's where active_cpu_isa() allows it, else avx2's.
const AttentionHeadFns& active_attention_head_fns();

// The forward and backward of float32 attention on `fns` (parallel over heads and, forward, panels).
// Require head_attention_applies(a).
void head_attention_forward(const AttentionArgs& a, const AttentionHeadFns& fns = active_attention_head_fns());
void head_attention_backward(const AttentionArgs& a, const AttentionHeadFns& fns = active_attention_head_fns());

// 16-bit attention (bfloat16, float16) where AMX is not active, on the same float32 kernels: each
// task widens its head's q, k, v (and for backward out and dO) into float32 buffers of its own,
// which stay in L1/L2 while the kernel reads them, and rounds its outputs back. attention.cc's
// tiles did the widening inside their packing but keep the online softmax; at the GPT's 64 x 32
// heads under `--amp bf16` on an AVX-512 CPU without AMX they were 16 % of the step
// (docs/benchmarks.md, "bf16 attention without AMX"). Numerics: each output is the float32 path's
// on the widened inputs, rounded once (the backward reading the rounded output, as stored).
bool widened_head_attention_applies(const AttentionArgs& a);
void widened_head_attention_forward(const AttentionArgs& a);
void widened_head_attention_backward(const AttentionArgs& a);

}  // namespace colony::kernels::cpu
