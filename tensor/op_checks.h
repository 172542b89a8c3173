// The argument checks that many raw front functions share, worded once: "<op>: expected a
// defined input tensor", "<op>: expected a floating point input, got int64". `what` names the
// argument as the op's error should ("input", "tensor", "grad_output"). Checks particular to one
// op stay in its file.
#pragma once

#include <stdexcept>
#include <string>

#include "tensor/tensor.h"

namespace colony::raw {

inline void check_defined(const Tensor& t, const char* op, const char* what = "input tensor") {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined " + what);
}

inline void check_floating(const Tensor& t, const char* op, const char* what = "input") {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string(op) + ": expected a floating point " + what + ", got " +
                                dtype_name(t.dtype()));
  }
}

}  // namespace colony::raw
