// The differentiable in-place Tensor members (add_, mul_, relu_, ...), recorded as PyTorch does.
//
// With nothing to record (grad mode off, or no tensor involved requires grad) the raw op writes
// in place. Otherwise the out-of-place op runs on a stand-in for self's current value and history
// (a copy when the gradient formula reads self's old value, else an alias), its result is written
// into self, and self's history is rebased onto the node that op recorded. Through a tracked view
// the base's history is rebased instead, onto a CopySlices node: the base's gradient outside the
// view's elements goes to the base's old history, inside them to the recorded node.
//
// The result is computed out of place and copied back, so an in-place op inside the graph costs an
// extra buffer and copy (PyTorch writes directly); what it buys is the same gradients and the same
// errors as PyTorch with one definition of each derivative.
//
// The elementwise members (sin_, atan2_, eq_, ...) are one row each of tensor/tensor.h's tables
// COLONY_FOR_EACH_INPLACE_*, expanded at the end of this file through inplace_result: the
// out-of-place function written back, also with nothing to record (they have no in-place raw
// kernel), under torch's rules for what self can hold (its shape; its dtype: torch's canCast).
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/engine/function_node.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "autograd/engine/view_tracking.h"
#include "ops/elementwise_detail.h"
#include "ops/raw_ops.h"

namespace colony {
namespace {

using autograd::Edge;
using autograd::Geometry;
using autograd::Node;

// The base's gradient split at the view's elements: outside them to the base's old history
// (input 0), inside them to the node recorded for the write (input 1).
class CopySlices : public Node {
 public:
  CopySlices(Geometry base, Geometry view) : base_(std::move(base)), view_(std::move(view)) {}
  std::string name() const override { return "CopySlices"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    const Tensor& g = grads[0];
    if (g.numel() == 0) return {g, Tensor()};
    // The buffer reaches the view's elements too: as_strided_ can move a view past its base's. Its
    // elements are zero where no base element lies (gaps of a strided base, past its ends), the
    // gradient the write's node receives there.
    const int64_t extent = std::max(base_.end(), view_.end());
    Tensor buffer = raw::zeros({extent}, TensorOptions(g.dtype()).device(g.device()));
    Tensor base_grad = strided(buffer, base_);
    raw::copy_(base_grad, g);
    Tensor window = strided(buffer, view_);
    Tensor view_grad = raw::clone(window);
    raw::fill_(window, 0.0);
    return {base_grad, view_grad};
  }

 private:
  static Tensor strided(const Tensor& buffer, const Geometry& g) {
    return Tensor(std::make_shared<TensorImpl>(buffer.storage(), g.sizes, g.strides, g.offset, buffer.dtype()));
  }
  Geometry base_, view_;
};

}  // namespace

// PyTorch's refusals, checked while grad mode is on.
void autograd::detail::check_inplace_allowed(const Tensor& self, const char* op) {
  if (!GradMode::is_enabled()) return;
  const Tensor& base = autograd::view_base_of(self);
  if (!base.defined()) {
    if (self.requires_grad() && self.is_leaf()) {
      throw std::runtime_error(std::string(op) +
                               ": a leaf Variable that requires grad is being used in an in-place operation.");
    }
    return;
  }
  if (base.requires_grad() && base.is_leaf()) {
    throw std::runtime_error(std::string(op) +
                             ": a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  if (AutogradMetaAccess::get(self).multi_output_view && (self.requires_grad() || base.requires_grad())) {
    throw std::runtime_error(
        std::string(op) +
        ": this tensor is a view and is being modified inplace. This view is the output of a function that "
        "returns multiple views (split, chunk). Such functions do not allow the output views to be modified "
        "inplace. You should replace the inplace operation by an out-of-place one.");
  }
}

void autograd::detail::rebase_history(Tensor& self, const Edge& recorded) {
  const Tensor& base = autograd::view_base_of(self);
  if (!base.defined()) {
    AutogradMeta& meta = AutogradMetaAccess::get(self);
    meta.grad_fn = recorded.fn;
    meta.output_nr = recorded.input_nr;
    return;
  }
  auto node = std::make_shared<CopySlices>(Geometry::of(base), Geometry::of(self));
  node->next_edges = {autograd::gradient_edge(base), recorded};
  node->outputs.push_back(autograd::TensorMeta::of(base));
  AutogradMeta& base_meta = AutogradMetaAccess::get(base);
  base_meta.grad_fn = node;
  base_meta.output_nr = 0;
  // The view's own history: derived from the base's new one.
  autograd::derive_view_history(self);
}

namespace {

using autograd::detail::check_inplace_allowed;

bool any_requires_grad(const Tensor& self, const std::vector<const Tensor*>& others) {
  if (!GradMode::is_enabled()) return false;
  if (autograd::requires_grad_safe(self)) return true;
  const Tensor& base = autograd::view_base_of(self);
  if (base.defined() && base.requires_grad()) return true;
  for (const Tensor* t : others) {
    if (autograd::requires_grad_safe(*t)) return true;
  }
  return false;
}

// Self's current value with self's current history: what the out-of-place op differentiates.
Tensor stand_in(const Tensor& self, bool copy_value) {
  Tensor src = copy_value ? raw::clone(self) : raw::alias(self);
  Edge e = autograd::gradient_edge(self);
  if (e.valid()) {
    AutogradMeta& meta = AutogradMetaAccess::get(src);
    meta.grad_fn = e.fn;
    meta.output_nr = e.input_nr;
  }
  return src;
}

// Writes an op's result into self: PyTorch's refusals of a result whose shape (a broadcast larger
// than self) or dtype (floating into integral, anything into bool) self cannot take.
void write_back(Tensor& self, const Tensor& out, const char* op) {
  if (out.sizes() != self.sizes()) {
    throw std::invalid_argument(std::string(op) + ": output with shape " + shape_str(self.sizes()) +
                                " doesn't match the broadcast shape " + shape_str(out.sizes()));
  }
  raw::detail::check_castable(op, out.dtype(), self.dtype());
  raw::copy_(self, out);
}

// Writes `out` (the recorded result) into self and makes it self's history, or its base's.
void rebase_history(Tensor& self, const Tensor& out, const char* op) {
  write_back(self, out, op);
  if (!out.requires_grad()) return;
  autograd::detail::rebase_history(self, autograd::gradient_edge(out));
}

// One in-place op: `raw_write()` when nothing is recorded, else `outplace(stand_in)`.
template <typename RawWrite, typename OutOfPlace>
Tensor& apply_inplace(Tensor& self, const char* op, std::vector<const Tensor*> others, bool reads_old_self,
                      RawWrite raw_write, OutOfPlace outplace) {
  check_inplace_allowed(self, op);
  if (!any_requires_grad(self, others)) {
    raw_write();
    return self;
  }
  Tensor out = outplace(stand_in(self, reads_old_self));
  rebase_history(self, out, op);
  return self;
}

// What an in-place op's derivative needs of self's value before the write (the tables' third
// column, tensor/tensor.h): reads_self, a copy; not_self, nothing (the stand-in aliases self); zero,
// a result recorded with a zero gradient (torch's EqBackward: the comparisons' results are bool and
// carry no history of their own); not_implemented, a result whose backward throws, as torch's.
enum class Derivative { reads_self, not_self, zero, not_implemented };

// An op without an in-place raw kernel: `outplace(self)` computed and written back, the raw write
// being the same call with nothing to record.
template <typename OutOfPlace>
Tensor& inplace_result(Tensor& self, const char* op, std::vector<const Tensor*> others, Derivative derivative,
                       OutOfPlace outplace) {
  auto recorded = [&](const Tensor& s) -> Tensor {
    Tensor out = outplace(s);
    if (derivative == Derivative::reads_self || derivative == Derivative::not_self) return out;
    raw::detail::check_castable(op, out.dtype(), s.dtype());
    out = raw::to(out, out.device(), s.dtype());
    if (!autograd::needs_grad(s)) return out;
    const std::string name = std::string(op) + "Backward";
    if (derivative == Derivative::zero) {
      autograd::record(name, {s}, out, {}, [](const autograd::detail::Grads& g, const autograd::detail::Needs&) {
        return autograd::detail::Grads{raw::zeros_like(g[0])};
      });
    } else {
      const std::string what = std::string("derivative for aten::") + op + " is not implemented";
      autograd::record(name, {s}, out, {}, [what](const autograd::detail::Grads&,
                                                  const autograd::detail::Needs&) -> autograd::detail::Grads {
        throw std::runtime_error(what);
      });
    }
    return out;
  };
  return apply_inplace(
      self, op, std::move(others), derivative == Derivative::reads_self, [&] { write_back(self, outplace(self), op); },
      recorded);
}

}  // namespace

Tensor& autograd::detail::record_inplace(Tensor& self, const char* op, std::vector<const Tensor*> others,
                                         bool reads_old_self, const std::function<void()>& raw_write,
                                         const std::function<Tensor(const Tensor&)>& outplace) {
  return apply_inplace(self, op, std::move(others), reads_old_self, raw_write, outplace);
}

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  return apply_inplace(
      *this, "add_", {&other}, false, [&] { raw::detail::add_(*this, other, alpha); },
      [&](const Tensor& s) { return colony::add(s, other, alpha); });
}

Tensor& Tensor::add_(double value) {
  return apply_inplace(
      *this, "add_", {}, false, [&] { raw::binary_(raw::BinaryOp::Add, *this, value); },
      [&](const Tensor& s) { return colony::add(s, value); });
}

Tensor& Tensor::sub_(const Tensor& other, double alpha) {
  return apply_inplace(
      *this, "sub_", {&other}, false, [&] { raw::detail::add_(*this, other, -alpha); },
      [&](const Tensor& s) { return colony::sub(s, other, alpha); });
}

Tensor& Tensor::sub_(double value) {
  return apply_inplace(
      *this, "sub_", {}, false, [&] { raw::binary_(raw::BinaryOp::Sub, *this, value); },
      [&](const Tensor& s) { return colony::sub(s, value); });
}

Tensor& Tensor::mul_(const Tensor& other) {
  // d(self * other)/d other reads self's old value.
  return apply_inplace(
      *this, "mul_", {&other}, true, [&] { raw::binary_(raw::BinaryOp::Mul, *this, other); },
      [&](const Tensor& s) { return colony::mul(s, other); });
}

Tensor& Tensor::mul_(double value) {
  return apply_inplace(
      *this, "mul_", {}, false, [&] { raw::binary_(raw::BinaryOp::Mul, *this, value); },
      [&](const Tensor& s) { return colony::mul(s, value); });
}

Tensor& Tensor::div_(const Tensor& other) {
  return apply_inplace(
      *this, "div_", {&other}, true, [&] { raw::binary_(raw::BinaryOp::Div, *this, other); },
      [&](const Tensor& s) { return colony::div(s, other); });
}

Tensor& Tensor::div_(double value) {
  return apply_inplace(
      *this, "div_", {}, false, [&] { raw::binary_(raw::BinaryOp::Div, *this, value); },
      [&](const Tensor& s) { return colony::div(s, value); });
}

Tensor& Tensor::pow_(double exponent) {
  return apply_inplace(
      *this, "pow_", {}, true, [&] { raw::binary_(raw::BinaryOp::Pow, *this, exponent); },
      [&](const Tensor& s) { return colony::pow(s, exponent); });
}

Tensor& Tensor::clamp_(std::optional<double> min, std::optional<double> max) {
  return apply_inplace(
      *this, "clamp_", {}, true, [&] { raw::clamp_(*this, min, max); },
      [&](const Tensor& s) { return colony::clamp(s, min, max); });
}

Tensor& Tensor::neg_() {
  return apply_inplace(
      *this, "neg_", {}, false, [&] { raw::binary_(raw::BinaryOp::Mul, *this, -1.0); },
      [](const Tensor& s) { return colony::neg(s); });
}

// One member per row of the tables (tensor/tensor.h).
#define COLONY_DEFINE_INPLACE_UNARY(member, fn, derivative)                                                 \
  Tensor& Tensor::member() {                                                                                \
    return inplace_result(*this, #member, {}, Derivative::derivative,                                       \
                          [](const Tensor& s) { return colony::fn(s); });                                   \
  }
COLONY_FOR_EACH_INPLACE_UNARY(COLONY_DEFINE_INPLACE_UNARY)
#undef COLONY_DEFINE_INPLACE_UNARY

#define COLONY_DEFINE_INPLACE_BINARY(member, fn, derivative)                                                \
  Tensor& Tensor::member(const Tensor& other) {                                                             \
    return inplace_result(*this, #member, {&other}, Derivative::derivative,                                 \
                          [&](const Tensor& s) { return colony::fn(s, other); });                           \
  }
COLONY_FOR_EACH_INPLACE_BINARY(COLONY_DEFINE_INPLACE_BINARY)
#undef COLONY_DEFINE_INPLACE_BINARY

#define COLONY_DEFINE_INPLACE_SCALAR(member, fn, derivative)                                                \
  Tensor& Tensor::member(double other) {                                                                    \
    return inplace_result(*this, #member, {}, Derivative::derivative,                                       \
                          [&](const Tensor& s) { return colony::fn(s, other); });                           \
  }
COLONY_FOR_EACH_INPLACE_SCALAR(COLONY_DEFINE_INPLACE_SCALAR)
#undef COLONY_DEFINE_INPLACE_SCALAR

Tensor& Tensor::pow_(const Tensor& exponent) {
  return apply_inplace(
      *this, "pow_", {&exponent}, true, [&] { raw::binary_(raw::BinaryOp::Pow, *this, exponent); },
      [&](const Tensor& s) { return colony::pow(s, exponent); });
}

namespace {

// torch's float_power_ refuses a self that cannot hold the float64 result.
void check_float_power_base(const Tensor& self) {
  if (self.dtype() != kFloat64) {
    throw std::invalid_argument(std::string("float_power_: the base given to float_power_ has dtype ") +
                                raw::detail::torch_type_name(self.dtype()) +
                                " but the operation's result requires dtype Double");
  }
}

}  // namespace

Tensor& Tensor::float_power_(const Tensor& exponent) {
  check_float_power_base(*this);
  return inplace_result(*this, "float_power_", {&exponent}, Derivative::reads_self,
                        [&](const Tensor& s) { return colony::float_power(s, exponent); });
}

Tensor& Tensor::float_power_(double exponent) {
  check_float_power_base(*this);
  return inplace_result(*this, "float_power_", {}, Derivative::reads_self,
                        [&](const Tensor& s) { return colony::float_power(s, exponent); });
}

Tensor& Tensor::logit_(std::optional<double> eps) {
  return inplace_result(*this, "logit_", {}, Derivative::reads_self,
                        [&](const Tensor& s) { return colony::logit(s, eps); });
}

Tensor& Tensor::polygamma_(int64_t n) {
  return inplace_result(*this, "polygamma_", {}, Derivative::reads_self,
                        [&](const Tensor& s) { return colony::polygamma(n, s); });
}

Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  return inplace_result(*this, "nan_to_num_", {}, Derivative::reads_self,
                        [&](const Tensor& s) { return colony::nan_to_num(s, nan, posinf, neginf); });
}

Tensor& Tensor::lerp_(const Tensor& end, double weight) {
  return inplace_result(*this, "lerp_", {&end}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::lerp(s, end, weight); });
}

Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  return inplace_result(*this, "lerp_", {&end, &weight}, Derivative::reads_self,
                        [&](const Tensor& s) { return colony::lerp(s, end, weight); });
}

Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2, double value) {
  return inplace_result(*this, "addcmul_", {&tensor1, &tensor2}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::addcmul(s, tensor1, tensor2, value); });
}

Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2, double value) {
  return inplace_result(*this, "addcdiv_", {&tensor1, &tensor2}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::addcdiv(s, tensor1, tensor2, value); });
}

Tensor& Tensor::cumsum_(int64_t dim) {
  return inplace_result(*this, "cumsum_", {}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::cumsum(s, dim); });
}

Tensor& Tensor::cumprod_(int64_t dim) {
  return inplace_result(*this, "cumprod_", {}, Derivative::reads_self,
                        [&](const Tensor& s) { return colony::cumprod(s, dim); });
}

Tensor& Tensor::tril_(int64_t diagonal) {
  return inplace_result(*this, "tril_", {}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::tril(s, diagonal); });
}

Tensor& Tensor::triu_(int64_t diagonal) {
  return inplace_result(*this, "triu_", {}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::triu(s, diagonal); });
}

Tensor& Tensor::div_(const Tensor& other, const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) return div_(other);
  return inplace_result(*this, "div_", {&other}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::div(s, other, rounding_mode); });
}

Tensor& Tensor::div_(double other, const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) return div_(other);
  return inplace_result(*this, "div_", {}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::div(s, other, rounding_mode); });
}

Tensor& Tensor::round_(int64_t decimals) {
  return inplace_result(*this, "round_", {}, Derivative::not_self,
                        [&](const Tensor& s) { return colony::round(s, decimals); });
}

Tensor& Tensor::fill_diagonal_(double value, bool wrap) {
  const char* op = "fill_diagonal_";
  if (dim() < 2) throw std::invalid_argument(std::string(op) + ": dimensions must larger than 1");
  if (dim() > 2) {
    for (int64_t d = 1; d < dim(); ++d) {
      if (size(d) != size(0)) throw std::invalid_argument(std::string(op) + ": all dimensions of input must be of equal length");
    }
  }
  // The diagonal's positions in the row-major order of self's shape, as ATen steps through a
  // contiguous tensor: every (1 + cols + cols*cols2 + ...) elements, up to the end of the first
  // min(rows, cols) rows, or to the end of the tensor with wrap (2-D only).
  const int64_t n = numel();
  int64_t step = 0, row = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    step += row;
    row *= size(d);
  }
  int64_t end = n;
  if (dim() == 2 && !wrap) end = std::min(size(0), size(1)) * size(1);
  std::vector<bool> marks(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < end; i += step) marks[static_cast<size_t>(i)] = true;
  return masked_fill_(raw::from_vector(marks, sizes(), TensorOptions(kBool).device(device())), value);
}

}  // namespace colony
