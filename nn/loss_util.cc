#include "nn/loss_util.h"

#include <stdexcept>
#include <string>

#include "autograd/ops.h"

namespace colony::nn::functional::detail {

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

void check_reduction(const char* op, Reduction r) {
  if (r == Reduction::BatchMean) fail(op, "Reduction::BatchMean (\"batchmean\") is kl_div's only; use Mean, Sum or None");
}

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::Mean: return mean(loss);
    case Reduction::Sum: return sum(loss);
    case Reduction::None: return loss;
    case Reduction::BatchMean: break;
  }
  throw std::logic_error("reduce: BatchMean reaches kl_div's own reduction only");
}

void check_floating(const char* op, const char* what, const Tensor& t) {
  if (!is_floating(t.dtype())) fail(op, std::string("expected a floating ") + what + ", got " + dtype_name(t.dtype()));
}

void check_same_device(const char* op, const char* what, const Tensor& input, const Tensor& other) {
  if (other.defined() && other.device() != input.device()) {
    fail(op, std::string("input is on ") + input.device().str() + " but " + what + " is on " + other.device().str());
  }
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  if (input.sizes() != target.sizes()) {
    fail(op, "input " + shape_str(input.sizes()) + " and target " + shape_str(target.sizes()) +
                 " must have the same shape");
  }
  check_same_device(op, "target", input, target);
}

void check_broadcasts_to(const char* op, const char* what, const Tensor& t, const Shape& shape) {
  if (!t.defined()) return;
  bool fits = t.dim() <= static_cast<int64_t>(shape.size());
  for (int64_t i = 1; fits && i <= t.dim(); ++i) {
    const int64_t size = t.size(t.dim() - i), target = shape[shape.size() - static_cast<size_t>(i)];
    fits = size == 1 || size == target;
  }
  if (!fits) {
    fail(op, std::string(what) + " " + shape_str(t.sizes()) + " must broadcast to the input's shape " + shape_str(shape));
  }
}

Tensor zero_like_scalar(const Tensor& like) {
  return raw::scalar_tensor(0.0, TensorOptions(like.dtype()).device(like.device()));
}

}  // namespace colony::nn::functional::detail
