// What sum() writes for a T input, on both devices: T itself for floating types, int64 for
// integral and bool inputs (PyTorch sums those exactly into int64).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/dtype.h"

namespace colony::kernels {

template <typename T>
using sum_out_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, T, int64_t>;

// The output the caller allocated must have sum_out_t<T>'s dtype.
template <typename T>
void check_sum_out(DType x_dtype, DType y_dtype) {
  constexpr DType expected = dtype_of<sum_out_t<T>>::value;
  if (y_dtype != expected) {
    throw std::invalid_argument(std::string("sum: a ") + dtype_name(x_dtype) + " input sums to " +
                                dtype_name(expected) + ", not " + dtype_name(y_dtype));
  }
}

}  // namespace colony::kernels
