// Seeded random number generation. Numbers come from Philox4x32-10 (kernels/common/philox.h) keyed
// by the seed and indexed by a counter, so CPU and CUDA draw the same values for the same seed (normals up to libm rounding) and
// the result does not depend on how many threads ran the kernel: manual_seed(s) makes runs
// bit-identical.
#pragma once

#include <cstdint>
#include <mutex>

namespace colony {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) : seed_(seed) {}
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  // Reserves `n` 128-bit Philox blocks and returns the counter of the first; each draw of a kernel
  // uses its own block, so concurrent users never overlap.
  uint64_t reserve(uint64_t n);
  // For checkpoints: the whole state is (seed, offset).
  uint64_t offset() const;
  void set_state(uint64_t seed, uint64_t offset);

 private:
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The generator every random op uses when none is given.
Generator& default_generator();
// Seeds the default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace colony
