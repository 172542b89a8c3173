// Inclusive prefix sums along the middle axis of a contiguous [outer, dim, inner] array: the
// kernel entry point, declared once for both devices (kernel.h), defined in kernels/cpu/cumsum.cc
// and kernels/cuda/cumsum.cu, and the accumulator type both use.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// The type a running sum is kept in: int64 for integral and bool inputs (whose result is int64, as
// torch.cumsum's), double for float64, float for the other floating types (PyTorch's CUDA
// accumulator; its CPU kernel keeps float32 sums in double, so long float32 scans round slightly
// differently from PyTorch's CPU: within float32 tolerance).
template <typename T>
using cumsum_acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>,
                                        std::conditional_t<std::is_same_v<T, double>, double, float>, int64_t>;

// y[o, i, k] = sum of x[o, 0..i, k], or with `reverse` the sums from the end, sum of
// x[o, i..dim-1, k], added from the last element down (the same additions, in the same order, as
// flip, cumsum, flip: cumsum's gradient). x has dtype `dtype`; y has dtype `dtype` for floating
// inputs and int64 for integral and bool ones.
COLONY_KERNEL(Cumsum, DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner, bool reverse);

}  // namespace colony::kernels
