// The in-place scatter and indexing members of Tensor (scatter_, scatter_add_, scatter_reduce_,
// index_fill_, index_copy_, index_add_, masked_fill_, masked_scatter_), recorded as
// autograd/inplace.cc records add_ (autograd::detail::record_inplace): with nothing to record,
// the out-of-place op's result is written into self; otherwise the out-of-place op runs on a
// stand-in for self (a copy where its node saves self: scatter_add_, scatter_reduce_) and self's
// history, or its view base's, is rebased onto the node it recorded. The out-of-place ops and their
// gradients are autograd/scatter.cc's, index.cc's and binary.cc's; index_add and masked_scatter,
// which had none, are defined here.
#include <stdexcept>
#include <string>

#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

// An in-place write of outplace(self) into self; the result must keep self's shape (a mask that
// broadcasts self to a larger shape is refused, as torch's "output with shape ..." error).
template <typename OutOfPlace>
Tensor& write_inplace(Tensor& self, const char* op, std::vector<const Tensor*> others, bool reads_old_self,
                      OutOfPlace outplace) {
  if (!self.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined tensor");
  return autograd::detail::record_inplace(
      self, op, std::move(others), reads_old_self,
      [&] {
        Tensor out = outplace(self);
        if (out.sizes() != self.sizes()) {
          throw std::invalid_argument(std::string(op) + ": output with shape " + shape_str(self.sizes()) +
                                      " doesn't match the broadcast shape " + shape_str(out.sizes()));
        }
        raw::copy_(self, out);
      },
      outplace);
}

// scatter_'s reduce argument: "add" is scatter_reduce's "sum", "multiply" its "prod".
std::string scatter_reduce_name(const std::string& reduce) {
  if (reduce == "add") return "sum";
  if (reduce == "multiply") return "prod";
  throw std::invalid_argument("scatter_: reduce argument must be either add or multiply, got '" + reduce + "'");
}

// torch gives scatter with reduce no derivative; neither does Colony (scatter_reduce_ has one).
Tensor refuse_scatter_reduce_gradient(const Tensor&) {
  throw std::runtime_error("scatter_: the derivative of scatter with reduce is not implemented (as torch's); use "
                           "scatter_reduce_, which has one");
}

void check_bool_mask(const Tensor& mask, const char* op) {
  if (!mask.defined() || mask.dtype() != kBool) {
    throw std::invalid_argument(std::string(op) + " only supports boolean masks, but got mask with dtype " +
                                (mask.defined() ? dtype_name(mask.dtype()) : std::string("undefined")));
  }
}

}  // namespace

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_reduce(self, dim, index, src, "sum", /*include_self=*/true);
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, double alpha) {
  if (!self.defined() || !source.defined()) throw std::invalid_argument("index_add: expected defined tensors");
  if (self.dtype() != source.dtype()) {
    throw std::invalid_argument(std::string("index_add(): self (") + dtype_name(self.dtype()) + ") and source (" +
                                dtype_name(source.dtype()) + ") must have the same scalar type");
  }
  // source's slices summed into zeros of self's shape (index_add's gradient to source is
  // index_select of the incoming gradient), then added to self with alpha.
  return add(self, index_add(self.sizes(), dim, index, source), alpha);
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  if (!self.defined() || !source.defined()) throw std::invalid_argument("masked_scatter: expected defined tensors");
  check_bool_mask(mask, "masked_scatter");
  if (self.dtype() != source.dtype()) {
    throw std::invalid_argument(std::string("masked_scatter: expected self and source to have same dtypes but got ") +
                                dtype_name(self.dtype()) + " and " + dtype_name(source.dtype()));
  }
  const Shape shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_scatter");
  const Tensor m = raw::contiguous(raw::expand(raw::to(mask, self.device(), kBool), shape));
  const Tensor x = expand(self, shape);
  // The k-th true element of the mask (in row-major order) takes source's k-th element.
  const Tensor taken = raw::cumsum(raw::reshape(m, {-1}), 0);  // int64: how many trues up to each
  const int64_t count = m.numel() == 0 ? 0 : raw::to(raw::select(taken, 0, m.numel() - 1), kCPU, kInt64).item<int64_t>();
  if (count > source.numel()) {
    throw std::invalid_argument("masked_scatter: Number of elements of source (" + std::to_string(source.numel()) +
                                ") < number of ones in mask (" + std::to_string(count) + ")");
  }
  if (count == 0) return where(m, x, x);  // nothing taken from source; a new tensor, as torch's
  const Tensor one = raw::ones({}, TensorOptions(kInt64).device(self.device()));
  const Tensor at = raw::clamp(raw::add(taken, one, -1.0), 0.0, std::nullopt);  // before the first true: 0, unused
  const Tensor picked = reshape(index_select(reshape(source, {-1}), 0, at), shape);
  return where(m, picked, x);
}

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  return write_inplace(*this, "scatter_", {&src}, false,
                       [&](const Tensor& s) { return colony::scatter(s, dim, index, src); });
}

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, double value) {
  return write_inplace(*this, "scatter_", {}, false,
                       [&](const Tensor& s) { return colony::scatter(s, dim, index, value); });
}

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce) {
  const std::string r = scatter_reduce_name(reduce);
  return autograd::detail::record_inplace(
      *this, "scatter_", {&src}, false,
      [&] { raw::copy_(*this, colony::scatter_reduce(*this, dim, index, src, r, true)); },
      refuse_scatter_reduce_gradient);
}

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, double value, const std::string& reduce) {
  const std::string r = scatter_reduce_name(reduce);
  if (!index.defined()) throw std::invalid_argument("scatter_: expected a defined index");
  const Tensor src = raw::full(index.sizes(), value, TensorOptions(dtype()).device(device()));
  return autograd::detail::record_inplace(
      *this, "scatter_", {}, false, [&] { raw::copy_(*this, colony::scatter_reduce(*this, dim, index, src, r, true)); },
      refuse_scatter_reduce_gradient);
}

Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  // scatter_reduce's node saves self whatever the reduction: the stand-in is a copy.
  return write_inplace(*this, "scatter_add_", {&src}, true,
                       [&](const Tensor& s) { return colony::scatter_add(s, dim, index, src); });
}

Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                                bool include_self) {
  // prod, amax and amin read self's old value in their gradient: the stand-in is a copy.
  return write_inplace(*this, "scatter_reduce_", {&src}, true, [&](const Tensor& s) {
    return colony::scatter_reduce(s, dim, index, src, reduce, include_self);
  });
}

Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, double value) {
  return write_inplace(*this, "index_fill_", {}, false,
                       [&](const Tensor& s) { return colony::index_fill(s, dim, index, value); });
}

Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Tensor& value) {
  return write_inplace(*this, "index_fill_", {&value}, false,
                       [&](const Tensor& s) { return colony::index_fill(s, dim, index, value); });
}

Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
  return write_inplace(*this, "index_copy_", {&source}, false,
                       [&](const Tensor& s) { return colony::index_copy(s, dim, index, source); });
}

Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, double alpha) {
  return write_inplace(*this, "index_add_", {&source}, false,
                       [&](const Tensor& s) { return colony::index_add(s, dim, index, source, alpha); });
}

Tensor& Tensor::masked_fill_(const Tensor& mask, double value) {
  check_bool_mask(mask, "masked_fill_");
  return write_inplace(*this, "masked_fill_", {}, false,
                       [&](const Tensor& s) { return colony::masked_fill(s, mask, value); });
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  check_bool_mask(mask, "masked_fill_");
  return write_inplace(*this, "masked_fill_", {&value}, false,
                       [&](const Tensor& s) { return colony::masked_fill(s, mask, value); });
}

Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  return write_inplace(*this, "masked_scatter_", {&source}, false,
                       [&](const Tensor& s) { return colony::masked_scatter(s, mask, source); });
}

}  // namespace colony
