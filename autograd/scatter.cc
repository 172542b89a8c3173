// scatter, scatter_reduce, index_fill and index_copy. Forward: raw::scatter_reduce (a copy of self
// with src combined in). Gradients, as torch's scatter_backward and scatter_reduce_backward:
//   scatter            self: g with the written positions zeroed; src: g gathered at index;
//   sum / mean         self: g (/ the count, mean); src: the same gathered at index;
//   amax / amin        shared evenly by the elements (of self and src) equal to the result;
//   prod               the product of the others, written without dividing by a zero: self's zeros
//                      and src's single zeros per position get the product of the rest;
// and with include_self = false, self gets no gradient where something was scattered.
// index_fill and index_copy are scatter with the 1-D index expanded along dim.
#include <limits>
#include <stdexcept>
#include <string>

#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

enum class Reduce { Sum, Prod, Mean, Amax, Amin };

Reduce parse_reduce(const std::string& reduce) {
  if (reduce == "sum") return Reduce::Sum;
  if (reduce == "prod") return Reduce::Prod;
  if (reduce == "mean") return Reduce::Mean;
  if (reduce == "amax") return Reduce::Amax;
  if (reduce == "amin") return Reduce::Amin;
  throw std::invalid_argument("scatter_reduce: expected reduce 'sum', 'prod', 'mean', 'amax' or 'amin', got '" +
                              reduce + "'");
}

// The value that leaves any element unchanged under the reduction (include_self = false starts
// every scattered-to position from it): 0, 1, or the dtype's lowest or highest value.
double identity_of(Reduce r, DType dtype) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (r == Reduce::Sum || r == Reduce::Mean) return 0.0;
  if (r == Reduce::Prod) return 1.0;
  const bool is_max = r == Reduce::Amax;
  if (is_floating(dtype)) return is_max ? -kInf : kInf;
  switch (dtype) {
    case kBool: return is_max ? 0.0 : 1.0;
    case kUInt8: return is_max ? 0.0 : 255.0;
    case kInt32: return is_max ? -2147483648.0 : 2147483647.0;
    default:  // int64: -2^63 exactly; 2^63 - 1 is no double, so the largest double below 2^63
      return is_max ? -9223372036854775808.0 : 9223372036854774784.0;
  }
}

Tensor full_of(const Shape& shape, double value, const Tensor& like) {
  return raw::full(shape, value, TensorOptions(like.dtype()).device(like.device()));
}

// self with the positions index names along dim set to `value`.
Tensor filled_at(const Tensor& self, int64_t dim, const Tensor& index, double value) {
  return raw::scatter_reduce(self, dim, index, full_of(index.sizes(), value, self), raw::ScatterOp::Assign);
}

// How many elements each position of self combines: 1 for self (include_self) plus the scattered ones.
Tensor scatter_counts(const Tensor& self, int64_t dim, const Tensor& index, bool include_self) {
  return raw::scatter_reduce(full_of(self.sizes(), include_self ? 1.0 : 0.0, self), dim, index,
                             full_of(index.sizes(), 1.0, self), raw::ScatterOp::Sum);
}

// The forward, raw: scatter_reduce(self, dim, index, src, reduce, include_self).
Tensor reduce_forward(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Reduce r,
                      bool include_self) {
  Tensor base = include_self ? self : filled_at(self, dim, index, identity_of(r, self.dtype()));
  const raw::ScatterOp op = r == Reduce::Prod   ? raw::ScatterOp::Prod
                            : r == Reduce::Amax ? raw::ScatterOp::Max
                            : r == Reduce::Amin ? raw::ScatterOp::Min
                                                : raw::ScatterOp::Sum;
  Tensor out = raw::scatter_reduce(base, dim, index, src, op);
  if (r != Reduce::Mean) return out;
  Tensor counts = scatter_counts(self, dim, index, include_self);
  counts = raw::masked_fill(counts, raw::binary(raw::BinaryOp::Eq, counts, 0.0), 1.0);  // untouched: self / 1
  if (is_floating(self.dtype())) return raw::div(out, counts);
  // Integers divide rounding down, as torch's.
  return raw::to(raw::unary(raw::UnaryOp::Floor, raw::div(out, counts)), self.device(), self.dtype());
}

// The corner of t with index's sizes (the elements a scatter reads when index is smaller than src).
Tensor corner(const Tensor& t, const Shape& sizes) {
  Tensor c = t;
  for (int64_t d = 0; d < c.dim(); ++d) {
    if (c.size(d) != sizes[d]) c = raw::narrow(c, d, 0, sizes[d]);
  }
  return c;
}

// g (index-shaped) as the gradient of src: zero outside the corner index reads.
Tensor to_src_shape(const Tensor& g, const Shape& src_shape) {
  if (g.sizes() == src_shape) return g;
  Tensor full = autograd::detail::zeros_of(src_shape, g);
  Tensor c = corner(full, g.sizes());
  raw::copy_(c, g);
  return full;
}

Tensor as_dtype(const Tensor& mask, const Tensor& like) { return raw::to(mask, like.device(), like.dtype()); }

void check_index(const Tensor& index, const char* op) {
  if (!index.defined() || index.dtype() != kInt64) {
    throw std::invalid_argument(std::string(op) + ": expected an int64 index, got " +
                                (index.defined() ? dtype_name(index.dtype()) : "an undefined tensor"));
  }
}

}  // namespace

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_index(index, "scatter");
  Tensor out = raw::scatter_reduce(self, dim, index, src, raw::ScatterOp::Assign);
  if (autograd::needs_grad(self, src)) {
    SavedTensor si(index);
    const Shape src_shape = src.sizes();
    record("ScatterBackward", {self, src}, out, {si}, [si, dim, src_shape](const Grads& g, const Needs& needs) -> Grads {
      Tensor idx = si.unpack();
      return {needs[0] ? filled_at(g[0], dim, idx, 0.0) : Tensor(),
              needs[1] ? to_src_shape(raw::gather(g[0], dim, idx), src_shape) : Tensor()};
    });
  }
  return out;
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, double value) {
  check_index(index, "scatter");
  if (!self.defined()) throw std::invalid_argument("scatter: expected a defined input tensor");
  Tensor out = filled_at(self, dim, index, value);
  if (autograd::needs_grad(self)) {
    SavedTensor si(index);
    record("ScatterBackward", {self}, out, {si}, [si, dim](const Grads& g, const Needs&) -> Grads {
      return {filled_at(g[0], dim, si.unpack(), 0.0)};
    });
  }
  return out;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  const Reduce r = parse_reduce(reduce);
  check_index(index, "scatter_reduce");
  Tensor out = reduce_forward(self, dim, index, src, r, include_self);
  if (!autograd::needs_grad(self, src)) return out;
  SavedTensor sself(self), ssrc(src), si(index), sout(out, /*is_output=*/true);
  record("ScatterReduceBackward", {self, src}, out, {sself, ssrc, si, sout},
         [=](const Grads& g, const Needs& needs) -> Grads {
           const Tensor& grad = g[0];
           Tensor x = sself.unpack(), s_full = ssrc.unpack(), idx = si.unpack(), result = sout.unpack();
           Tensor s = corner(s_full, idx.sizes());  // the elements of src that were read
           Tensor grad_self, grad_src;
           if (r == Reduce::Sum) {
             grad_self = grad;
             grad_src = raw::gather(grad, dim, idx);
           } else if (r == Reduce::Mean) {
             Tensor counts = scatter_counts(x, dim, idx, include_self);
             counts = raw::masked_fill(counts, raw::binary(raw::BinaryOp::Eq, counts, 0.0), 1.0);
             grad_self = raw::div(grad, counts);
             grad_src = raw::gather(grad_self, dim, idx);
           } else if (r == Reduce::Amax || r == Reduce::Amin) {
             Tensor value = raw::gather(result, dim, idx);
             Tensor self_is = as_dtype(raw::binary(raw::BinaryOp::Eq, x, result), grad);
             Tensor src_is = as_dtype(raw::binary(raw::BinaryOp::Eq, s, value), grad);
             Tensor shared = raw::div(grad, raw::scatter_reduce(self_is, dim, idx, src_is, raw::ScatterOp::Sum));
             grad_self = raw::mul(self_is, shared);
             grad_src = raw::mul(src_is, raw::gather(shared, dim, idx));
           } else {  // prod
             Tensor self_zero = raw::binary(raw::BinaryOp::Eq, x, 0.0);
             Tensor masked_self = raw::masked_fill(x, self_zero, 1.0);
             grad_self = raw::div(raw::mul(grad, reduce_forward(masked_self, dim, idx, s, r, include_self)), masked_self);
             Tensor src_zero = raw::binary(raw::BinaryOp::Eq, s, 0.0);
             Tensor zeros_at = raw::gather(
                 raw::scatter_reduce(autograd::detail::zeros_of(x.sizes(), x), dim, idx, as_dtype(src_zero, x),
                                     raw::ScatterOp::Sum),
                 dim, idx);
             Tensor single_zero =
                 raw::binary(raw::BinaryOp::LogicalAnd, src_zero, raw::binary(raw::BinaryOp::Eq, zeros_at, 1.0));
             // A src element that is its position's only zero: the product of the others, computed
             // with it replaced by 1. Elsewhere result / src (0 where the position has other zeros).
             Tensor without_it = reduce_forward(x, dim, idx, raw::masked_fill(s, single_zero, 1.0), r, include_self);
             grad_src = raw::where(single_zero, raw::gather(raw::mul(grad, without_it), dim, idx),
                                   raw::div(raw::gather(raw::mul(grad, result), dim, idx), raw::masked_fill(s, src_zero, 1.0)));
           }
           if (!include_self && needs[0]) grad_self = filled_at(grad_self, dim, idx, 0.0);
           return {needs[0] ? grad_self : Tensor(), needs[1] ? to_src_shape(grad_src, s_full.sizes()) : Tensor()};
         });
  return out;
}

namespace {

// A 1-D index (or 0-D) of positions along dim, expanded to `shape` (dim's size the index's length).
Tensor expanded_index(const Tensor& index, int64_t d, Shape shape, const char* op) {
  check_index(index, op);
  if (index.dim() > 1) {
    throw std::invalid_argument(std::string(op) + ": expected a 0-D or 1-D index, got " + std::to_string(index.dim()) +
                                "-D");
  }
  const int64_t n = index.numel();
  shape[d] = n;
  Shape view(shape.size(), 1);
  view[d] = n;
  return raw::contiguous(raw::expand(raw::reshape(index, view), shape));
}

}  // namespace

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, double value) {
  if (!self.defined()) throw std::invalid_argument("index_fill: expected a defined input tensor");
  if (self.dim() == 0) return scatter(self, 0, raw::reshape(index, {}), value);
  const int64_t d = wrap_dim(dim, self.dim(), "index_fill");
  return scatter(self, d, expanded_index(index, d, self.sizes(), "index_fill"), value);
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  if (!value.defined()) throw std::invalid_argument("index_fill: expected a defined value tensor");
  if (value.dim() != 0) {
    throw std::invalid_argument("index_fill_ only supports a 0-dimensional value tensor, but got tensor with " +
                                std::to_string(value.dim()) + " dimension(s).");
  }
  // The filled elements as a mask (index checked by index_fill), each once however often index
  // names it: torch sums value's gradient over grad.index_select(dim, unique(index)).
  const Tensor zeros = raw::zeros(self.sizes(), TensorOptions(kFloat32).device(self.device()));
  const Tensor hit = index_fill(zeros, dim, index, 1.0);
  return masked_fill(self, raw::binary(raw::BinaryOp::Ne, hit, 0.0), value);
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  if (!self.defined() || !source.defined()) throw std::invalid_argument("index_copy: expected defined tensors");
  if (self.dim() == 0) return scatter(self, 0, raw::reshape(index, {}), raw::reshape(source, {}));
  const int64_t d = wrap_dim(dim, self.dim(), "index_copy");
  Shape want = self.sizes();
  want[d] = index.numel();
  if (source.sizes() != want) {
    throw std::invalid_argument("index_copy: expected source of shape " + shape_str(want) + " (the input's with dim " +
                                std::to_string(d) + " the index's length), got " + shape_str(source.sizes()));
  }
  return scatter(self, d, expanded_index(index, d, self.sizes(), "index_copy"), source);
}

}  // namespace colony
