// The elementwise reductions the Gloo backend hands to gloo's algorithms, for every dtype Colony
// reduces (gloo itself knows nothing of Colony's float16/bfloat16).
//
// Conventions (PyTorch's, where it has one):
// - float16/bfloat16 combine in float and round back after every pairwise step, as gloo would for
//   its own half type; values exactly representable stay exact.
// - Integer sums wrap around (two's complement) instead of being undefined behaviour.
// - max/min propagate NaN.
// - kAvg is a sum followed by a division by the group size (finish_average): in the compute type for
//   floats, floor division for integers.
#pragma once

#include <cstddef>

#include "distributed/comm/process_group.h"
#include "tensor/dtype.h"

namespace colony::dist::gloo_detail {

// out[i] = a[i] (op) b[i] for i < n; `out` may alias `a` or `b` (gloo reduces in place).
using ReduceFn = void (*)(void* out, const void* a, const void* b, size_t n);

// The pairwise function for `op` on `dtype` (kAvg: the sum). Throws std::invalid_argument for a
// dtype that cannot be reduced (bool).
ReduceFn reduce_function(DType dtype, ReduceOp op);

// Whether `dtype` can be reduced at all (everything Colony has except bool).
bool is_reducible(DType dtype);

// data[i] /= divisor (floats: in the compute type; integers: rounded towards negative infinity).
void finish_average(void* data, size_t n, DType dtype, int divisor);

// out[i] = (a[i] + b[i]) / divisor in one pass, exactly the kAvg sum followed by finish_average
// (the sum is rounded to the dtype first); `out` may alias `a` or `b`.
using AverageFn = void (*)(void* out, const void* a, const void* b, size_t n, int divisor);
AverageFn sum_and_average_function(DType dtype);

}  // namespace colony::dist::gloo_detail
