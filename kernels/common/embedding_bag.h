// The bags of F::embedding_bag (torch.nn.functional.embedding_bag): each bag's rows of an embedding
// table reduced by sum (optionally weighted per index), mean or max, in one pass, without the
// [indices, dim] gather a composite of index_select and a segment reduction would write. The rules
// both devices share and the kernel entry points, defined in kernels/cpu/embedding_bag.cc and
// kernels/cuda/embedding_bag.cu.
//
// Bag b covers the positions [offsets[b], offsets[b + 1]) of the flat indices (the caller passes
// bags + 1 offsets, the last one the end). An index equal to padding_idx is left out of its bag:
// it adds nothing, does not count towards the mean's divisor and is never a maximum, and its row
// gets no gradient. An empty bag (or one of padding only) gives zeros.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

enum class EmbeddingBagMode : int { Sum = 0, Mean = 1, Max = 2 };

struct EmbeddingBagParams {
  int64_t bags = 0, dim = 0, num_embeddings = 0;
  EmbeddingBagMode mode = EmbeddingBagMode::Mean;
  int64_t padding_idx = -1;  // in [0, num_embeddings), or -1 for none
};

// Whether position i's index takes part in its bag.
COLONY_INLINE bool embedding_bag_counts(int64_t index, const EmbeddingBagParams& p) { return index != p.padding_idx; }

// Whether v replaces the bag's running maximum m (`first`: no maximum yet). Ties keep the first
// index; a NaN wins and stays, as torch's max.
template <typename C>
COLONY_INLINE bool embedding_bag_takes_max(C v, C m, bool first) {
  return first || (m == m && (v > m || v != v));
}

// What each counted index of a bag is multiplied by: its per-sample weight (Sum), 1 / the bag's
// count (Mean), 1 otherwise. Max's gradient goes to the maximum's row alone.
template <typename C>
COLONY_INLINE C embedding_bag_scale(const EmbeddingBagParams& p, int64_t count, C sample_weight) {
  if (p.mode == EmbeddingBagMode::Mean) return C(1) / static_cast<C>(count);
  return sample_weight;
}

// The bag holding position i: the last b with offsets[b] <= i (offsets ascending, bags + 1 of them).
COLONY_INLINE int64_t embedding_bag_of(const int64_t* offsets, int64_t bags, int64_t i) {
  int64_t lo = 0, hi = bags;  // offsets[lo] <= i < offsets[hi]
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= i) lo = mid; else hi = mid;
  }
  return lo;
}

// output [bags, dim] of `dtype`; weight [num_embeddings, dim] contiguous; indices int64 (checked
// on the CPU by the caller, on CUDA in the kernel: recorded for check_device_errors() and skipped);
// per_sample_weights of `dtype` per index, or null (Sum only). max_indices int64 [bags, dim]: the
// row each maximum came from, -1 for an empty bag (written for Max only); bag_size int64 [bags]:
// the counted indices of each bag (always written). Accumulates in compute_t<dtype>.
COLONY_KERNEL(EmbeddingBagForward, DType dtype, const void* weight, const int64_t* indices, const int64_t* offsets,
              const void* per_sample_weights, const EmbeddingBagParams& p, void* output, int64_t* max_indices,
              int64_t* bag_size);

// grad_weight [num_embeddings, dim] (every element written) from grad_output [bags, dim]: each
// counted index's row gets its bag's gradient times embedding_bag_scale (Max: each element's
// gradient goes to max_indices' row). The CPU sums in position order (the same bits for every
// thread count); CUDA adds with atomics.
COLONY_KERNEL(EmbeddingBagBackward, DType dtype, const void* grad_output, const int64_t* indices,
              const int64_t* offsets, int64_t indices_count, const void* per_sample_weights,
              const int64_t* max_indices, const int64_t* bag_size, const EmbeddingBagParams& p, void* grad_weight);

// grad_per_sample_weights [indices_count] (Sum): the dot product of position i's bag gradient with
// its weight row, 0 for padding_idx.
COLONY_KERNEL(EmbeddingBagSampleWeightsBackward, DType dtype, const void* grad_output, const void* weight,
              const int64_t* indices, const int64_t* offsets, int64_t indices_count, const EmbeddingBagParams& p,
              void* grad_per_sample_weights);

}  // namespace colony::kernels
