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

// b on a's device and of a's dtype: "conv2d: expected weight of dtype float32 like input, got float64".
inline void check_same_device_dtype(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name,
                                    const char* op) {
  if (a.device() != b.device()) {
    throw std::invalid_argument(std::string(op) + ": expected " + b_name + " on " + a.device().str() + " like " +
                                a_name + ", got " + b.device().str());
  }
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string(op) + ": expected " + b_name + " of dtype " + dtype_name(a.dtype()) +
                                " like " + a_name + ", got " + dtype_name(b.dtype()));
  }
}

// A scalar kept in device memory (GradScaler's scale and flag, an optimizer's step count): one
// contiguous element of `dtype`, on the device of `beside` when given. "<op>: found_inf must be a
// 1-element float32 tensor, got float64 [1]".
inline void check_one_element(const Tensor& t, DType dtype, const char* op, const std::string& what,
                              const Tensor* beside = nullptr) {
  if (!t.defined() || t.numel() != 1 || t.dtype() != dtype || !t.is_contiguous()) {
    throw std::invalid_argument(std::string(op) + ": " + what + " must be a 1-element " + dtype_name(dtype) +
                                " tensor, got " +
                                (t.defined() ? std::string(dtype_name(t.dtype())) + " " + shape_str(t.sizes())
                                             : std::string("undefined")));
  }
  if (beside != nullptr && t.device() != beside->device()) {
    throw std::invalid_argument(std::string(op) + ": " + what + " is on " + t.device().str() + ", expected " +
                                beside->device().str());
  }
}

}  // namespace colony::raw
