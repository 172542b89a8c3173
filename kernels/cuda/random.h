// CUDA twin of kernels/cpu/random.h: the same values for the same (seed, offset).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/random_fill.h"

namespace colony::kernels::cuda {

void fill_random(DType dtype, void* out, int64_t n, bool normal, double a, double b, const PhiloxArgs& philox,
                 void* stream);

// Writes state[0] = seed, state[1] = offset on `stream` (by kernel arguments, so no host memory has
// to outlive the call): a CUDA graph's Philox state before each replay.
void set_philox_state(uint64_t* state, uint64_t seed, uint64_t offset, void* stream);

}  // namespace colony::kernels::cuda
