// Joining and splitting along a dim: the gradient of a join is the matching slices of the output
// gradient; the gradient of a split is the join of its outputs' gradients.
// repeat and repeat_interleave (tiling copies) are here too.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "autograd/engine/view_tracking.h"

namespace colony {
namespace {

using autograd::record;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

// The pieces' gradients joined along d without a copy, when they are already adjacent in one
// buffer and together form a contiguous tensor of the input's shape; undefined otherwise. That is
// how attention hands back the gradients of q, k and v cut from one packed projection
// (ops/attention_ops.cc writes them into one buffer laid out as the projection): the cat would copy
// the buffer into a new one of the same layout (1.3 % of a width-128 char GPT's step on the CPU).
Tensor joined_in_place(const Grads& g, int64_t d, const Shape& shape) {
  if (g.empty() || !g[0].defined()) return Tensor();
  const Tensor& first = g[0];
  int64_t offset = first.storage_offset(), length = 0;
  for (const Tensor& piece : g) {
    if (!piece.defined() || piece.storage().get() != first.storage().get() || piece.dtype() != first.dtype() ||
        piece.dim() != first.dim() || piece.strides() != first.strides() || piece.storage_offset() != offset) {
      return Tensor();
    }
    offset += piece.size(d) * piece.stride(d);
    length += piece.size(d);
  }
  if (length != shape[d]) return Tensor();
  Tensor joined = raw::as_strided(first, shape, first.strides(), first.storage_offset());
  return joined.is_contiguous() ? joined : Tensor();
}

// split's pieces share one node whose backward concatenates their gradients (the engine fills in
// zeros for pieces that received none).
std::vector<Tensor> record_split(const char* name, const Tensor& t, std::vector<Tensor> pieces, int64_t dim) {
  if (autograd::needs_grad(t)) {
    int64_t d = wrap_dim(dim, t.dim(), name);
    const Shape shape = t.sizes();
    record(name, {t}, pieces, {}, [d, shape](const Grads& g, const Needs&) -> Grads {
      Tensor joined = joined_in_place(g, d, shape);
      return {joined.defined() ? joined : raw::cat(g, d)};
    });
  }
  for (const Tensor& piece : pieces) autograd::mark_view(t, piece, /*multi_output=*/true);
  return pieces;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor out = raw::cat(tensors, dim);
  if (autograd::needs_grad(tensors)) {
    int64_t d = wrap_dim(dim, out.dim(), "cat");
    std::vector<Shape> shapes;
    for (const Tensor& t : tensors) shapes.push_back(t.sizes());
    int64_t out_dims = out.dim();
    record_differentiable("CatBackward", tensors, out, {}, [d, shapes, out_dims](const Grads& g, const Needs& needs) -> Grads {
      Grads result(shapes.size());
      int64_t offset = 0;
      for (size_t i = 0; i < shapes.size(); ++i) {
        // A 1-D empty tensor takes no part in cat (PyTorch's legacy rule); its gradient is empty too.
        bool skipped = shapes[i].size() == 1 && shapes[i][0] == 0 && out_dims != 1;
        if (skipped) {
          if (needs[i]) result[i] = autograd::detail::zeros_of(shapes[i], g[0]);
          continue;
        }
        int64_t len = shapes[i][d];
        if (needs[i]) result[i] = narrow(g[0], d, offset, len);
        offset += len;
      }
      return result;
    });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor out = raw::stack(tensors, dim);
  if (autograd::needs_grad(tensors)) {
    int64_t d = wrap_dim(dim, out.dim(), "stack");
    size_t n = tensors.size();
    record_differentiable("StackBackward", tensors, out, {}, [d, n](const Grads& g, const Needs& needs) -> Grads {
      Grads result(n);
      for (size_t i = 0; i < n; ++i) {
        if (needs[i]) result[i] = select(g[0], d, static_cast<int64_t>(i));
      }
      return result;
    });
  }
  return out;
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  return record_split("SplitBackward", t, raw::split(t, split_size, dim), dim);
}

std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim) {
  return record_split("SplitWithSizesBackward", t, raw::split_with_sizes(t, sizes, dim), dim);
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  return record_split("ChunkBackward", t, raw::chunk(t, chunks, dim), dim);
}

// repeat and repeat_interleave: a broadcast view (expand) read into a new tensor (reshape), so
// the gradient is expand's: the copies' gradients summed back onto the element they came from.
// Where the expand repeats nothing (every count 1) the reshape of a contiguous tensor is a view;
// torch returns a new tensor whatever the counts, so the result is cloned then.
namespace {

Tensor expanded_copy(const Tensor& x, const Shape& expanded, const Shape& out) {
  Tensor result = reshape(expand(x, expanded), out);
  return expanded == x.sizes() ? clone(result) : result;
}

}  // namespace

Tensor repeat(const Tensor& t, const Shape& repeats) {
  if (repeats.size() < static_cast<size_t>(t.dim())) {
    throw std::invalid_argument("repeat: " + std::to_string(repeats.size()) + " repeats for a tensor of " +
                                std::to_string(t.dim()) + " dims " + shape_str(t.sizes()) +
                                ": expected at least one per dim");
  }
  for (int64_t r : repeats) {
    if (r < 0) throw std::invalid_argument("repeat: repeats must be >= 0, got " + shape_str(repeats));
  }
  // Leading repeats beyond t's dims add new dims of size 1 first, as torch.repeat.
  Shape padded(repeats.size() - t.dim(), 1);
  padded.insert(padded.end(), t.sizes().begin(), t.sizes().end());
  // [s0, s1, ...] -> [1, s0, 1, s1, ...] -> expanded [r0, s0, r1, s1, ...] -> [r0 s0, r1 s1, ...].
  Shape interleaved, expanded, out;
  for (size_t i = 0; i < padded.size(); ++i) {
    interleaved.insert(interleaved.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    out.push_back(repeats[i] * padded[i]);
  }
  return expanded_copy(reshape(t, interleaved), expanded, out);
}

// Each flipped dim is an index_select by the reversed positions (its gradient index_add's them back).
Tensor flip(const Tensor& t, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> d = wrap_dims(dims, std::max<int64_t>(t.dim(), 1), "flip");  // refuses repeats
  Tensor out = t;
  bool copied = false;
  for (int64_t dim : d) {
    if (t.dim() == 0 || t.size(dim) <= 1) continue;
    const int64_t n = t.size(dim);
    out = index_select(out, dim, raw::arange(n - 1, -1, -1, TensorOptions(kInt64).device(t.device())));
    copied = true;
  }
  return copied ? out : clone(t);  // torch.flip returns a new tensor whatever it flips
}

Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim) {
  if (repeats < 0) throw std::invalid_argument("repeat_interleave: repeats must be >= 0, got " + std::to_string(repeats));
  if (!dim) return repeat_interleave(reshape(t, {-1}), repeats, 0);  // torch flattens first
  const int64_t d = wrap_dim(*dim, std::max<int64_t>(t.dim(), 1), "repeat_interleave");
  Tensor x = t.dim() == 0 ? reshape(t, {1}) : t;
  // [.., s_d, ..] -> [.., s_d, 1, ..] -> expanded [.., s_d, r, ..] -> [.., s_d r, ..].
  Shape expanded = x.sizes(), out = x.sizes();
  expanded.insert(expanded.begin() + d + 1, repeats);
  out[d] *= repeats;
  return expanded_copy(unsqueeze(x, d + 1), expanded, out);
}

}  // namespace colony
