#include "nn/layers.h"

#include <algorithm>
#include <stdexcept>

#include "autograd/ops.h"
#include "nn/repr.h"

namespace colony::nn {

using repr::int_or_tuple;
using repr::py_bool;

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(options.start_dim()) + ", end_dim=" + std::to_string(options.end_dim());
}

Tensor Unflatten::forward(const Tensor& input) {
  const std::vector<int64_t>& sizes = options.sizes();
  if (sizes.empty()) throw std::invalid_argument("unflatten: sizes must be non-empty");
  const int64_t dim = wrap_dim(options.dim(), input.dim(), "unflatten");
  const bool infers = std::find(sizes.begin(), sizes.end(), -1) != sizes.end();
  if (!infers) {  // torch's message; with a -1, infer_size says what is wrong
    int64_t product = 1;
    for (int64_t s : sizes) product *= s;
    if (product != input.size(dim)) {
      throw std::invalid_argument("unflatten: Provided sizes " + shape_str(sizes) +
                                  " don't multiply up to the size of dim " + std::to_string(options.dim()) + " (" +
                                  std::to_string(input.size(dim)) + ") in the input tensor");
    }
  }
  const Shape split = raw::infer_size(sizes, input.size(dim), "unflatten");
  Shape shape(input.sizes().begin(), input.sizes().begin() + dim);
  shape.insert(shape.end(), split.begin(), split.end());
  shape.insert(shape.end(), input.sizes().begin() + dim + 1, input.sizes().end());
  return colony::reshape(input, shape);
}

std::string Unflatten::extra_repr() const {
  const std::vector<int64_t>& sizes = options.sizes();
  std::string tuple;
  for (size_t i = 0; i < sizes.size(); ++i) tuple += (i ? ", " : "") + std::to_string(sizes[i]);
  if (sizes.size() == 1) tuple += ",";  // Python's one-element tuple, (5,)
  return "dim=" + std::to_string(options.dim()) + ", unflattened_size=(" + tuple + ")";
}

detail::DropoutBase::DropoutBase(const char* name, const DropoutOptions& options) : options(options) {
  double p = options.p();
  if (!(p >= 0 && p <= 1)) {
    throw std::invalid_argument(std::string(name) + ": dropout probability has to be between 0 and 1, but got " +
                                repr::py_float(p));
  }
}

Tensor Dropout::forward(const Tensor& input) {
  return functional::dropout(
      input, functional::DropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

std::string detail::DropoutBase::extra_repr() const {
  return "p=" + repr::py_float(options.p()) + ", inplace=" + py_bool(options.inplace());
}

std::string MaxPool2d::extra_repr() const {
  return "kernel_size=" + int_or_tuple(options.kernel_size()) + ", stride=" + int_or_tuple(options.stride()) +
         ", padding=" + int_or_tuple(options.padding()) + ", dilation=" + int_or_tuple(options.dilation()) +
         ", ceil_mode=" + py_bool(options.ceil_mode());
}

std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + int_or_tuple(options.kernel_size()) + ", stride=" + int_or_tuple(options.stride()) +
         ", padding=" + int_or_tuple(options.padding());
}

std::string AdaptiveAvgPool2d::extra_repr() const { return "output_size=" + int_or_tuple(options.output_size()); }

// torch's MaxPool1d keeps its arguments as given (numbers); AvgPool1d stores them as 1-tuples.
std::string MaxPool1d::extra_repr() const {
  return "kernel_size=" + std::to_string(options.kernel_size()) + ", stride=" + std::to_string(options.stride()) +
         ", padding=" + std::to_string(options.padding()) + ", dilation=" + std::to_string(options.dilation()) +
         ", ceil_mode=" + py_bool(options.ceil_mode());
}

std::string AvgPool1d::extra_repr() const {
  return "kernel_size=" + repr::tuple1(options.kernel_size()) + ", stride=" + repr::tuple1(options.stride()) +
         ", padding=" + repr::tuple1(options.padding());
}

std::string AdaptiveAvgPool1d::extra_repr() const { return "output_size=" + std::to_string(options.output_size()); }

}  // namespace colony::nn
