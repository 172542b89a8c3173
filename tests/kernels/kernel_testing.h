// Helpers of the CPU kernel tests, which call kernels on std::vector buffers: element counts,
// conversions between buffer types, and a guard for the thread pool's size.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/parallel.h"

namespace colony::testing {

inline int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// The buffer as another element type: cast<float>(doubles) for a kernel's input, cast<double>(y)
// to compare its output with a reference.
template <typename To, typename From>
std::vector<To> cast(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}

// Sets the thread pool's size (kernels/cpu/parallel.h) while alive, then restores it.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n) : saved_(kernels::cpu::num_threads()) { kernels::cpu::set_num_threads(n); }
  ~ScopedThreads() { kernels::cpu::set_num_threads(saved_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

}  // namespace colony::testing
