// Checks an op's result against a case of reduce_golden.h (torch's values, indices and gradients),
// on any device: scan_test.cc, order_stats_test.cc, scatter_test.cc and unique_test.cc name the
// case and call the op themselves.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "tests/autograd/reduce_golden.h"
#include "tests/test_util.h"

namespace colony::testing::reduce_golden {

inline const Case& golden(const std::string& name) {
  for (const Case& c : kCases) {
    if (name == c.name) return c;
  }
  throw std::invalid_argument("reduce_golden.h has no case " + name + " (rerun reduce_golden.py)");
}

// float64 values in `shape` (0-d included, which from_vector's default shape is not).
inline Tensor flat_to(const std::vector<double>& v, const Shape& shape) {
  return raw::reshape(raw::from_vector(v, {static_cast<int64_t>(v.size())}, TensorOptions(kFloat64)), shape);
}

// The case's input on `device`, a leaf requiring grad when the case has a gradient.
inline Tensor golden_input(const Case& c, Device device = kCPU) {
  Tensor x = raw::to(flat_to(c.input, c.shape), device, c.dtype);
  if (!c.grad.empty()) x.requires_grad_(true);
  return x;
}

// Element-wise equality within tol (relative and absolute), NaN equal to NaN, infinities exact.
inline ::testing::AssertionResult same_values(const std::vector<double>& got, const std::vector<double>& want,
                                              double tol, const char* what) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << what << ": " << got.size() << " elements, torch has " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i] ||
                    std::abs(got[i] - want[i]) <= tol + tol * std::abs(want[i]);
    if (!ok) return ::testing::AssertionFailure() << what << " element " << i << ": " << got[i] << ", torch " << want[i];
  }
  return ::testing::AssertionSuccess();
}

// values (and indices, when the case has them) as torch's; then, for a differentiable case,
// backward of sum(values * grad_output) and x's gradient as torch's. float32 cases to 1e-5.
inline ::testing::AssertionResult matches_golden(const Case& c, const Tensor& x, const Tensor& values,
                                                 const Tensor& indices = Tensor()) {
  const double tol = c.dtype == kFloat32 || c.out_dtype == kFloat32 ? 1e-5 : 1e-12;
  if (values.sizes() != c.out_shape) {
    return ::testing::AssertionFailure() << c.name << ": shape " << shape_str(values.sizes()) << ", torch's "
                                         << shape_str(c.out_shape);
  }
  if (values.dtype() != c.out_dtype) {
    return ::testing::AssertionFailure() << c.name << ": dtype " << dtype_name(values.dtype()) << ", torch's "
                                         << dtype_name(c.out_dtype);
  }
  auto r = same_values(testing::values(values), c.out, tol, "values");
  if (!r) return r << " (" << c.name << ")";
  if (!c.indices.empty() || indices.defined()) {
    if (!indices.defined() || indices.dtype() != kInt64) {
      return ::testing::AssertionFailure() << c.name << ": expected int64 indices";
    }
    std::vector<double> want(c.indices.begin(), c.indices.end());
    r = same_values(testing::values(indices), want, 0.0, "indices");
    if (!r) return r << " (" << c.name << ")";
  }
  if (c.grad.empty()) {
    if (values.requires_grad()) return ::testing::AssertionFailure() << c.name << ": result requires grad";
    return ::testing::AssertionSuccess();
  }
  Tensor w = raw::to(flat_to(c.grad_output, c.out_shape), values.device(), values.dtype());
  sum(mul(values, w)).backward();
  if (!x.grad().defined()) return ::testing::AssertionFailure() << c.name << ": no gradient reached the input";
  r = same_values(testing::values(x.grad()), c.grad, tol, "gradient");
  if (!r) return r << " (" << c.name << ")";
  return ::testing::AssertionSuccess();
}

inline const MultiCase& golden_multi(const std::string& name) {
  for (const MultiCase& c : kMultiCases) {
    if (name == c.name) return c;
  }
  throw std::invalid_argument("reduce_golden.h has no case " + name + " (rerun reduce_golden.py)");
}

// The case's inputs on `device`; those with a gradient in the case are leaves requiring grad.
inline std::vector<Tensor> golden_inputs(const MultiCase& c, Device device = kCPU) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Operand& o = c.inputs[i];
    Tensor x = raw::to(flat_to(o.values, o.shape), device, o.dtype);
    if (i < c.grads.size() && !c.grads[i].empty()) x.requires_grad_(true);
    xs.push_back(x);
  }
  return xs;
}

// outputs as torch's (shape, dtype, values); then the gradients of sum(outputs[0] * grad_output).
inline ::testing::AssertionResult matches_golden(const MultiCase& c, const std::vector<Tensor>& xs,
                                                 const std::vector<Tensor>& outs) {
  if (outs.size() != c.outputs.size()) {
    return ::testing::AssertionFailure() << c.name << ": " << outs.size() << " outputs, torch has " << c.outputs.size();
  }
  bool f32 = false;
  for (const Operand& o : c.inputs) f32 = f32 || o.dtype == kFloat32;
  const double tol = f32 ? 1e-5 : 1e-12;
  for (size_t k = 0; k < outs.size(); ++k) {
    const Operand& want = c.outputs[k];
    if (outs[k].sizes() != want.shape || outs[k].dtype() != want.dtype) {
      return ::testing::AssertionFailure() << c.name << " output " << k << ": " << dtype_name(outs[k].dtype()) << " "
                                           << shape_str(outs[k].sizes()) << ", torch's " << dtype_name(want.dtype)
                                           << " " << shape_str(want.shape);
    }
    auto r = same_values(testing::values(outs[k]), want.values, tol, "values");
    if (!r) return r << " (" << c.name << " output " << k << ")";
  }
  if (c.grad_output.empty()) {
    for (const Tensor& o : outs) {
      if (o.requires_grad()) return ::testing::AssertionFailure() << c.name << ": a result requires grad";
    }
    return ::testing::AssertionSuccess();
  }
  Tensor w = raw::to(flat_to(c.grad_output, outs[0].sizes()), outs[0].device(), outs[0].dtype());
  sum(mul(outs[0], w)).backward();
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i >= c.grads.size() || c.grads[i].empty()) continue;
    if (!xs[i].grad().defined()) return ::testing::AssertionFailure() << c.name << ": no gradient reached input " << i;
    auto r = same_values(testing::values(xs[i].grad()), c.grads[i], tol, "gradient");
    if (!r) return r << " (" << c.name << " input " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace colony::testing::reduce_golden
