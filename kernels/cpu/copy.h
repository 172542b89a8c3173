// The CPU copy and fill by their names in kernels::cpu, for CPU code and tests that call them
// directly; their contracts are the entry points of kernels/common/copy.h, which declares them
// once for both devices.
#pragma once

#include "kernels/common/copy.h"

namespace colony::kernels::cpu {

inline constexpr auto& copy = Copy::cpu;
inline constexpr auto& fill = Fill::cpu;

}  // namespace colony::kernels::cpu
