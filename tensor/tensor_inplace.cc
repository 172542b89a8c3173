// The raw in-place Tensor members: copy_/fill_/zero_ and in-place arithmetic. Not recorded by
// autograd, and refused on a leaf that requires grad while grad mode is on, as in PyTorch (writing
// into a parameter must happen under NoGradGuard, as optimizers do).
#include <stdexcept>
#include <string>

#include "tensor/elementwise_detail.h"
#include "tensor/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace colony {
namespace {

void check_inplace(const Tensor& t, const char* op) {
  if (GradMode::is_enabled() && t.requires_grad() && t.is_leaf()) {
    throw std::runtime_error(std::string(op) +
                             ": a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src) {
  check_inplace(*this, "copy_");
  ops::copy_(*this, src);
  return *this;
}

Tensor& Tensor::fill_(double value) {
  check_inplace(*this, "fill_");
  ops::fill_(*this, value);
  return *this;
}

Tensor& Tensor::zero_() {
  check_inplace(*this, "zero_");
  ops::fill_(*this, 0.0);
  return *this;
}

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  check_inplace(*this, "add_");
  ops::detail::add_(*this, other, alpha);
  return *this;
}

Tensor& Tensor::add_(double value) {
  check_inplace(*this, "add_");
  ops::binary_(ops::BinaryOp::Add, *this, value);
  return *this;
}

Tensor& Tensor::sub_(const Tensor& other) {
  check_inplace(*this, "sub_");
  ops::binary_(ops::BinaryOp::Sub, *this, other);
  return *this;
}

Tensor& Tensor::mul_(const Tensor& other) {
  check_inplace(*this, "mul_");
  ops::binary_(ops::BinaryOp::Mul, *this, other);
  return *this;
}

Tensor& Tensor::mul_(double value) {
  check_inplace(*this, "mul_");
  ops::binary_(ops::BinaryOp::Mul, *this, value);
  return *this;
}

Tensor& Tensor::div_(const Tensor& other) {
  check_inplace(*this, "div_");
  ops::binary_(ops::BinaryOp::Div, *this, other);
  return *this;
}

Tensor& Tensor::div_(double value) {
  check_inplace(*this, "div_");
  ops::binary_(ops::BinaryOp::Div, *this, value);
  return *this;
}

Tensor& Tensor::clamp_(std::optional<double> min, std::optional<double> max) {
  check_inplace(*this, "clamp_");
  ops::clamp_(*this, min, max);
  return *this;
}

}  // namespace colony
