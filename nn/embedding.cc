#include "nn/embedding.h"

#include <stdexcept>

#include "autograd/nn_ops.h"
#include "nn/init.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::nn {
namespace functional {

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options) {
  return colony::embedding(input, weight, options.padding_idx());
}

}  // namespace functional

Embedding::Embedding(const EmbeddingOptions& o) : options(o) {
  check_options();
  weight = register_parameter("weight", raw::empty({o.num_embeddings(), o.embedding_dim()}));
  reset_parameters();
}

Embedding::Embedding(const EmbeddingOptions& o, const Tensor& table, bool requires_grad) : options(o) {
  check_options();
  weight = register_parameter("weight", table, requires_grad);
}

void Embedding::check_options() {
  const EmbeddingOptions& o = options;
  if (o.num_embeddings() <= 0 || o.embedding_dim() <= 0) {
    throw std::invalid_argument("Embedding: num_embeddings and embedding_dim must be positive, got " +
                                std::to_string(o.num_embeddings()) + " and " + std::to_string(o.embedding_dim()));
  }
  if (o.padding_idx()) {
    const int64_t p = *o.padding_idx(), n = o.num_embeddings();
    if (p < -n || p >= n) {
      throw std::invalid_argument("Embedding: padding_idx " + std::to_string(p) + " must be within [-" +
                                  std::to_string(n) + ", " + std::to_string(n) + ") (num_embeddings " +
                                  std::to_string(n) + ")");
    }
    if (p < 0) options.padding_idx(p + n);
  }
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    Tensor row = raw::select(weight, 0, *options.padding_idx());
    raw::fill_(row, 0.0);
  }
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& embeddings, bool freeze,
                                                      std::optional<int64_t> padding_idx) {
  if (!embeddings.defined() || embeddings.dim() != 2) {
    throw std::invalid_argument("Embedding::from_pretrained: embeddings must be a 2-D tensor [num_embeddings, "
                                "embedding_dim], got " +
                                (embeddings.defined() ? shape_str(embeddings.sizes()) : std::string("an undefined tensor")));
  }
  if (!embeddings.is_floating_point()) {
    throw std::invalid_argument(std::string("Embedding::from_pretrained: embeddings must be floating, got ") +
                                dtype_name(embeddings.dtype()));
  }
  // A new handle on the same storage (PyTorch's Parameter(embeddings)): the caller's tensor keeps
  // its own requires_grad and history. (The constructor is private, so no make_shared.)
  return std::shared_ptr<Embedding>(
      new Embedding(EmbeddingOptions(embeddings.size(0), embeddings.size(1)).padding_idx(padding_idx),
                    embeddings.detach(), /*requires_grad=*/!freeze));
}

Tensor Embedding::forward(const Tensor& input) { return colony::embedding(input, weight, options.padding_idx()); }

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim());
  if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
  return s;
}

}  // namespace colony::nn
