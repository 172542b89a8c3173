// Fills contiguous memory with random values from Philox blocks (kernels/common/philox.h), element
// i depending only on (seed, offset, i): any thread count, and either device, gives the same
// tensor. The entry point, declared once for both devices (kernel.h), defined in
// kernels/cpu/random.cc and kernels/cuda/random.cu.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/random_fill.h"

namespace colony::kernels {

// n contiguous elements. normal: a + b * z, z ~ N(0, 1); uniform: a + (b - a) * u, u in [0, 1).
// Floating dtypes only; double draws use 53-bit uniforms. Only the CUDA kernel accepts a Philox
// state in device memory (philox.seed_ptr, a graph capture's); the CPU one throws
// std::logic_error for it (Generator::philox_args never hands one to the CPU).
COLONY_KERNEL(FillRandom, DType dtype, void* out, int64_t n, bool normal, double a, double b, const PhiloxArgs& philox);

}  // namespace colony::kernels
