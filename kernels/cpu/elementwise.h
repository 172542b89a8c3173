// The CPU elementwise kernels by their names in kernels::cpu, for CPU code and tests that call them
// directly; their contracts are the entry points of kernels/common/elementwise.h, which declares
// them once for both devices.
#pragma once

#include "kernels/common/elementwise.h"

namespace colony::kernels::cpu {

// `attrs` may be left out: no attributes.
inline void unary(UnaryOp op, DType dtype, const void* in, const StridedLayout& in_layout, void* out,
                  const StridedLayout& out_layout, const UnaryAttrs& attrs = {}) {
  Unary::cpu(op, dtype, in, in_layout, out, out_layout, attrs);
}
inline constexpr auto& binary = Binary::cpu;

}  // namespace colony::kernels::cpu
