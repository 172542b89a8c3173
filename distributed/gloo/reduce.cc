#include "distributed/gloo/reduce.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/half.h"

namespace colony::dist::gloo_detail {
namespace {

template <typename T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename C>
bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>) return x != x;
  return false;
}

struct Sum {
  template <typename C> static C apply(C a, C b) { return wrapping_add(a, b); }
};
struct Max {
  template <typename C> static C apply(C a, C b) { return (is_nan(a) || a > b) ? a : b; }
};
struct Min {
  template <typename C> static C apply(C a, C b) { return (is_nan(a) || a < b) ? a : b; }
};

// One loop per (dtype, op); no __restrict__ because gloo passes out == a. Compilers still
// vectorize it behind a runtime overlap check.
template <typename T, typename Op>
void reduce_loop(void* out, const void* a, const void* b, size_t n) {
  using C = compute_t<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = T(Op::apply(static_cast<C>(x[i]), static_cast<C>(y[i])));
}

template <typename T>
ReduceFn for_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return &reduce_loop<T, Sum>;
    case ReduceOp::kMax: return &reduce_loop<T, Max>;
    case ReduceOp::kMin: return &reduce_loop<T, Min>;
  }
  throw std::invalid_argument("unknown ReduceOp");
}

// One element of an average: v / d. Integers truncate toward zero, as NCCL's ncclAvg does (its
// post-division is C's), so that both backends average an integer tensor alike.
template <typename T>
T divided(T v, int divisor) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v / static_cast<T>(divisor));
  } else {
    using C = compute_t<T>;
    return T(static_cast<C>(v) / static_cast<C>(divisor));
  }
}

template <typename T>
void divide(void* data, size_t n, int divisor) {
  T* p = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = divided(p[i], divisor);
}

// The last sum of an average and the division in one pass; the sum is rounded to T first, so the
// result is the one reduce_loop<T, Sum> followed by divide<T> gives.
template <typename T>
void sum_and_divide(void* out, const void* a, const void* b, size_t n, int divisor) {
  using C = compute_t<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = divided(T(Sum::apply(static_cast<C>(x[i]), static_cast<C>(y[i]))), divisor);
}

}  // namespace

bool is_reducible(DType dtype) { return dtype != DType::Bool; }

ReduceFn reduce_function(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::Float32: return for_op<float>(op);
    case DType::Float64: return for_op<double>(op);
    case DType::Float16: return for_op<Half>(op);
    case DType::BFloat16: return for_op<BFloat16>(op);
    case DType::Int64: return for_op<int64_t>(op);
    case DType::Int32: return for_op<int32_t>(op);
    case DType::UInt8: return for_op<uint8_t>(op);
    case DType::Bool: break;
  }
  throw std::invalid_argument(std::string("Gloo cannot reduce dtype ") + dtype_name(dtype) +
                              " (reducible: float32, float64, float16, bfloat16, int64, int32, uint8)");
}

AverageFn sum_and_average_function(DType dtype) {
  switch (dtype) {
    case DType::Float32: return &sum_and_divide<float>;
    case DType::Float64: return &sum_and_divide<double>;
    case DType::Float16: return &sum_and_divide<Half>;
    case DType::BFloat16: return &sum_and_divide<BFloat16>;
    case DType::Int64: return &sum_and_divide<int64_t>;
    case DType::Int32: return &sum_and_divide<int32_t>;
    case DType::UInt8: return &sum_and_divide<uint8_t>;
    case DType::Bool: break;
  }
  throw std::invalid_argument(std::string("Gloo cannot average dtype ") + dtype_name(dtype));
}

void finish_average(void* data, size_t n, DType dtype, int divisor) {
  switch (dtype) {
    case DType::Float32: return divide<float>(data, n, divisor);
    case DType::Float64: return divide<double>(data, n, divisor);
    case DType::Float16: return divide<Half>(data, n, divisor);
    case DType::BFloat16: return divide<BFloat16>(data, n, divisor);
    case DType::Int64: return divide<int64_t>(data, n, divisor);
    case DType::Int32: return divide<int32_t>(data, n, divisor);
    case DType::UInt8: return divide<uint8_t>(data, n, divisor);
    case DType::Bool: break;
  }
  throw std::invalid_argument(std::string("Gloo cannot average dtype ") + dtype_name(dtype));
}

}  // namespace colony::dist::gloo_detail
