// The CPU reductions by their names in kernels::cpu, for CPU code and tests that call them
// directly; their contracts are the entry points of kernels/common/reduce.h, which declares them
// once for both devices.
#pragma once

#include "kernels/common/reduce.h"

namespace colony::kernels::cpu {

inline constexpr auto& sum = Sum::cpu;
inline constexpr auto& var = Var::cpu;
inline constexpr auto& max_min = MaxMin::cpu;

}  // namespace colony::kernels::cpu
