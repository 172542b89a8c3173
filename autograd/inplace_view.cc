// The in-place view members (t_, transpose_, squeeze_, unsqueeze_, as_strided_; swapdims_ and
// swapaxes_ in tensor/tensor.h), recorded as PyTorch records them.
//
// Each runs the out-of-place view (autograd/views.cc) on a stand-in for self: a new handle to
// self's elements carrying self's history. Self then takes the view's sizes, strides and offset
// (the TensorImpl is changed, so every copy of the handle sees it, as in torch) and, when the view
// recorded a node, that node as its history: the view's backward on top of self's old history, the
// out-of-place view's derivative with nothing written twice. The storage version is bumped, as
// torch bumps it, so a tensor saved for backward before the change refuses its backward.
//
// Views of self keep their own geometry (torch's too). Colony's view tracking
// (autograd/engine/view_tracking.h) describes a tracked view and its base by their geometries in
// the shared storage, read when a write through the view is recorded (CopySlices) or its history
// is derived again (AsStridedBackward), so a geometry changed in place is simply the one read then:
//  - self a tracked view: its new history is the recorded node on the history it had (derived
//    again first if its base was written since); its base and the base's other views are untouched
//    (they derive their histories again because the version moved, to the same values);
//  - self a base: its views derive their histories again from its new history and geometry.
// as_strided_ can move a tracked view onto storage elements its base does not cover; the tracking
// nodes size their buffers for the base and the view together (view_tracking.cc, inplace.cc), and
// those elements' gradients reach no input of the base, as torch's as_strided_backward drops them.
#include <optional>
#include <stdexcept>
#include <string>

#include "autograd/engine/view_tracking.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

// Gives self the geometry and history of `view_of(stand-in for self)`.
template <typename ViewOf>
Tensor& become_view(Tensor& self, const char* op, ViewOf view_of) {
  autograd::detail::check_inplace_allowed(self, op);
  const bool record = GradMode::is_enabled() && autograd::requires_grad_safe(self);
  Tensor stand_in = raw::alias(self);
  if (record) {
    autograd::Edge e = autograd::gradient_edge(self);
    AutogradMeta& meta = AutogradMetaAccess::get(stand_in);
    meta.grad_fn = e.fn;
    meta.output_nr = e.input_nr;
  }
  Tensor view = view_of(stand_in);
  TensorImpl& impl = *self.impl();
  impl.sizes = view.sizes();
  impl.strides = view.strides();
  impl.offset = view.storage_offset();
  self.storage()->bump_version();
  if (record) {
    AutogradMeta& meta = AutogradMetaAccess::get(self);
    meta.grad_fn = view.grad_fn();
    meta.output_nr = view.output_nr();
    // The node just recorded is self's history at this version: nothing to derive again.
    if (meta.view_base.defined()) meta.view_version = self.version();
  }
  return self;
}

}  // namespace

Tensor& Tensor::t_() {
  if (dim() > 2) {
    throw std::invalid_argument("t_() expects a tensor with <= 2 dimensions, but self is " + std::to_string(dim()) +
                                "D");
  }
  return become_view(*this, "t_", [](const Tensor& s) { return colony::t(s); });
}

Tensor& Tensor::transpose_(int64_t dim0, int64_t dim1) {
  wrap_dim(dim0, dim(), "transpose_");  // a 0-D tensor takes 0 and -1, as torch's
  wrap_dim(dim1, dim(), "transpose_");
  return become_view(*this, "transpose_", [&](const Tensor& s) { return colony::transpose(s, dim0, dim1); });
}

Tensor& Tensor::squeeze_() {
  return become_view(*this, "squeeze_", [](const Tensor& s) { return colony::squeeze(s); });
}

Tensor& Tensor::squeeze_(int64_t dim) {
  wrap_dim(dim, this->dim(), "squeeze_");
  return become_view(*this, "squeeze_", [&](const Tensor& s) { return colony::squeeze(s, dim); });
}

Tensor& Tensor::unsqueeze_(int64_t dim) {
  wrap_dim(dim, this->dim() + 1, "unsqueeze_");
  return become_view(*this, "unsqueeze_", [&](const Tensor& s) { return colony::unsqueeze(s, dim); });
}

Tensor& Tensor::as_strided_(const Shape& size, const Shape& stride, std::optional<int64_t> storage_offset) {
  return become_view(*this, "as_strided_",
                     [&](const Tensor& s) { return colony::as_strided(s, size, stride, storage_offset); });
}

}  // namespace colony
