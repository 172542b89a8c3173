// CUDA twin of kernels/cpu/random.h: the same values for the same (seed, offset).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

void fill_random(DType dtype, void* out, int64_t n, bool normal, double a, double b, uint64_t seed,
                 uint64_t offset, void* stream);

}  // namespace colony::kernels::cuda
