// Switches from a runtime DType to a compile-time scalar_t, the way kernels pick their template.
// Usage: COLONY_DISPATCH_FLOATING(dtype, "relu", [&] { run<scalar_t>(...); });
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/common/dtype.h"

namespace colony::detail {
[[noreturn]] inline void unsupported_dtype(const char* op, DType t) {
  throw std::invalid_argument(std::string(op) + ": unsupported dtype " + dtype_name(t));
}
[[noreturn]] inline void only_float32_float64(const char* op, DType t) {
  throw std::invalid_argument(std::string(op) + ": the CPU kernel supports float32 and float64, got " + dtype_name(t));
}
}  // namespace colony::detail

#define COLONY_DTYPE_CASE(enum_name, type, ...) \
  case ::colony::DType::enum_name: {            \
    using scalar_t = type;                      \
    return __VA_ARGS__();                       \
  }

// The cases of the floating types and of the integer ones, shared by the switches below.
#define COLONY_FLOATING_CASES(...)                                  \
  COLONY_DTYPE_CASE(Float32, float, __VA_ARGS__)                    \
  COLONY_DTYPE_CASE(Float64, double, __VA_ARGS__)                   \
  COLONY_DTYPE_CASE(Float16, ::colony::Half, __VA_ARGS__)           \
  COLONY_DTYPE_CASE(BFloat16, ::colony::BFloat16, __VA_ARGS__)

#define COLONY_INTEGER_CASES(...)                                   \
  COLONY_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                    \
  COLONY_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                    \
  COLONY_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)

#define COLONY_DISPATCH_FLOATING(dtype, op, ...)                    \
  [&] {                                                             \
    switch (dtype) {                                                \
      COLONY_FLOATING_CASES(__VA_ARGS__)                            \
      default: ::colony::detail::unsupported_dtype(op, dtype);      \
    }                                                               \
  }()

// For CPU kernels written for float and double only (pooling, batch norm).
#define COLONY_DISPATCH_FLOAT32_64(dtype, op, ...)                  \
  [&] {                                                             \
    switch (dtype) {                                                \
      COLONY_DTYPE_CASE(Float32, float, __VA_ARGS__)                \
      COLONY_DTYPE_CASE(Float64, double, __VA_ARGS__)               \
      default: ::colony::detail::only_float32_float64(op, dtype);   \
    }                                                               \
  }()

#define COLONY_DISPATCH_NUMERIC(dtype, op, ...)                     \
  [&] {                                                             \
    switch (dtype) {                                                \
      COLONY_FLOATING_CASES(__VA_ARGS__)                            \
      COLONY_INTEGER_CASES(__VA_ARGS__)                             \
      default: ::colony::detail::unsupported_dtype(op, dtype);      \
    }                                                               \
  }()

// Integers and bool: the bitwise ops (the front refuses floating types with its own message).
#define COLONY_DISPATCH_INTEGRAL(dtype, op, ...)                    \
  [&] {                                                             \
    switch (dtype) {                                                \
      COLONY_INTEGER_CASES(__VA_ARGS__)                             \
      COLONY_DTYPE_CASE(Bool, bool, __VA_ARGS__)                    \
      default: ::colony::detail::unsupported_dtype(op, dtype);      \
    }                                                               \
  }()

#define COLONY_DISPATCH_ALL(dtype, op, ...)                         \
  [&] {                                                             \
    switch (dtype) {                                                \
      COLONY_FLOATING_CASES(__VA_ARGS__)                            \
      COLONY_INTEGER_CASES(__VA_ARGS__)                             \
      COLONY_DTYPE_CASE(Bool, bool, __VA_ARGS__)                    \
    }                                                               \
    ::colony::detail::unsupported_dtype(op, dtype);                 \
  }()
