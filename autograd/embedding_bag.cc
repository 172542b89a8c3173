// embedding_bag's differentiable op: raw::embedding_bag with one node whose backward gives the
// weight's gradient (raw::embedding_bag_backward) and per_sample_weights' (its dot products), each
// only when that input needs one.
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                     const Tensor& per_sample_weights, raw::EmbeddingBagMode mode, int64_t padding_idx) {
  raw::EmbeddingBagResult r = raw::embedding_bag(weight, indices, offsets, per_sample_weights, mode, padding_idx);
  const bool weighted = per_sample_weights.defined();
  if (!autograd::needs_grad(weight) && !(weighted && autograd::needs_grad(per_sample_weights))) return r.output;
  Tensor out = r.output;
  r.output = r.output.detach();  // the node keeps the shape and dtype, not an edge to its own output
  const int64_t num = weight.size(0);
  std::vector<Tensor> inputs = {weight};
  std::vector<SavedTensor> saved = {SavedTensor(weight)};
  if (weighted) {
    inputs.push_back(per_sample_weights);
    saved.emplace_back(per_sample_weights);
  }
  record("EmbeddingBagBackward", inputs, out, saved,
         [r, indices, offsets, saved, weighted, num, mode, padding_idx](const Grads& g, const Needs& needs) -> Grads {
           const Tensor sample = weighted ? saved[1].unpack() : Tensor();
           Grads grads(weighted ? 2 : 1);
           if (needs[0]) grads[0] = raw::embedding_bag_backward(g[0], indices, offsets, sample, r, num, mode, padding_idx);
           if (weighted && needs[1]) {
             grads[1] = raw::reshape(
                 raw::embedding_bag_per_sample_weights_backward(g[0], saved[0].unpack(), indices, offsets, padding_idx),
                 sample.sizes());
           }
           return grads;
         });
  return out;
}

}  // namespace colony
