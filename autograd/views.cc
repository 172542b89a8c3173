// Views: the output shares the input's storage; the gradient is the output gradient laid back
// into the input's shape (reshaped, transposed back, or written into a zero tensor at the slice).
// Every view is tracked (autograd/engine/view_tracking.h) so in-place writes through it reach its base.
#include <stdexcept>

#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "autograd/engine/view_tracking.h"

namespace colony {
namespace {

using autograd::record;
using autograd::detail::record_differentiable;
using autograd::detail::Grads;
using autograd::detail::Needs;

// Records a view whose gradient is the output gradient reshaped to the input's shape.
Tensor reshaping_view(const char* name, const Tensor& t, Tensor out) {
  if (autograd::needs_grad(t)) {
    Shape in_shape = t.sizes();
    record_differentiable(name, {t}, out, {}, [in_shape](const Grads& g, const Needs&) -> Grads {
      return {reshape(g[0], in_shape)};
    });
  }
  autograd::mark_view(t, out);
  return out;
}

// Records a view of a sub-block; `place(x)` is the same view op of x (a tensor shaped like the
// input): the gradient is written into that sub-block of zeros.
template <typename Place>
Tensor sub_block_view(const char* name, const Tensor& t, Tensor out, Place place) {
  if (autograd::needs_grad(t)) {
    Shape in_shape = t.sizes();
    const std::string backward_name = std::string(name) + "Backward";
    record_differentiable(name, {t}, out, {}, [in_shape, place, backward_name](const Grads& g, const Needs&) -> Grads {
      return {autograd::detail::placed_in_zeros(backward_name, in_shape, g[0], place)};
    });
  }
  autograd::mark_view(t, out);
  return out;
}

}  // namespace

Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, std::optional<int64_t> storage_offset) {
  Tensor out = raw::as_strided(t, sizes, strides, storage_offset.value_or(t.storage_offset()));
  if (autograd::needs_grad(t)) {
    const autograd::Geometry in = autograd::Geometry::of(t), geometry = autograd::Geometry::of(out);
    record("AsStridedBackward", {t}, out, {}, [in, geometry](const Grads& g, const Needs&) -> Grads {
      return {autograd::as_strided_backward(g[0], in, geometry)};
    });
  }
  autograd::mark_view(t, out);
  return out;
}

Tensor view(const Tensor& t, const Shape& shape) { return reshaping_view("ViewBackward", t, raw::view(t, shape)); }

Tensor reshape(const Tensor& t, const Shape& shape) {
  return reshaping_view("ReshapeBackward", t, raw::reshape(t, shape));
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  return reshaping_view("FlattenBackward", t, raw::flatten(t, start_dim, end_dim));
}

Tensor squeeze(const Tensor& t) { return reshaping_view("SqueezeBackward", t, raw::squeeze(t)); }

Tensor squeeze(const Tensor& t, int64_t dim) { return reshaping_view("SqueezeBackward", t, raw::squeeze(t, dim)); }

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  return reshaping_view("UnsqueezeBackward", t, raw::unsqueeze(t, dim));
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  Tensor out = raw::transpose(t, dim0, dim1);
  if (autograd::needs_grad(t)) {
    record_differentiable("TransposeBackward", {t}, out, {}, [dim0, dim1](const Grads& g, const Needs&) -> Grads {
      return {transpose(g[0], dim0, dim1)};
    });
  }
  autograd::mark_view(t, out);
  return out;
}

Tensor t(const Tensor& self) {
  if (self.dim() > 2) {
    throw std::invalid_argument("t: expects a tensor with <= 2 dimensions, but self is " +
                                std::to_string(self.dim()) + "-D " + shape_str(self.sizes()) +
                                "; use transpose(dim0, dim1)");
  }
  // 0-D and 1-D tensors are their own transpose (PyTorch returns a view).
  if (self.dim() < 2) return reshaping_view("TBackward", self, raw::alias(self));
  return transpose(self, 0, 1);
}

Tensor permute(const Tensor& t, const std::vector<int64_t>& dims) {
  Tensor out = raw::permute(t, dims);
  if (autograd::needs_grad(t)) {
    std::vector<int64_t> d = wrap_dims(dims, t.dim(), "permute");
    std::vector<int64_t> inverse(d.size());
    for (size_t i = 0; i < d.size(); ++i) inverse[d[i]] = static_cast<int64_t>(i);
    record_differentiable("PermuteBackward", {t}, out, {}, [inverse](const Grads& g, const Needs&) -> Grads {
      return {permute(g[0], inverse)};
    });
  }
  autograd::mark_view(t, out);
  return out;
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  return sub_block_view("NarrowBackward", t, raw::narrow(t, dim, start, length),
                        [dim, start, length](const Tensor& x) { return narrow(x, dim, start, length); });
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return sub_block_view("SliceBackward", t, raw::slice(t, dim, start, end, step),
                        [dim, start, end, step](const Tensor& x) { return slice(x, dim, start, end, step); });
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  return sub_block_view("SelectBackward", t, raw::select(t, dim, index),
                        [dim, index](const Tensor& x) { return select(x, dim, index); });
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  return sub_block_view("DiagonalBackward", t, raw::diagonal(t, offset, dim1, dim2),
                        [offset, dim1, dim2](const Tensor& x) { return diagonal(x, offset, dim1, dim2); });
}

// Window w's element k is input position w * step + k along dim; overlapping windows (step <
// size) read a position several times, so the gradient is an index_add: the windows' dim and
// the window dim side by side, flattened, added at w * step + k (one op, any device).
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  Tensor out = raw::unfold(t, dim, size, step);
  if (autograd::needs_grad(t)) {
    const Shape in_shape = t.sizes();
    const int64_t d = t.dim() == 0 ? 0 : wrap_dim(dim, t.dim(), "unfold");
    record("UnfoldBackward", {t}, out, {}, [in_shape, d, size, step](const Grads& g, const Needs&) -> Grads {
      if (in_shape.empty()) {  // a 0-D input read as [1]: one window of `size` (0 or 1) elements
        return {g[0].numel() == 1 ? raw::reshape(g[0], in_shape) : autograd::detail::zeros_of(in_shape, g[0])};
      }
      const int64_t windows = g[0].size(d), last = g[0].dim() - 1;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < last; ++i) {
        order.push_back(i);
        if (i == d) order.push_back(last);
      }
      Shape merged = in_shape;
      merged[d] = windows * size;
      const Tensor rows = raw::reshape(raw::permute(g[0], order), merged);
      std::vector<int64_t> index(static_cast<size_t>(windows * size));
      for (int64_t w = 0; w < windows; ++w) {
        for (int64_t k = 0; k < size; ++k) index[w * size + k] = w * step + k;
      }
      const Tensor idx = raw::from_vector<int64_t>(index, {windows * size}, TensorOptions(kInt64).device(g[0].device()));
      return {raw::index_add(in_shape, d, idx, rows)};
    });
  }
  autograd::mark_view(t, out);
  return out;
}

Tensor expand(const Tensor& t, const Shape& shape) {
  Tensor out = raw::expand(t, shape);
  if (autograd::needs_grad(t)) {
    Shape in_shape = t.sizes();
    record_differentiable("ExpandBackward", {t}, out, {}, [in_shape](const Grads& g, const Needs&) -> Grads {
      return {sum_to(g[0], in_shape)};
    });
  }
  autograd::mark_view(t, out);
  return out;
}

}  // namespace colony
