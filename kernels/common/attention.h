// Fused scaled-dot-product attention (torch.nn.functional.scaled_dot_product_attention): the kernel
// entry points, declared once for both devices (kernel.h), defined in kernels/cpu/attention.cc and
// kernels/cuda/attention.cu, and the per-element rules both devices share (causal mask, dropout).
//
// Layout. The leading (batch) dims of q, k, v, the mask and the output are flattened to two,
// [batch, heads] (the front, ops/attention_ops.cc, broadcasts them and finds strides for that
// view, copying only when no such strides exist). Within one (b, h), q is [L, E], k [S, E], v
// [S, Ev] with unit column stride and the row strides given; a stride of 0 broadcasts.
//
// Algorithm (FlashAttention-2). Forward: per (b, h, tile of query rows), key/value tiles are
// streamed while each row keeps its running max m and sum l of exp(s - m); the output is
// rescaled when m grows. The [L, S] matrix of scores never exists; what is saved for backward is
// the output and lse = m + log(l) per row (scores include the scale). Backward recomputes
// p = exp(s - lse) tile by tile, with D = rowsum(dO * O):
//   dV += P~^T dO,  dP~ = dO V^T,  dS = P * (dP~ * Z - D),  dQ += scale dS K,  dK += scale dS^T Q
// where Z is the dropout keep mask scaled by 1/(1-p) and P~ = P * Z. A row every key of which is
// masked gives a zero output and zero gradients, as PyTorch's CPU kernels do (lse = -inf marks it).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/philox.h"
#include "kernels/common/random_fill.h"

namespace colony::kernels {

// Element strides of a [batch, heads, rows, cols] view; cols stride 1 for q, k, v, dO.
struct AttentionStrides {
  int64_t b = 0, h = 0, row = 0, col = 1;
};

struct AttentionArgs {
  DType dtype = DType::Float32;  // of q, k, v, out and the gradients; float32 accumulation for 16-bit
  int64_t batch = 1, heads = 1, L = 0, S = 0, E = 0, Ev = 0;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  AttentionStrides qs, ks, vs;
  // Additive mask in the compute dtype (float32, or float64 for float64 inputs); a boolean mask
  // arrives as 0 / -inf. nullptr: none.
  const void* mask = nullptr;
  AttentionStrides ms;
  bool causal = false;  // key j is masked for query i when j > i (top-left aligned, as PyTorch)
  double scale = 1.0;
  double dropout_p = 0.0;
  PhiloxArgs philox;  // used when dropout_p > 0
  // Forward outputs (backward inputs): out [batch, heads, L, Ev] in dtype, lse contiguous
  // [batch * heads, L] in the compute dtype (float64 keeps gradients exact to 1e-10).
  void* out = nullptr;
  void* lse = nullptr;
  // Backward only: grad_out [batch, heads, L, Ev] like out; dq [batch, heads, L, E], dk [batch,
  // heads, S, E], dv [batch, heads, S, Ev] in dtype (the front sums broadcast k and v back).
  const void* grad_out = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  // Strides of out, grad_out, dq, dk and dv (unit column stride). The CPU's kernels honour any
  // (every dtype, the bfloat16 AMX paths included); the CUDA kernels read and write these tensors
  // contiguous only, so there the front passes contiguous ones. Set them always.
  AttentionStrides os, gs, dqs, dks, dvs;
  // CUDA backward scratch, zeroed by the front: dQ accumulated across key tiles in the compute
  // dtype [batch * heads, L, E], and D = rowsum(dO * O) [batch * heads, L]. Unused on the CPU.
  void* dq_accum = nullptr;
  void* delta = nullptr;
};

// The first element of head bh = (b, h) = (bh / heads, bh % heads) in a tensor of strides s: the
// CPU kernels' view of one head.
template <typename P>
inline P* head_base(P* base, const AttentionStrides& s, const AttentionArgs& a, int64_t bh) {
  return base + (bh / a.heads) * s.b + (bh % a.heads) * s.h;
}

COLONY_KERNEL(AttentionForward, const AttentionArgs& args);
COLONY_KERNEL(AttentionBackward, const AttentionArgs& args);

// Philox blocks the dropout of one call draws: one 32-bit word per attention weight.
COLONY_INLINE uint64_t attention_dropout_blocks(int64_t batch_heads, int64_t L, int64_t S) {
  return static_cast<uint64_t>((batch_heads * L * S + 3) / 4);
}

// The dropout factor of weight (bh, i, j): 0 when dropped, 1 / (1 - p) when kept. Both devices and
// both directions compute it from (seed, offset) alone, so backward needs no stored mask.
COLONY_INLINE float attention_dropout_factor(uint64_t seed, uint64_t offset, int64_t bh, int64_t i, int64_t j,
                                             int64_t L, int64_t S, float keep, float inv_keep) {
  const uint64_t n = static_cast<uint64_t>((bh * L + i) * S + j);
  const Philox4 r = philox4x32_10(seed, offset + n / 4);
  return philox_uniform_float(r.v[n % 4]) < keep ? inv_keep : 0.0f;
}

}  // namespace colony::kernels
