// The per-example random stream of random transforms and of the synthetic dataset: SplitMix64
// seeded by a hash of (seed, epoch, index, stream). Counter-free and keyed only by those numbers, so
// an example draws the same values whichever thread loads it and in whatever order.
#pragma once

#include <cstdint>

namespace colony::data {

class ExampleRng {
 public:
  ExampleRng(uint64_t seed, int64_t epoch, int64_t index, uint64_t stream)
      : state_(
            mix(mix(mix(seed ^ 0x9E3779B97F4A7C15ULL) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(index)) ^
            (stream * 0xD1B54A32D192ED03ULL)) {}

  uint64_t next_u64() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return mix(state_);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [0, n) for n >= 1 (multiply-high: bias below 2^-40 for the n used here).
  int64_t uniform_int(int64_t n) {
    return static_cast<int64_t>((static_cast<unsigned __int128>(next_u64()) * static_cast<uint64_t>(n)) >> 64);
  }

  // SplitMix64's finalizer: a bijective 64-bit mixer.
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

}  // namespace colony::data
