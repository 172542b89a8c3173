// Sorting the rows of a contiguous [rows, n] array (sort, topk, and multinomial without
// replacement through topk): the kernel entry points, declared once for both devices (kernel.h),
// defined in kernels/cpu/sort.cc and kernels/cuda/sort.cu, and the order both devices sort by.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

template <typename T>
using sort_key_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// An unsigned integer whose order is the order torch.sort gives the values: ascending numbers,
// -0 equal to +0, NaN above +inf (all NaNs equal). Sorting the keys as integers (a radix sort on
// the GPU, a comparison sort on the CPU) is then the same sort on both devices.
template <typename T>
COLONY_INLINE sort_key_t<T> sort_key(T value) {
  using C = compute_t<T>;
  using K = sort_key_t<T>;
  if constexpr (std::is_floating_point_v<C>) {
    // float16/bfloat16 widen to float exactly, so their order is float's.
    using Bits = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
    C v = static_cast<C>(value);
    if (v != v) return ~K(0);
    if (v == C(0)) v = C(0);  // -0 sorts with +0
    Bits bits;
    memcpy(&bits, &v, sizeof(bits));
    constexpr Bits kSign = Bits(1) << (8 * sizeof(Bits) - 1);
    // Negative numbers: all bits flipped (larger magnitude, smaller key); positive: the sign set.
    return static_cast<K>((bits & kSign) ? ~bits : (bits | kSign));
  } else if constexpr (std::is_signed_v<C>) {
    constexpr K kSign = K(1) << (8 * sizeof(K) - 1);
    return static_cast<K>(static_cast<K>(static_cast<std::make_signed_t<K>>(value)) ^ kSign);
  } else {
    return static_cast<K>(value);  // uint8, bool
  }
}

// For each row of x [rows, n] (dtype `dtype`), the first k elements (k <= n) of its stable sort by
// sort_key, ascending or descending, into values [rows, k] and their positions in the row into
// indices [rows, k]. Equal keys keep their order in the row in both directions, as torch.sort's
// stable=True. `workspace` holds SortWorkspaceBytes bytes of the device's memory (none on the CPU).
COLONY_KERNEL(SortRows, DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t n,
              int64_t k, bool descending, void* workspace);

// The workspace SortRows needs for this shape, in bytes (0 on the CPU).
COLONY_KERNEL(SortWorkspaceBytes, DType dtype, int64_t rows, int64_t n, bool descending, size_t* bytes);

}  // namespace colony::kernels
