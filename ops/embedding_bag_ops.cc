// embedding_bag's raw front: checks of what reaches the kernels (F::embedding_bag has checked the
// user's forms with torch's messages and built the [bags + 1] offsets), allocation, and one kernel
// per direction (kernels/common/embedding_bag.h).
#include <stdexcept>
#include <string>

#include "kernels/common/embedding_bag.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("embedding_bag: " + what); }

kernels::EmbeddingBagParams params(const Tensor& offsets, int64_t num, int64_t dim, EmbeddingBagMode mode,
                                   int64_t padding_idx) {
  kernels::EmbeddingBagParams p;
  p.bags = offsets.size(0) - 1;
  p.dim = dim;
  p.num_embeddings = num;
  p.mode = mode;
  p.padding_idx = padding_idx;
  return p;
}

void check_layout(const Tensor& weight, const Tensor& indices, const Tensor& offsets) {
  check_defined(weight, "embedding_bag", "weight");
  if (weight.dim() != 2) fail("expected weight of shape [num_embeddings, embedding_dim], got " + shape_str(weight.sizes()));
  check_floating(weight, "embedding_bag", "weight");
  if (indices.dtype() != kInt64 || indices.dim() != 1 || offsets.dtype() != kInt64 || offsets.dim() != 1 ||
      offsets.size(0) < 1) {
    fail("expected 1-D int64 indices and 1-D int64 offsets of bags + 1 entries, got " +
         std::string(dtype_name(indices.dtype())) + " " + shape_str(indices.sizes()) + " and " +
         dtype_name(offsets.dtype()) + " " + shape_str(offsets.sizes()));
  }
  if (indices.device() != weight.device() || offsets.device() != weight.device()) {
    fail("weight is on " + weight.device().str() + " but indices are on " + indices.device().str() +
         " and offsets on " + offsets.device().str());
  }
}

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr_raw() : nullptr; }

}  // namespace

EmbeddingBagResult embedding_bag(const Tensor& weight_arg, const Tensor& indices_arg, const Tensor& offsets_arg,
                                 const Tensor& per_sample_weights, EmbeddingBagMode mode, int64_t padding_idx) {
  check_layout(weight_arg, indices_arg, offsets_arg);
  const int64_t num = weight_arg.size(0), dim = weight_arg.size(1);
  if (per_sample_weights.defined() &&
      (mode != EmbeddingBagMode::Sum || per_sample_weights.sizes() != indices_arg.sizes() ||
       per_sample_weights.dtype() != weight_arg.dtype() || per_sample_weights.device() != weight_arg.device())) {
    fail("per_sample_weights must be Sum's, of the indices' shape and the weight's dtype and device");
  }
  const Tensor weight = contiguous(weight_arg), indices = contiguous(indices_arg), offsets = contiguous(offsets_arg);
  const Tensor sample = per_sample_weights.defined() ? contiguous(per_sample_weights) : Tensor();
  if (indices.is_cpu()) {
    const int64_t* p = indices.data_ptr<int64_t>();
    for (int64_t i = 0; i < indices.numel(); ++i) {
      if (p[i] < 0 || p[i] >= num) {
        throw std::out_of_range("embedding_bag: Index " + std::to_string(i) + " of input takes value " +
                                std::to_string(p[i]) + " which is not in the valid range [0, " + std::to_string(num) +
                                ")");
      }
    }
  }
  const kernels::EmbeddingBagParams p = params(offsets, num, dim, mode, padding_idx);
  const TensorOptions longs = TensorOptions(kInt64).device(weight.device());
  EmbeddingBagResult r;
  r.output = empty({p.bags, dim}, TensorOptions(weight.dtype()).device(weight.device()));
  r.bag_size = empty({p.bags}, longs);
  if (mode == EmbeddingBagMode::Max) r.max_indices = empty({p.bags, dim}, longs);
  if (p.bags == 0) return r;
  run_kernel<kernels::EmbeddingBagForward>(weight.device(), weight.dtype(), weight.data_ptr_raw(),
                                           indices.data_ptr<int64_t>(), offsets.data_ptr<int64_t>(), ptr(sample), p,
                                           r.output.data_ptr_raw(),
                                           r.max_indices.defined() ? r.max_indices.data_ptr<int64_t>() : nullptr,
                                           r.bag_size.data_ptr<int64_t>());
  return r;
}

Tensor embedding_bag_backward(const Tensor& grad_output, const Tensor& indices_arg, const Tensor& offsets_arg,
                              const Tensor& per_sample_weights, const EmbeddingBagResult& forward,
                              int64_t num_embeddings, EmbeddingBagMode mode, int64_t padding_idx) {
  const Tensor g = contiguous(grad_output), indices = contiguous(indices_arg), offsets = contiguous(offsets_arg);
  const int64_t dim = forward.output.size(1);
  if (g.sizes() != forward.output.sizes() || g.dtype() != forward.output.dtype()) {
    fail("grad_output is " + std::string(dtype_name(g.dtype())) + " " + shape_str(g.sizes()) + ", expected " +
         dtype_name(forward.output.dtype()) + " " + shape_str(forward.output.sizes()));
  }
  const kernels::EmbeddingBagParams p = params(offsets, num_embeddings, dim, mode, padding_idx);
  Tensor gw = empty({num_embeddings, dim}, TensorOptions(g.dtype()).device(g.device()));
  const Tensor sample = per_sample_weights.defined() ? contiguous(per_sample_weights) : Tensor();
  run_kernel<kernels::EmbeddingBagBackward>(
      g.device(), g.dtype(), g.data_ptr_raw(), indices.data_ptr<int64_t>(), offsets.data_ptr<int64_t>(),
      indices.numel(), ptr(sample), forward.max_indices.defined() ? forward.max_indices.data_ptr<int64_t>() : nullptr,
      forward.bag_size.data_ptr<int64_t>(), p, gw.data_ptr_raw());
  return gw;
}

Tensor embedding_bag_per_sample_weights_backward(const Tensor& grad_output, const Tensor& weight_arg,
                                                 const Tensor& indices_arg, const Tensor& offsets_arg,
                                                 int64_t padding_idx) {
  const Tensor g = contiguous(grad_output), weight = contiguous(weight_arg), indices = contiguous(indices_arg),
               offsets = contiguous(offsets_arg);
  const kernels::EmbeddingBagParams p = params(offsets, weight.size(0), weight.size(1), EmbeddingBagMode::Sum, padding_idx);
  Tensor grad = empty({indices.numel()}, TensorOptions(weight.dtype()).device(weight.device()));
  run_kernel<kernels::EmbeddingBagSampleWeightsBackward>(weight.device(), weight.dtype(), g.data_ptr_raw(),
                                                         weight.data_ptr_raw(), indices.data_ptr<int64_t>(),
                                                         offsets.data_ptr<int64_t>(), indices.numel(), p,
                                                         grad.data_ptr_raw());
  return grad;
}

}  // namespace colony::raw
