// View tracking for in-place writes (PyTorch's CopySlices idea). A differentiable view made with
// grad mode on remembers its base (the root tensor whose storage it shares); an in-place op on the
// view then rebases the *base's* history onto a CopySlices node, and every view of that base
// derives its grad_fn again from the base's new history (AsStridedBackward) the next time autograd
// looks at it. Internal to autograd/.
#pragma once

#include "autograd/engine/node.h"

namespace colony::autograd {

// Makes `view` (which shares `base`'s storage) a tracked view of base's root. `multi_output`:
// one of several views returned together (split, chunk), which refuse in-place writes.
void mark_view(const Tensor& base, const Tensor& view, bool multi_output = false);

// The root `t` views, or an undefined tensor when `t` is no tracked view.
const Tensor& view_base_of(const Tensor& t);

// When `t` is a tracked view whose base was written in place since t's grad_fn was derived, derives
// it again from the base's current history. Cheap when there is nothing to do.
void refresh_view(const Tensor& t);
// Derives the grad_fn of tracked view `t` from its base's current history, stale or not.
void derive_view_history(const Tensor& t);

// Geometry of a strided tensor inside its storage, in elements.
struct Geometry {
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
  static Geometry of(const Tensor& t) { return {t.sizes(), t.strides(), t.storage_offset()}; }
  // One past the last storage element reached (0 when there are no elements).
  int64_t end() const {
    int64_t e = offset + 1;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 0) return 0;
      e += (sizes[d] - 1) * strides[d];
    }
    return e;
  }
};

// The gradient of the input `in` of an as_strided view `out` (geometries in the same storage), as
// torch's as_strided_backward: each output element's gradient added at its storage position (an
// element several outputs share receives their sum), then read at the input's positions, divided
// by the number of input elements sharing a position (an expanded input). Storage elements the
// input does not cover receive nothing. torch.as_strided's backward, and a tracked view's derived
// history when the view's elements overlap or leave the base's.
Tensor as_strided_backward(const Tensor& grad, const Geometry& in, const Geometry& out);

}  // namespace colony::autograd
