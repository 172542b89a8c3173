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

Tensor& Tensor::resize_(const Shape& new_sizes) {
  if (requires_grad()) throw std::runtime_error("resize_: cannot resize variables that require grad");
  for (int64_t s : new_sizes) {
    if (s < 0) {
      throw std::invalid_argument("resize_: Trying to create tensor with negative dimension " + std::to_string(s) +
                                  ": " + shape_str(new_sizes));
    }
  }
  const int64_t n = shape_numel(new_sizes);
  const int64_t item = element_size();
  const size_t needed = n == 0 ? 0 : static_cast<size_t>((storage_offset() + n) * item);
  const Storage& memory = storage();
  if (needed > memory->nbytes()) {
    if (!memory->resizable()) throw std::runtime_error("resize_: Trying to resize storage that is not resizable");
    // A bigger storage from the same allocator, the old bytes copied in (as elements of this
    // tensor's dtype: the storage holds whole elements), then the two exchange their memory.
    StorageImpl bigger(needed, memory->allocator());
    const int64_t old_elements = static_cast<int64_t>(memory->nbytes()) / item;
    if (old_elements > 0) {
      Storage into(&bigger, [](StorageImpl*) {});  // borrowed for the copy
      Tensor dst(std::make_shared<TensorImpl>(into, Shape{old_elements}, Shape{1}, 0, dtype()));
      Tensor src(std::make_shared<TensorImpl>(memory, Shape{old_elements}, Shape{1}, 0, dtype()));
      raw::copy_(dst, src);
    }
    memory->exchange_memory(bigger);
  }
  if (new_sizes != sizes()) {
    impl()->sizes = new_sizes;
    impl()->strides = contiguous_strides(new_sizes);
  }
  memory->bump_version();
  return *this;
}

}  // namespace colony
