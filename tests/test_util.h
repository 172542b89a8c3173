// Helpers shared by the test suites.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/cuda.h"
#include "ops/raw_ops.h"

// GPU tests are named *_CUDA (*_MultiCUDA for several devices) and start with this line, so the
// suite passes on machines without a GPU.
#define COLONY_REQUIRE_CUDA(n)                                                         \
  do {                                                                                 \
    if (::colony::cuda::device_count() < (n))                                          \
      GTEST_SKIP() << "needs " << (n) << " CUDA device(s), found "                     \
                   << ::colony::cuda::device_count();                                  \
  } while (0)

namespace colony::testing {

// n values drawn uniformly from [lo, hi) by a generator seeded with `seed` (reproducible inputs).
inline std::vector<double> random_values(int64_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

// Values of a tensor (any dtype, any device, any strides) as doubles in row-major order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = raw::contiguous(raw::to(t, kCPU, kFloat64));
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// Asserts t's values (row-major) equal `expected` (golden values, e.g. PyTorch's) to
// |t - e| <= tol + tol * |e|, printing the first mismatch.
inline ::testing::AssertionResult matches_values(const Tensor& t, const std::vector<double>& expected,
                                                 double tol = 1e-9) {
  if (static_cast<size_t>(t.numel()) != expected.size())
    return ::testing::AssertionFailure() << t.numel() << " elements, expected " << expected.size();
  std::vector<double> got = values(t);
  for (size_t i = 0; i < got.size(); ++i) {
    // Equal values match outright: infinities of one sign (their difference is NaN).
    if (got[i] != expected[i] && !(std::abs(got[i] - expected[i]) <= tol + tol * std::abs(expected[i])))
      return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << " vs the expected " << expected[i];
  }
  return ::testing::AssertionSuccess();
}

// Asserts equal shapes and |a - b| <= atol + rtol * |b| elementwise, printing the first mismatch.
inline ::testing::AssertionResult all_close(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                                            double atol = 1e-6) {
  if (a.sizes() != b.sizes())
    return ::testing::AssertionFailure() << "shapes differ: " << shape_str(a.sizes()) << " vs "
                                         << shape_str(b.sizes());
  std::vector<double> va = values(a), vb = values(b);
  for (size_t i = 0; i < va.size(); ++i) {
    double tol = atol + rtol * std::abs(vb[i]);
    bool both_nan = std::isnan(va[i]) && std::isnan(vb[i]);
    if (!both_nan && va[i] != vb[i] && !(std::abs(va[i] - vb[i]) <= tol))  // equal infinities match
      return ::testing::AssertionFailure() << "element " << i << ": " << va[i] << " vs " << vb[i]
                                           << " (tolerance " << tol << ")";
  }
  return ::testing::AssertionSuccess();
}

// Runs `fn` expecting an exception of type E whose message contains `needle`.
template <typename E = std::exception, typename F>
::testing::AssertionResult throws_with(F&& fn, const std::string& needle) {
  try {
    fn();
  } catch (const E& e) {
    std::string msg = e.what();
    if (msg.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << needle << "\"";
  } catch (...) {
    return ::testing::AssertionFailure() << "threw an exception of another type";
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace colony::testing
