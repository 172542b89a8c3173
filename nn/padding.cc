// The padding modules (nn/padding.h): F::pad with the module's padding and mode.
#include "nn/padding.h"

#include <stdexcept>

#include "nn/functional.h"
#include "nn/repr.h"

namespace colony::nn::detail {

PadBase::PadBase(std::vector<int64_t> padding, int64_t dims, std::string mode, double value, bool print_value,
                 const char* module)
    : padding_(std::move(padding)), dims_(dims), mode_(std::move(mode)), value_(value), print_value_(print_value) {
  if (static_cast<int64_t>(padding_.size()) != 2 * dims_) {
    throw std::invalid_argument(std::string(module) + ": padding must be one number or " + std::to_string(2 * dims_) +
                                " values (before, after for each of the last " + std::to_string(dims_) +
                                " dims, the last dim first), got " + shape_str(padding_));
  }
}

Tensor PadBase::forward(const Tensor& input) {
  if (mode_ == "circular" && input.dim() != dims_ + 1 && input.dim() != dims_ + 2) {
    // torch's CircularPadNd._check_input_dim.
    throw std::invalid_argument(name() + ": expected " + std::to_string(dims_ + 1) + "D or " +
                                std::to_string(dims_ + 2) + "D input (got " + std::to_string(input.dim()) +
                                "D input)");
  }
  return functional::pad(input, functional::PadFuncOptions(padding_).mode(mode_).value(value_));
}

std::string PadBase::extra_repr() const {
  std::string tuple = "(";
  for (size_t i = 0; i < padding_.size(); ++i) tuple += (i ? ", " : "") + std::to_string(padding_[i]);
  tuple += ")";
  if (!print_value_) return tuple;
  return "padding=" + tuple + ", value=" + repr::py_float(value_);
}

}  // namespace colony::nn::detail
