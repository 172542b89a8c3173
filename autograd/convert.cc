// Copies, device moves and dtype casts: the gradient goes back the same way (to the input's device
// and dtype); detach cuts the graph.
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

Tensor contiguous(const Tensor& t) {
  Tensor out = raw::contiguous(t);
  if (out.is_same(t)) return t;
  if (autograd::needs_grad(t)) {
    record_differentiable("ContiguousBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  }
  return out;
}

Tensor clone(const Tensor& t) {
  Tensor out = raw::clone(t);
  if (autograd::needs_grad(t)) {
    record_differentiable("CloneBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  }
  return out;
}

Tensor to(const Tensor& t, Device device, DType dtype, bool non_blocking) {
  Tensor out = raw::to(t, device, dtype, non_blocking);
  if (out.is_same(t)) return t;
  // A cast to an integral type ends the graph, as in PyTorch.
  if (is_floating(dtype) && autograd::needs_grad(t)) {
    Device in_device = t.device();
    DType in_dtype = t.dtype();
    record_differentiable("ToCopyBackward", {t}, out, {}, [in_device, in_dtype](const Grads& g, const Needs&) -> Grads {
      return {to(g[0], in_device, in_dtype)};
    });
  }
  return out;
}

Tensor pin_memory(const Tensor& t) {
  Tensor out = raw::pin_memory(t);
  if (out.is_same(t)) return t;
  if (autograd::needs_grad(t)) {
    record("PinMemoryBackward", {t}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {g[0]}; });
  }
  return out;
}

Tensor detach(const Tensor& t) { return raw::alias(t); }

}  // namespace colony
