// Indexing: each op's gradient is its adjoint (gather <-> scatter_add, index_select <-> index_add),
// written with the differentiable ops so that the adjoint's gradient (under create_graph) is the op
// again. Index tensors are integers and get no gradient.
#include <stdexcept>
#include <string>

#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  Tensor out = raw::index_select(t, dim, index);
  if (autograd::needs_grad(t)) {
    SavedTensor si(index);
    Shape in_shape = t.sizes();
    record_differentiable("IndexSelectBackward", {t}, out, {si}, [si, in_shape, dim](const Grads& g, const Needs&) -> Grads {
      Tensor idx = si.unpack();
      if (idx.dim() <= 1 || in_shape.empty()) return {index_add(in_shape, dim, idx, g[0])};
      // An N-D index: its dims, flattened, are the one dim index_add adds along.
      const int64_t d = wrap_dim(dim, static_cast<int64_t>(in_shape.size()), "index_select");
      Shape flat = in_shape;
      flat[d] = idx.numel();
      return {index_add(in_shape, d, raw::reshape(idx, {idx.numel()}), reshape(g[0], flat))};
    });
  }
  return out;
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  Tensor out = raw::gather(t, dim, index);
  if (autograd::needs_grad(t)) {
    SavedTensor si(index);
    Shape in_shape = t.sizes();
    record_differentiable("GatherBackward", {t}, out, {si}, [si, in_shape, dim](const Grads& g, const Needs&) -> Grads {
      return {scatter_add(in_shape, dim, si.unpack(), g[0])};
    });
  }
  return out;
}

Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = raw::scatter_add(shape, dim, index, src);
  if (autograd::needs_grad(src)) {
    SavedTensor si(index);
    Shape src_shape = src.sizes();
    record_differentiable("ScatterAddBackward", {src}, out, {si}, [si, dim, src_shape](const Grads& g, const Needs&) -> Grads {
      Tensor idx = si.unpack();
      Tensor picked = gather(g[0], dim, idx);
      if (picked.sizes() == src_shape) return {picked};
      // Only the index-shaped corner of src was read; the rest gets zero gradient.
      const Shape corner = idx.sizes();
      return {autograd::detail::placed_in_zeros("ScatterAddBackwardBackward", src_shape, picked, [corner](const Tensor& x) {
        Tensor c = x;
        for (int64_t d = 0; d < c.dim(); ++d) c = narrow(c, d, 0, corner[static_cast<size_t>(d)]);
        return c;
      })};
    });
  }
  return out;
}

Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = raw::index_add(shape, dim, index, src);
  if (autograd::needs_grad(src)) {
    SavedTensor si(index);
    record_differentiable("IndexAddBackward", {src}, out, {si}, [si, dim](const Grads& g, const Needs&) -> Grads {
      return {index_select(g[0], dim, si.unpack())};
    });
  }
  return out;
}

Tensor one_hot(const Tensor& labels, int64_t num_classes) { return raw::one_hot(labels, num_classes); }
Tensor nonzero(const Tensor& t) { return raw::nonzero(t); }

Tensor masked_select(const Tensor& t, const Tensor& mask) {
  if (!mask.defined() || mask.dtype() != kBool) {
    throw std::invalid_argument("masked_select: expected a bool mask, got " +
                                std::string(mask.defined() ? dtype_name(mask.dtype()) : "an undefined tensor"));
  }
  const Shape shape = broadcast_shapes(t.sizes(), mask.sizes(), "masked_select");
  // The flat positions of the selected elements, then one index_select (whose gradient adds back).
  Tensor positions = reshape(raw::nonzero(reshape(raw::expand(mask, shape), {-1})), {-1});
  return index_select(reshape(expand(t, shape), {-1}), 0, positions);
}

}  // namespace colony
