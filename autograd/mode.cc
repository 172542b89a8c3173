// mode: raw::mode's indices, and the values gathered at them through the differentiable gather, so
// the gradient goes to the element each value was taken from (autograd::detail::value_selected).
#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "ops/raw_ops.h"

namespace colony {

std::pair<Tensor, Tensor> mode(const Tensor& t, int64_t dim, bool keepdim) {
  return autograd::detail::value_selected(t, dim, keepdim, raw::mode(t, dim, keepdim));
}

}  // namespace colony
