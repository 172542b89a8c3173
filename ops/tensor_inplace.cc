// The raw in-place Tensor members copy_/fill_/zero_, and the rule for when they are refused
// (ops/inplace_check.h). The differentiable in-place math (add_, relu_, ...) is in autograd/inplace.cc.
#include <stdexcept>
#include <string>

#include "ops/elementwise_detail.h"
#include "tensor/grad_mode.h"
#include "ops/inplace_check.h"
#include "ops/raw_ops.h"
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
                           ": this raw write is not recorded by autograd, so it is refused on a tensor that is "
                           "part of the autograd graph; use a differentiable in-place op (x.mul_(0) instead of "
                           "x.zero_(), x.copy_ -> x.mul_(0).add_(src)) or the out-of-place form, or write under "
                           "NoGradGuard if no gradient should flow through the write");
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

}  // namespace colony
