// Fills contiguous memory with random values from Philox blocks (kernels/common/philox.h), element
// i depending only on (seed, offset, i): any thread count gives the same tensor.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

enum class RandomKind : uint8_t { Uniform, Normal };

// Uniform: from + (to - from) * u, u in [0, 1). Normal: a + b * z, z ~ N(0, 1).
// Floating dtypes only; double draws use 53-bit uniforms.
void fill_random(DType dtype, void* out, int64_t n, RandomKind kind, double a, double b, uint64_t seed,
                 uint64_t offset);

}  // namespace colony::kernels::cpu
