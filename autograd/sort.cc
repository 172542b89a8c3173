// sort and topk: the values are elements of the input, so the gradient goes back to the positions
// the indices name (scatter_add into zeros; the positions are distinct). multinomial draws
// integers and is not differentiable.
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

namespace {

std::pair<Tensor, Tensor> record_selection(const char* name, const Tensor& t, int64_t dim,
                                           std::pair<Tensor, Tensor> out) {
  if (autograd::needs_grad(t)) {
    SavedTensor si(out.second);
    Shape in_shape = t.sizes();
    autograd::detail::record_differentiable(name, {t}, out.first, {si}, [si, in_shape, dim](const Grads& g, const Needs&) -> Grads {
      return {scatter_add(in_shape, dim, si.unpack(), g[0])};
    });
  }
  return out;
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending) {
  return record_selection("SortBackward", t, dim, raw::sort(t, dim, descending));
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending) { return raw::sort(t, dim, descending).second; }

std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
  return record_selection("TopkBackward", t, dim, raw::topk(t, k, dim, largest, sorted));
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  return raw::multinomial(probs, num_samples, replacement, gen);
}

}  // namespace colony
