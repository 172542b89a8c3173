#include "nn/layers.h"

#include <stdexcept>

#include "nn/repr.h"

namespace colony::nn {

using repr::int_or_tuple;
using repr::py_bool;

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(options.start_dim()) + ", end_dim=" + std::to_string(options.end_dim());
}

Dropout::Dropout(const DropoutOptions& options) : options(options) {
  double p = options.p();
  if (p < 0 || p > 1) {
    throw std::invalid_argument("Dropout: dropout probability has to be between 0 and 1, but got " + repr::py_float(p));
  }
}

Tensor Dropout::forward(const Tensor& input) {
  return functional::dropout(
      input, functional::DropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

std::string Dropout::extra_repr() const {
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

}  // namespace colony::nn
