// The reference the layer tests (conv_test, linear_test) compare with: sums written out term by term in double precision,
// each with the sum of its terms' magnitudes, so a float32 result is judged against the rounding
// its own terms allow.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "tensor/raw_ops.h"

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

}  // namespace colony::testing
