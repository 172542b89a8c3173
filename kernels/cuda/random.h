// The CUDA random fill's companion for CUDA graphs (ops/cuda_graph.cc); the fill itself is
// FillRandom (kernels/common/random.h), declared once for both devices.
#pragma once

#include <cstdint>

namespace colony::kernels::cuda {

// Writes state[0] = seed, state[1] = offset on `stream` (by kernel arguments, so no host memory has
// to outlive the call): a CUDA graph's Philox state before each replay.
void set_philox_state(uint64_t* state, uint64_t seed, uint64_t offset, void* stream);

}  // namespace colony::kernels::cuda
