// nn::Embedding and F::embedding: a lookup table of num_embeddings rows of embedding_dim values,
// indexed by integer tensors of any shape (torch.nn.Embedding). Tying its weight to a Linear head
// (GPT's wte / lm_head): Module::replace_parameter, nn/module.h.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {
namespace functional {

struct EmbeddingFuncOptions {
  // The row that receives no gradient (negative counts from the end), as F.embedding's padding_idx.
  COLONY_ARG(std::optional<int64_t>, padding_idx);
};
// input int64 or int32 indices of any shape, weight [num_embeddings, dim] -> input.shape + [dim].
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options = {});

}  // namespace functional

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  COLONY_ARG(int64_t, num_embeddings);
  COLONY_ARG(int64_t, embedding_dim);
  COLONY_ARG(std::optional<int64_t>, padding_idx);
};

// Parameter "weight" [num_embeddings, embedding_dim], drawn from N(0, 1) as PyTorch's, with the
// padding_idx row zeroed; that row gets no gradient.
class Embedding : public Module {
  COLONY_CLONEABLE
 public:
  explicit Embedding(const EmbeddingOptions& options);
  Embedding(int64_t num_embeddings, int64_t embedding_dim) : Embedding(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  // torch.nn.Embedding.from_pretrained: the table is `embeddings` [num_embeddings, embedding_dim]
  // itself (its storage, device and dtype, not a copy: writes to either show in both), trained
  // only without freeze. padding_idx's row gets no gradient and, unlike the constructor's, is
  // left as given (PyTorch does not zero it here either).
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& embeddings, bool freeze = true,
                                                    std::optional<int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  EmbeddingOptions options;  // padding_idx stored non-negative
  Tensor weight;

 private:
  // from_pretrained's: `table` registered as the weight as it is, no initialization drawn (so the
  // global generator's stream is the same as without the call, as torch's).
  Embedding(const EmbeddingOptions& options, const Tensor& table, bool requires_grad);
  void check_options();
};

}  // namespace colony::nn
