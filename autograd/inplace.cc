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
    int64_t extent = base_.offset + 1;
    for (size_t d = 0; d < base_.sizes.size(); ++d) extent += (base_.sizes[d] - 1) * base_.strides[d];
    if (g.numel() == 0) return {g, Tensor()};
    Tensor buffer = raw::empty({extent}, TensorOptions(g.dtype()).device(g.device()));
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

// PyTorch's refusals, checked while grad mode is on.
void check_inplace_allowed(const Tensor& self, const char* op) {
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

// Writes `out` (the recorded result) into self and makes it self's history, or its base's.
void rebase_history(Tensor& self, const Tensor& out, const char* op) {
  if (out.sizes() != self.sizes()) {
    throw std::invalid_argument(std::string(op) + ": output with shape " + shape_str(self.sizes()) +
                                " doesn't match the broadcast shape " + shape_str(out.sizes()));
  }
  raw::copy_(self, out);
  if (!out.requires_grad()) return;
  Edge recorded = autograd::gradient_edge(out);
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

// A unary op without an in-place raw kernel: the raw result is written back.
template <typename OutOfPlace>
Tensor& unary_inplace(Tensor& self, const char* op, raw::UnaryOp raw_op, bool reads_old_self, OutOfPlace outplace) {
  return apply_inplace(
      self, op, {}, reads_old_self, [&] { raw::copy_(self, raw::unary(raw_op, self)); }, outplace);
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

Tensor& Tensor::abs_() {
  return unary_inplace(*this, "abs_", raw::UnaryOp::Abs, true, [](const Tensor& s) { return colony::abs(s); });
}

Tensor& Tensor::exp_() {
  return unary_inplace(*this, "exp_", raw::UnaryOp::Exp, false, [](const Tensor& s) { return colony::exp(s); });
}

Tensor& Tensor::log_() {
  return unary_inplace(*this, "log_", raw::UnaryOp::Log, true, [](const Tensor& s) { return colony::log(s); });
}

Tensor& Tensor::sqrt_() {
  return unary_inplace(*this, "sqrt_", raw::UnaryOp::Sqrt, false, [](const Tensor& s) { return colony::sqrt(s); });
}

Tensor& Tensor::relu_() {
  return unary_inplace(*this, "relu_", raw::UnaryOp::Relu, false, [](const Tensor& s) { return colony::relu(s); });
}

Tensor& Tensor::sigmoid_() {
  return unary_inplace(*this, "sigmoid_", raw::UnaryOp::Sigmoid, false, [](const Tensor& s) { return colony::sigmoid(s); });
}

Tensor& Tensor::tanh_() {
  return unary_inplace(*this, "tanh_", raw::UnaryOp::Tanh, false, [](const Tensor& s) { return colony::tanh(s); });
}

}  // namespace colony
