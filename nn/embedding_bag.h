// nn::EmbeddingBag and F::embedding_bag (torch.nn.EmbeddingBag): the bags of a lookup table reduced
// by sum, mean or max without the per-index rows being materialized (one fused kernel each way,
// kernels/common/embedding_bag.h), for recommenders' multi-hot features and bag-of-words models.
//
//   nn::EmbeddingBag bag(nn::EmbeddingBagOptions(100000, 64).mode(nn::EmbeddingBagMode::Sum));
//   Tensor pooled = bag.forward(ids, offsets);  // ids 1-D, bag b = ids[offsets[b] : offsets[b + 1]]
//
// Input is 1-D int64/int32 indices with 1-D offsets (each bag's first position;
// include_last_offset: the last offset is the end of the last bag, as in the CSR format), or 2-D
// [B, L] (B bags of L indices, no offsets). per_sample_weights (of the input's shape) weigh each
// index in Sum mode only, as torch's; padding_idx (negative counts from the end) is left out of its
// bag: not summed, not counted by Mean, never the max, no gradient. An empty bag gives zeros.
// Gradients for the weight (summed in position order on the CPU: the same bits at any thread
// count) and for per_sample_weights.
//
// Differences from torch: max_norm, norm_type and scale_grad_by_freq are not offered (nn::Embedding
// has none of them either), and sparse=true is refused: gradients are dense. Offsets must be
// ascending (torch fails inside the kernel otherwise). With include_last_offset, bag b is always
// [offsets[b], offsets[b + 1]); torch's mean divides its last bag by the count up to the end of the
// input when offsets[-1] is short of it. 1-D offsets on CUDA are read on the host (one
// synchronization) to be checked. A 2-D input with no columns gives B empty bags (zeros), where
// torch fails.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {

enum class EmbeddingBagMode { Sum, Mean, Max };

namespace functional {

struct EmbeddingBagFuncOptions {
  COLONY_ARG(Tensor, offsets);
  COLONY_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  COLONY_ARG(bool, sparse) = false;  // refused: Colony's gradients are dense
  COLONY_ARG(Tensor, per_sample_weights);
  COLONY_ARG(bool, include_last_offset) = false;
  COLONY_ARG(std::optional<int64_t>, padding_idx);
};
// input int64/int32 [n] with options.offsets(), or [B, L]; weight [num_embeddings, dim] floating ->
// [bags, dim]. torch's checks and messages.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options = {});

}  // namespace functional

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  COLONY_ARG(int64_t, num_embeddings);
  COLONY_ARG(int64_t, embedding_dim);
  COLONY_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  COLONY_ARG(bool, sparse) = false;  // refused
  COLONY_ARG(bool, include_last_offset) = false;
  COLONY_ARG(std::optional<int64_t>, padding_idx);
};

// libtorch's EmbeddingBagFromPretrainedOptions.
struct EmbeddingBagFromPretrainedOptions {
  COLONY_ARG(bool, freeze) = true;
  COLONY_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  COLONY_ARG(bool, sparse) = false;  // refused
  COLONY_ARG(bool, include_last_offset) = false;
  COLONY_ARG(std::optional<int64_t>, padding_idx);
};

// Parameter "weight" [num_embeddings, embedding_dim] drawn from N(0, 1) with the padding_idx row
// zeroed, as torch's.
class EmbeddingBag : public Module {
  COLONY_CLONEABLE
 public:
  explicit EmbeddingBag(const EmbeddingBagOptions& options);
  EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBag(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  // The table is `embeddings` itself (its storage, not a copy), trained only without freeze; the
  // padding_idx row is left as given, as torch's.
  static std::shared_ptr<EmbeddingBag> from_pretrained(const Tensor& embeddings,
                                                       const EmbeddingBagFromPretrainedOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& offsets = Tensor(), const Tensor& per_sample_weights = Tensor());
  void reset_parameters();
  std::string extra_repr() const override;

  EmbeddingBagOptions options;  // padding_idx stored non-negative
  Tensor weight;

 private:
  EmbeddingBag(const EmbeddingBagOptions& options, const Tensor& table, bool requires_grad);
  void check_options();
};

}  // namespace colony::nn
