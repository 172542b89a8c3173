// The raw in-place Tensor members: copy_/fill_/zero_ and in-place arithmetic, and the rule for
// when they are refused (tensor/inplace_check.h).
#include <stdexcept>
#include <string>

#include "tensor/elementwise_detail.h"
#include "tensor/grad_mode.h"
#include "tensor/inplace_check.h"
#include "tensor/raw_ops.h"
#include "tensor/tensor.h"

namespace colony {
namespace detail {

void check_inplace_write(const Tensor& t, const char* op) {
  if (!GradMode::is_enabled() || !t.requires_grad()) return;
  if (t.is_leaf()) {
    throw std::runtime_error(std::string(op) +
                             ": a leaf Variable that requires grad is being used in an in-place operation.");
  }
  throw std::runtime_error(std::string(op) +
                           ": in-place operations on a tensor that is part of the autograd graph are not "
                           "recorded yet; use the out-of-place form (x = x.add(y) instead of x.add_(y)), "
                           "or write under NoGradGuard if no gradient should flow through the write");
}

}  // namespace detail

namespace {
void check_inplace(const Tensor& t, const char* op) { detail::check_inplace_write(t, op); }
}  // namespace

Tensor& Tensor::copy_(const Tensor& src) {
  check_inplace(*this, "copy_");
  raw::copy_(*this, src);
  return *this;
}

Tensor& Tensor::fill_(double value) {
  check_inplace(*this, "fill_");
  raw::fill_(*this, value);
  return *this;
}

Tensor& Tensor::zero_() {
  check_inplace(*this, "zero_");
  raw::fill_(*this, 0.0);
  return *this;
}

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  check_inplace(*this, "add_");
  raw::detail::add_(*this, other, alpha);
  return *this;
}

Tensor& Tensor::add_(double value) {
  check_inplace(*this, "add_");
  raw::binary_(raw::BinaryOp::Add, *this, value);
  return *this;
}

Tensor& Tensor::sub_(const Tensor& other) {
  check_inplace(*this, "sub_");
  raw::binary_(raw::BinaryOp::Sub, *this, other);
  return *this;
}

Tensor& Tensor::mul_(const Tensor& other) {
  check_inplace(*this, "mul_");
  raw::binary_(raw::BinaryOp::Mul, *this, other);
  return *this;
}

Tensor& Tensor::mul_(double value) {
  check_inplace(*this, "mul_");
  raw::binary_(raw::BinaryOp::Mul, *this, value);
  return *this;
}

Tensor& Tensor::div_(const Tensor& other) {
  check_inplace(*this, "div_");
  raw::binary_(raw::BinaryOp::Div, *this, other);
  return *this;
}

Tensor& Tensor::div_(double value) {
  check_inplace(*this, "div_");
  raw::binary_(raw::BinaryOp::Div, *this, value);
  return *this;
}

Tensor& Tensor::clamp_(std::optional<double> min, std::optional<double> max) {
  check_inplace(*this, "clamp_");
  raw::clamp_(*this, min, max);
  return *this;
}

}  // namespace colony
