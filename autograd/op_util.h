// Shared by the op files: the names a backward closure uses. Not part of the public API.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <limits>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/engine/function_node.h"
#include "ops/raw_ops.h"

namespace colony::autograd::detail {

using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

// Records a node whose closure is written with the differentiable ops of autograd/ops.h
// (Backward::Differentiable): in an ordinary backward (grad mode off) they are the raw ops and record
// nothing; under create_graph they record the gradients' graph, so the op can be differentiated
// twice. The closure runs with autocast off: a backward computes in the dtypes the forward left.
template <typename Outputs, typename Fn>
void record_differentiable(const std::string& name, const std::vector<Tensor>& inputs, Outputs& outputs,
                           std::vector<SavedTensor> saved, Fn fn) {
  record(name, inputs, outputs, std::move(saved),
         [fn = std::move(fn)](const Grads& g, const Needs& needs) -> Grads {
           AutocastGuard cpu(DeviceType::CPU, /*enabled=*/false), cuda(DeviceType::CUDA, /*enabled=*/false);
           return fn(g, needs);
         },
         Backward::Differentiable);
}

// A 0-d tensor of `value` with `like`'s dtype and device, to broadcast in where() and friends.
inline Tensor scalar_like(double value, const Tensor& like) {
  return raw::scalar_tensor(value, TensorOptions(like.dtype()).device(like.device()));
}

inline Tensor zeros_of(const Shape& shape, const Tensor& like) {
  return raw::zeros(shape, TensorOptions(like.dtype()).device(like.device()));
}

// g written into the sub-block place(full) of zeros shaped `in_shape` (a view's or a corner's
// gradient). Its own gradient (under create_graph) is that sub-block of the incoming one: `place`
// again, which must be a differentiable view op.
template <typename Place>
Tensor placed_in_zeros(const std::string& name, const Shape& in_shape, const Tensor& g, Place place) {
  Tensor full = zeros_of(in_shape, g);
  {
    NoGradGuard raw_write;
    Tensor block = place(full);
    raw::copy_(block, g);
  }
  if (needs_grad(g)) {
    record_differentiable(name, {g}, full, {}, [place](const Grads& gg, const Needs&) -> Grads { return {place(gg[0])}; });
  }
  return full;
}


// The largest finite value of a floating dtype (torch.finfo(dtype).max); its negation is the lowest.
inline double largest_finite(DType dtype) {
  switch (dtype) {
    case kFloat64: return std::numeric_limits<double>::max();
    case kFloat16: return 65504.0;
    case kBFloat16: return 3.3895313892515355e38;
    default: return std::numeric_limits<float>::max();
  }
}

// t with the order of its elements along dim reversed (an index_select of descending positions):
// the reverse scans of the scans' gradients (cumsum.cc, scan.cc).
inline Tensor reversed_along(const Tensor& t, int64_t dim) {
  const int64_t n = t.size(dim);
  Tensor positions = raw::arange(static_cast<double>(n - 1), -1.0, -1.0, TensorOptions(kInt64).device(t.device()));
  return raw::index_select(t, dim, positions);
}

// Whether a backward closure may overwrite g, one of its incoming gradients, instead of allocating
// its result: nothing else holds g or any view of its memory (not the engine, a hook, a capture of
// autograd::grad, nor the caller of backward), the memory is Colony's own (not from_blob), and g
// is not part of a graph itself (create_graph). FunctionNode::apply hands its closure the engine's
// only copy of each gradient and drops it when the closure returns.
inline bool sole_owner(const Tensor& g) {
  return g.defined() && g.impl_ptr().use_count() == 1 && g.impl()->storage.use_count() == 1 &&
         g.impl()->storage->allocator() != nullptr && g.is_contiguous() && !g.requires_grad();
}

// Throws "<op>: expected <what> to be a <dims>-D tensor, got [..]" unless t has `dims` dims.
inline void check_rank(const Tensor& t, int64_t dims, const char* op, const char* what) {
  if (t.dim() != dims) {
    throw std::invalid_argument(std::string(op) + ": expected " + what + " to be a " + std::to_string(dims) +
                                "-D tensor, got " + shape_str(t.sizes()));
  }
}
// A broadcast operand's gradient summed back to its own shape (the engine casts it to its dtype).
inline Tensor reduce_to(const Tensor& g, const Shape& shape) { return g.sizes() == shape ? g : raw::sum_to(g, shape); }

// record() or record_differentiable(), as `kind` says the closure is written.
template <typename Outputs, typename Fn>
void record_as(Backward kind, const std::string& name, const std::vector<Tensor>& inputs, Outputs& outputs,
               std::vector<SavedTensor> saved, Fn fn) {
  if (kind == Backward::Differentiable) {
    record_differentiable(name, inputs, outputs, std::move(saved), std::move(fn));
  } else {
    record(name, inputs, outputs, std::move(saved), std::move(fn));
  }
}

// An elementwise unary op y = f(x) (raw::unary(op, x, attrs)) recorded with its derivative
// deriv(g, saved) -> g f'(x), written through the saved input x (unary_with_input) or the saved
// output y (unary_with_output), as torch's derivatives.yaml writes the op's formula. `kind`:
// whether deriv is written with raw ops or the differentiable ones (then create_graph works).
template <typename Deriv>
Tensor unary_with_input(raw::UnaryOp op, const char* name, const Tensor& x, Deriv deriv,
                        const raw::UnaryAttrs& attrs = {}, Backward kind = Backward::Raw) {
  Tensor out = raw::unary(op, x, attrs);
  if (needs_grad(x)) {
    SavedTensor sx(x);
    record_as(kind, name, {x}, out, {sx}, [sx, deriv](const Grads& g, const Needs&) -> Grads {
      return {deriv(g[0], sx.unpack())};
    });
  }
  return out;
}

template <typename Deriv>
Tensor unary_with_output(raw::UnaryOp op, const char* name, const Tensor& x, Deriv deriv,
                         Backward kind = Backward::Raw) {
  Tensor out = raw::unary(op, x);
  if (needs_grad(x)) {
    SavedTensor sy(out, /*is_output=*/true);
    record_as(kind, name, {x}, out, {sy}, [sy, deriv](const Grads& g, const Needs&) -> Grads {
      return {deriv(g[0], sy.unpack())};
    });
  }
  return out;
}

// A piecewise constant op (floor, sign, trunc, ...): its gradient is zero everywhere, PyTorch's
// convention at the jumps too (a constant, so differentiable again).
inline Tensor piecewise_constant(raw::UnaryOp op, const char* name, const Tensor& x) {
  Tensor out = raw::unary(op, x);
  if (needs_grad(x)) {
    record(name, {x}, out, {}, [](const Grads& g, const Needs&) -> Grads { return {raw::zeros_like(g[0])}; },
           Backward::Differentiable);
  }
  return out;
}

// Saves `t` only when `wanted`, so an op does not keep alive what no gradient formula reads.
inline SavedTensor save_if(bool wanted, const Tensor& t) { return wanted ? SavedTensor(t) : SavedTensor(); }

// PyTorch's refusals of an in-place write into self while grad mode is on: a leaf that requires
// grad, a view of one, an output of split/chunk. Defined in autograd/inplace.cc.
void check_inplace_allowed(const Tensor& self, const char* op);

// Makes `recorded` (a node's output) the history of self, written in place already: self's own when
// self is not a view, else its base's through a CopySlices node (the base's gradient outside the
// view's elements to its old history), the view's derived from it. What every recorded in-place op
// ends with, and custom Functions' ctx->mark_dirty(). Defined in autograd/inplace.cc.
void rebase_history(Tensor& self, const Edge& recorded);

// An in-place write recorded as autograd/inplace.cc records its members (add_, relu_, ...), for
// in-place members defined in other files (index_put_): raw_write() when nothing needs a gradient,
// else outplace(stand-in for self) written into self, with self's (or its base's) history rebased.
Tensor& record_inplace(Tensor& self, const char* op, std::vector<const Tensor*> others, bool reads_old_self,
                       const std::function<void()>& raw_write, const std::function<Tensor(const Tensor&)>& outplace);

// A value-selecting reduction along dim (mode, median, nanmedian, kthvalue): `selected`, the raw
// op's (values, int64 indices) of t, with the values gathered again through the differentiable
// gather when t needs a gradient, so each value's gradient goes to the element it was taken from
// (torch's value_selecting_reduction_backward). Defined in autograd/order_stats.cc.
std::pair<Tensor, Tensor> value_selected(const Tensor& t, int64_t dim, bool keepdim, std::pair<Tensor, Tensor> selected);

}  // namespace colony::autograd::detail
