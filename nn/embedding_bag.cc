#include "nn/embedding_bag.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "nn/init.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::nn {
namespace {

const char* mode_name(EmbeddingBagMode m) {
  switch (m) {
    case EmbeddingBagMode::Sum: return "sum";
    case EmbeddingBagMode::Mean: return "mean";
    case EmbeddingBagMode::Max: return "max";
  }
  return "?";
}

raw::EmbeddingBagMode kernel_mode(EmbeddingBagMode m) {
  switch (m) {
    case EmbeddingBagMode::Sum: return raw::EmbeddingBagMode::Sum;
    case EmbeddingBagMode::Mean: return raw::EmbeddingBagMode::Mean;
    case EmbeddingBagMode::Max: return raw::EmbeddingBagMode::Max;
  }
  return raw::EmbeddingBagMode::Mean;
}

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

void refuse_sparse(bool sparse) {
  if (sparse) {
    fail("embedding_bag: sparse=true (a sparse gradient for the weight) is not supported: Colony has no sparse "
         "tensors, and the weight's gradient is dense");
  }
}

// padding_idx within [-num, num), made non-negative; -1 for none (torch's message).
int64_t normalized_padding(std::optional<int64_t> padding_idx, int64_t num) {
  if (!padding_idx) return -1;
  const int64_t p = *padding_idx;
  if (p < -num || p >= num) {
    fail("padding_idx must be within the number of embeddings, -" + std::to_string(num) + " through " +
         std::to_string(num - 1) + ", but got " + std::to_string(p));
  }
  return p < 0 ? p + num : p;
}

}  // namespace

namespace functional {

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options) {
  refuse_sparse(options.sparse());
  if (!input.defined() || !weight.defined()) fail("embedding_bag: expected defined input (indices) and weight tensors");
  if (weight.dim() != 2) {
    fail("embedding_bag: expected weight of shape [num_embeddings, embedding_dim], got " + shape_str(weight.sizes()));
  }
  if (!weight.is_floating_point()) {
    fail(std::string("embedding_bag: expected a floating weight, got ") + dtype_name(weight.dtype()));
  }
  if (input.dtype() != kInt64 && input.dtype() != kInt32) {
    fail(std::string("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
                     "but got ") + dtype_name(input.dtype()) + " instead (while checking arguments for embedding_bag)");
  }
  if (input.device() != weight.device()) {
    fail("embedding_bag: indices are on " + input.device().str() + " but weight is on " + weight.device().str());
  }
  const Tensor& psw = options.per_sample_weights();
  if (psw.defined()) {
    if (options.mode() != EmbeddingBagMode::Sum) {
      fail(std::string("embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
                       "mode='sum' (got mode='") + mode_name(options.mode()) + "'). Please open a feature request on GitHub.");
    }
    if (psw.sizes() != input.sizes()) {
      fail("embedding_bag: If per_sample_weights (" + shape_str(psw.sizes()) +
           ") is not None, then it must have the same shape as the input (" + shape_str(input.sizes()) + ")");
    }
    if (psw.dtype() != weight.dtype()) {
      fail(std::string("Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                       "'per_sample_weights'; but type ") + dtype_name(weight.dtype()) + " does not equal " +
           dtype_name(psw.dtype()) + " (while checking arguments for embedding_bag)");
    }
    if (psw.device() != weight.device()) {
      fail("embedding_bag: per_sample_weights are on " + psw.device().str() + " but weight is on " + weight.device().str());
    }
  }
  const int64_t num = weight.size(0);
  const int64_t padding = normalized_padding(options.padding_idx(), num);
  std::vector<int64_t> bounds;  // bags + 1 ascending positions
  int64_t n = 0;
  if (input.dim() == 2) {
    if (options.offsets().defined()) {
      fail("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
           "sequences. However, found offsets of type Tensor");
    }
    const int64_t bags = input.size(0), length = input.size(1);
    n = bags * length;
    for (int64_t b = 0; b <= bags; ++b) bounds.push_back(b * length);
  } else if (input.dim() == 1) {
    const Tensor& offsets = options.offsets();
    if (!offsets.defined()) fail("offsets has to be a 1D Tensor but got None");
    if (offsets.dim() != 1) fail("offsets has to be a 1D Tensor");
    if (offsets.is_floating_point() || offsets.dtype() == kBool) {
      fail(std::string("Expected tensor for argument #2 'offsets' to have one of the following scalar types: Long, Int; "
                       "but got ") + dtype_name(offsets.dtype()) + " instead (while checking arguments for embedding_bag)");
    }
    n = input.size(0);
    const Tensor host = raw::contiguous(raw::to(offsets, kCPU, kInt64));
    const int64_t* o = host.data_ptr<int64_t>();
    bounds.assign(o, o + host.numel());
    if (!bounds.empty() && bounds[0] != 0) {
      fail("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, "
           "got " + std::to_string(bounds[0]));
    }
    if (!bounds.empty() && bounds.back() > n) {
      fail("offsets[-1] can not be greater than input's length " + std::to_string(n) + " but got offsets[-1] of " +
           std::to_string(bounds.back()));
    }
    for (size_t b = 1; b < bounds.size(); ++b) {
      if (bounds[b] < bounds[b - 1]) {
        fail("embedding_bag: offsets must be ascending, but offsets[" + std::to_string(b) + "] = " +
             std::to_string(bounds[b]) + " < offsets[" + std::to_string(b - 1) + "] = " + std::to_string(bounds[b - 1]));
      }
    }
    if (options.include_last_offset()) {
      if (bounds.empty()) fail("embedding_bag: include_last_offset needs at least one offset (the end of the last bag)");
    } else {
      bounds.push_back(n);
    }
  } else {
    fail("input has to be 1D or 2D Tensor, but got Tensor of dimension " + std::to_string(input.dim()));
  }
  const Tensor indices = raw::to(raw::reshape(input, {n}), weight.device(), kInt64);
  const Tensor offsets =
      raw::to(raw::from_vector(bounds, {static_cast<int64_t>(bounds.size())}), weight.device(), kInt64);
  const Tensor sample = psw.defined() ? colony::reshape(psw, {n}) : Tensor();
  return colony::embedding_bag(weight, indices, offsets, sample, kernel_mode(options.mode()), padding);
}

}  // namespace functional

EmbeddingBag::EmbeddingBag(const EmbeddingBagOptions& o) : options(o) {
  check_options();
  weight = register_parameter("weight", raw::empty({o.num_embeddings(), o.embedding_dim()}));
  reset_parameters();
}

EmbeddingBag::EmbeddingBag(const EmbeddingBagOptions& o, const Tensor& table, bool requires_grad) : options(o) {
  check_options();
  weight = register_parameter("weight", table, requires_grad);
}

void EmbeddingBag::check_options() {
  refuse_sparse(options.sparse());
  if (options.num_embeddings() <= 0 || options.embedding_dim() <= 0) {
    fail("EmbeddingBag: num_embeddings and embedding_dim must be positive, got " +
         std::to_string(options.num_embeddings()) + " and " + std::to_string(options.embedding_dim()));
  }
  const int64_t p = normalized_padding(options.padding_idx(), options.num_embeddings());
  if (p >= 0) options.padding_idx(p);
}

void EmbeddingBag::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    Tensor row = raw::select(weight, 0, *options.padding_idx());
    raw::fill_(row, 0.0);
  }
}

std::shared_ptr<EmbeddingBag> EmbeddingBag::from_pretrained(const Tensor& embeddings,
                                                            const EmbeddingBagFromPretrainedOptions& o) {
  if (!embeddings.defined() || embeddings.dim() != 2) {
    fail("EmbeddingBag::from_pretrained: embeddings must be a 2-D tensor [num_embeddings, embedding_dim], got " +
         (embeddings.defined() ? shape_str(embeddings.sizes()) : std::string("an undefined tensor")));
  }
  if (!embeddings.is_floating_point()) {
    fail(std::string("EmbeddingBag::from_pretrained: embeddings must be floating, got ") + dtype_name(embeddings.dtype()));
  }
  EmbeddingBagOptions options(embeddings.size(0), embeddings.size(1));
  options.mode(o.mode()).sparse(o.sparse()).include_last_offset(o.include_last_offset()).padding_idx(o.padding_idx());
  return std::shared_ptr<EmbeddingBag>(new EmbeddingBag(options, embeddings.detach(), /*requires_grad=*/!o.freeze()));
}

Tensor EmbeddingBag::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight,
                          functional::EmbeddingBagFuncOptions()
                              .offsets(offsets)
                              .mode(options.mode())
                              .per_sample_weights(per_sample_weights)
                              .include_last_offset(options.include_last_offset())
                              .padding_idx(options.padding_idx()));
}

std::string EmbeddingBag::extra_repr() const {
  std::string s = std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim()) +
                  ", mode='" + mode_name(options.mode()) + "'";
  if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
  return s;
}

}  // namespace colony::nn
