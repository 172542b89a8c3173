// The per-element random value both backends store (one place for the math).
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/philox.h"

namespace colony::kernels {

// Where a random kernel finds its Philox key and first block. Eagerly, by value. Inside a CUDA graph
// (PyTorch's PhiloxCudaState): the seed and a base offset are read from device memory when the
// kernel runs, and `offset` (the draw's place within one replay) is added to the base; the graph
// writes seed and base before each replay, so every replay draws what the eager step would have.
struct PhiloxArgs {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const uint64_t* seed_ptr = nullptr;    // device memory: set together with base_ptr, or neither
  const uint64_t* base_ptr = nullptr;
};

// The (seed, first block) a kernel uses; reads device memory when the arguments point there.
COLONY_INLINE void philox_unpack(const PhiloxArgs& args, uint64_t& seed, uint64_t& offset) {
  if (args.seed_ptr != nullptr) {
    seed = *args.seed_ptr;
    offset = *args.base_ptr + args.offset;
  } else {
    seed = args.seed;
    offset = args.offset;
  }
}

// A draw (a standard normal, or a uniform in [0, 1)) as element of type T: a + b * z, or uniform on [a, b).
template <typename T>
COLONY_INLINE T random_value_from(bool normal, double a, double b, double draw) {
  if (normal) return static_cast<T>(static_cast<compute_t<T>>(a + b * draw));
  // Compute in the stored type's precision so a float draw stays in [from, to) after rounding.
  compute_t<T> v = static_cast<compute_t<T>>(a) +
                   static_cast<compute_t<T>>(b - a) * static_cast<compute_t<T>>(draw);
  return static_cast<T>(v);
}

template <typename T>
COLONY_INLINE T random_value_at(bool normal, double a, double b, uint64_t seed, uint64_t offset, int64_t i) {
  constexpr bool is_double = sizeof(T) == 8;
  const double draw = normal ? random_normal_at(seed, offset, i) : random_uniform_at(seed, offset, i, is_double);
  return random_value_from<T>(normal, a, b, draw);
}

}  // namespace colony::kernels
