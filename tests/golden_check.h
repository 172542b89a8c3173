// Runs Colony's op for each case of a golden table (tests/golden_cases.h) and compares its output
// and every input's gradient with torch's, on any device. A test names its Colony call per case:
//
//   const std::map<std::string, testing::golden::Op> calls = {
//       {"kron", [](In x, Device) { return kron(x[0], x[1]); }}, ...};
//   for (const auto& c : my_golden::kCases) EXPECT_TRUE(testing::golden::matches(c, calls, kCPU));
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "tests/golden_cases.h"
#include "tests/test_util.h"

namespace colony::testing::golden {

using Op = std::function<Tensor(const std::vector<Tensor>& inputs, Device device)>;

inline Tensor from_values(const std::vector<double>& v, const Shape& shape, Device device, DType dtype) {
  Tensor flat = raw::from_vector(v, {static_cast<int64_t>(v.size())}, TensorOptions(kFloat64));
  return raw::to(raw::reshape(flat, shape), device, dtype);
}

// Each value within tol * (1 + |torch's|), NaN equal to NaN.
inline ::testing::AssertionResult same_values(const std::vector<double>& got, const std::vector<double>& want,
                                              double tol, const std::string& what) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << what << ": " << got.size() << " values, torch has " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i] ||
                    std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]));
    if (!ok) return ::testing::AssertionFailure() << what << "[" << i << "] = " << got[i] << ", torch " << want[i];
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult matches_or_throws(const Case& c, const std::map<std::string, Op>& calls,
                                                    Device device, double f32_tol) {
  const auto call = calls.find(c.name);
  if (call == calls.end()) return ::testing::AssertionFailure() << "no Colony call for case " << c.name;
  std::vector<Tensor> inputs;
  for (const Input& in : c.inputs) {
    Tensor x = from_values(in.values, in.shape, device, in.dtype);
    if (!in.grad.empty()) x.requires_grad_(true);
    inputs.push_back(x);
  }
  Tensor out = call->second(inputs, device);
  const std::string name = c.name;
  if (out.sizes() != c.out_shape || out.dtype() != c.out_dtype) {
    return ::testing::AssertionFailure() << name << ": " << shape_str(out.sizes()) << " " << dtype_name(out.dtype())
                                         << ", torch " << shape_str(c.out_shape) << " " << dtype_name(c.out_dtype);
  }
  const double tol = c.out_dtype == kFloat32 ? f32_tol : 1e-12;
  auto r = same_values(values(out), c.out, tol, name + " output");
  if (!r) return r;
  if (c.grad_output.empty()) {
    if (out.requires_grad()) return ::testing::AssertionFailure() << name << ": requires grad, torch's does not";
    return ::testing::AssertionSuccess();
  }
  sum(mul(out, from_values(c.grad_output, c.out_shape, device, out.dtype()))).backward();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (c.inputs[i].grad.empty()) continue;
    Tensor g = inputs[i].grad();
    std::vector<double> got = g.defined() ? values(g) : std::vector<double>(c.inputs[i].grad.size(), 0.0);
    r = same_values(got, c.inputs[i].grad, c.out_dtype == kFloat32 ? f32_tol : 1e-10,
                    name + " grad of input " + std::to_string(i));
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

// The case's output (shape, dtype, values to 1e-12, or f32_tol in float32) and every input's
// gradient (1e-10) as torch's; an exception fails the case by name.
inline ::testing::AssertionResult matches(const Case& c, const std::map<std::string, Op>& calls, Device device,
                                          double f32_tol = 2e-6) {
  try {
    return matches_or_throws(c, calls, device, f32_tol);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << c.name << " threw: " << e.what();
  }
}

}  // namespace colony::testing::golden
