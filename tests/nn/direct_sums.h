// The reference the layer tests (conv_test, linear_test) compare with: sums written out term by
// term in double precision, each with the sum of its terms' magnitudes, so a float32 result is
// judged against the rounding its own terms allow; and a run on both instruction sets.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "ops/raw_ops.h"
#include "tests/multiprocess.h"

namespace colony::testing {

struct DirectSum {
  double value = 0, scale = 0;
  void add(double term) {
    value += term;
    scale += std::abs(term);
  }
};

// Counts the values off by more than 1e-4 of their terms' magnitudes (float32 sums of up to a few
// thousand products below 1 stay well within it; a wrong or missing term does not) and reports the
// first five.
class DirectSumChecker {
 public:
  void expect(double got, const DirectSum& want, const std::string& what) {
    if (std::abs(got - want.value) > 1e-4 * want.scale + 1e-5 && bad_++ < 5)
      ADD_FAILURE() << what << " = " << got << ", expected " << want.value;
  }
  int bad() const { return bad_; }

 private:
  int bad_ = 0;
};

// A deterministic float32 tensor of `shape` with values in [-1, 1), different for each seed.
inline Tensor pattern(const Shape& shape, int seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = 2654435761u * static_cast<uint32_t>(seed + 1);
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return raw::from_vector<float>(v, shape);
}

// "[1,2,3]", to name a value in a failure.
inline std::string index_str(std::initializer_list<int64_t> idx) {
  std::string s;
  for (int64_t v : idx) s += (s.empty() ? "[" : ",") + std::to_string(v);
  return s + "]";
}

// Runs `check` in this process, on the instruction set the CPU offers (saying which), and in a
// child process capped to AVX2 (COLONY_CPU_ISA is read once per process), so that both copies of
// the small-GEMM tiles run under the sanitizers CI builds the tests with.
inline void on_this_isa_and_on_avx2(const std::function<void()>& check) {
  check();
  std::printf("instruction set: %s\n", kernels::cpu::cpu_isa_name(kernels::cpu::active_cpu_isa()));
  RunRanksOptions o;
  o.env["COLONY_CPU_ISA"] = "avx2";
  auto results = run_ranks(1, [&](int) {
    ASSERT_EQ(kernels::cpu::active_cpu_isa(), kernels::cpu::CpuIsa::Avx2);
    check();
  }, o);
  EXPECT_TRUE(all_succeeded(results)) << "capped to AVX2";
}

}  // namespace colony::testing
