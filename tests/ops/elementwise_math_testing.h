// Helpers of the tests against elementwise_math_golden.h (PyTorch's values): tensors from the
// golden vectors and a strict comparison (NaN only against NaN, infinities and the sign of zero
// exact, finite values to a relative tolerance chosen by dtype).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/raw_ops.h"
#include "tests/ops/elementwise_math_golden.h"
#include "tests/test_util.h"

namespace colony::testing {

// A 1-D tensor of `v` in `dtype` (through float64: every golden value converts exactly).
inline Tensor golden_tensor(const std::vector<double>& v, DType dtype) {
  Tensor t = raw::empty({static_cast<int64_t>(v.size())}, TensorOptions(kFloat64));
  if (!v.empty()) std::memcpy(t.data_ptr<double>(), v.data(), v.size() * sizeof(double));
  return raw::to(t, kCPU, dtype);
}

// The relative tolerance of a comparison with PyTorch's result in `dtype`: PyTorch's CPU kernels
// compute float32 and float64 with SLEEF's vector functions (1 ulp) where Colony calls libm, so the
// last bits may differ; a bfloat16 result may round the other way (one bfloat16 ulp, 2^-7).
inline double golden_rtol(DType dtype) {
  if (dtype == kFloat64) return 1e-14;
  if (dtype == kFloat32) return 1e-6;
  if (dtype == kBFloat16 || dtype == kFloat16) return 8e-3;
  return 0.0;
}

inline ::testing::AssertionResult matches_golden(const Tensor& got, DType want_dtype, const std::vector<double>& want,
                                                 double rtol) {
  if (got.dtype() != want_dtype)
    return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype()) << ", expected " << dtype_name(want_dtype);
  std::vector<double> v = values(got);
  if (v.size() != want.size()) return ::testing::AssertionFailure() << v.size() << " elements, expected " << want.size();
  for (size_t i = 0; i < v.size(); ++i) {
    const double g = v[i], w = want[i];
    bool ok;
    if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g) || w == 0.0 || g == 0.0) {
      ok = g == w && std::signbit(g) == std::signbit(w);
    } else {
      // Subnormal results (erfc(10) in float32) may differ by a few units of the smallest one: libm
      // and SLEEF round differently there.
      const double tiny = want_dtype == kFloat64 ? 2.2250738585072014e-308 : 1.1754943508222875e-38;
      ok = std::abs(g - w) <= rtol * std::abs(w) || (std::abs(g) < tiny && std::abs(w) < tiny);
    }
    if (!ok) {
      return ::testing::AssertionFailure() << "element " << i << ": " << g << " vs PyTorch's " << w << " (rtol " << rtol
                                           << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace colony::testing
