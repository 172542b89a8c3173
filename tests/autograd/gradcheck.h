// Finite-difference gradient check (float64, CPU). For a function f of some inputs, compares the
// gradient autograd computes for L = sum_j <f_j(inputs), w_j> (w_j fixed random weights, so every
// output element contributes with its own factor) with central differences of L, element by
// element. Random weights test the whole vector-Jacobian product in one backward pass; a wrong
// Jacobian entry escapes only if it happens to cancel, which random weights make vanishingly rare.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <vector>

#include "autograd/autograd.h"
#include "tests/test_util.h"

namespace colony::testing {

struct GradcheckOptions {
  // Central differences in float64: truncation error ~ eps^2 and rounding ~ 1e-16/eps, so 1e-6
  // keeps both near 1e-10, far under the tolerances below.
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  uint64_t seed = 1234;
};

using MultiOutputFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using SingleOutputFn = std::function<Tensor(const std::vector<Tensor>&)>;

namespace detail {

inline double weighted_sum(const std::vector<Tensor>& outs, const std::vector<Tensor>& weights) {
  double total = 0.0;
  for (size_t j = 0; j < outs.size(); ++j) {
    std::vector<double> o = values(outs[j]), w = values(weights[j]);
    for (size_t k = 0; k < o.size(); ++k) total += o[k] * w[k];
  }
  return total;
}

// The inputs with element k of input i moved by delta (a contiguous copy of that input).
inline std::vector<Tensor> perturbed(const std::vector<Tensor>& inputs, size_t i, int64_t k, double delta) {
  std::vector<Tensor> p = inputs;
  Tensor c = raw::clone(inputs[i]);
  c.data_ptr<double>()[k] += delta;
  p[i] = c;
  return p;
}

}  // namespace detail

// Checks every input that requires grad (float64 CPU leaves). Inputs that do not require grad
// (index tensors, constants) are passed through unchanged.
inline ::testing::AssertionResult gradcheck_multi(const MultiOutputFn& f, const std::vector<Tensor>& inputs,
                                                  const GradcheckOptions& opts = {}) {
  for (const Tensor& in : inputs) {
    if (in.requires_grad() && (in.dtype() != kFloat64 || !in.is_cpu() || !in.is_leaf())) {
      return ::testing::AssertionFailure() << "gradcheck: checked inputs must be float64 CPU leaves";
    }
    if (in.requires_grad()) {
      Tensor handle = in;
      handle.set_grad(Tensor());  // start from no gradient; grad() is shared by all handles
    }
  }
  std::vector<Tensor> outs = f(inputs);
  Generator gen(opts.seed);
  std::vector<Tensor> weights;
  Tensor loss;
  for (const Tensor& o : outs) {
    if (o.dtype() != kFloat64) return ::testing::AssertionFailure() << "gradcheck: outputs must be float64";
    Tensor w = raw::randn(o.sizes(), kFloat64, &gen);
    weights.push_back(w);
    Tensor term = colony::sum(colony::mul(o, w));
    loss = loss.defined() ? colony::add(loss, term) : term;
  }
  if (!loss.requires_grad()) return ::testing::AssertionFailure() << "gradcheck: the output does not require grad";
  loss.backward();

  NoGradGuard no_grad;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    Tensor g = inputs[i].grad();
    if (g.defined() && g.sizes() != inputs[i].sizes()) {
      return ::testing::AssertionFailure() << "input " << i << ": gradient shape " << shape_str(g.sizes())
                                           << " != input shape " << shape_str(inputs[i].sizes());
    }
    std::vector<double> analytic = g.defined() ? values(g) : std::vector<double>(inputs[i].numel(), 0.0);
    for (int64_t k = 0; k < inputs[i].numel(); ++k) {
      double plus = detail::weighted_sum(f(detail::perturbed(inputs, i, k, opts.eps)), weights);
      double minus = detail::weighted_sum(f(detail::perturbed(inputs, i, k, -opts.eps)), weights);
      double numeric = (plus - minus) / (2 * opts.eps);
      double a = analytic[k];
      if (!(std::abs(a - numeric) <= opts.atol + opts.rtol * std::abs(numeric))) {
        return ::testing::AssertionFailure() << "input " << i << " " << shape_str(inputs[i].sizes())
                                             << ", element " << k << ": analytic " << a << " vs numeric "
                                             << numeric;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult gradcheck(const SingleOutputFn& f, const std::vector<Tensor>& inputs,
                                            const GradcheckOptions& opts = {}) {
  return gradcheck_multi([&f](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, inputs, opts);
}

// Second derivatives (torch.autograd.gradgradcheck): the gradient check of the function that
// returns f's input gradients for L = sum <f(inputs), v> (v fixed random), computed by
// autograd::grad with create_graph. So every backward formula f goes through is itself checked as a
// differentiable function, against central differences of the first gradients.
inline ::testing::AssertionResult gradgradcheck(const SingleOutputFn& f, const std::vector<Tensor>& inputs,
                                                const GradcheckOptions& opts = {}) {
  std::vector<bool> checked;
  for (const Tensor& in : inputs) checked.push_back(in.requires_grad());
  Tensor v;
  auto first_gradients = [&](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    EnableGradGuard grad_mode;  // gradcheck_multi evaluates the perturbed points under no-grad
    std::vector<Tensor> leaves = in, wrt;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!checked[i]) continue;
      // A perturbed copy is a plain tensor: differentiate at it as at a fresh leaf.
      if (!leaves[i].requires_grad()) leaves[i] = leaves[i].detach().requires_grad_(true);
      wrt.push_back(leaves[i]);
    }
    Tensor y = f(leaves);
    if (!v.defined()) {
      Generator gen(opts.seed + 1);
      v = raw::randn(y.sizes(), kFloat64, &gen);
    }
    std::vector<Tensor> grads = autograd::grad({colony::sum(colony::mul(y, v))}, wrt, {}, std::nullopt,
                                               /*create_graph=*/true, /*allow_unused=*/true);
    // 0 * x keeps a gradient that does not depend on the inputs (f linear) checkable: its
    // analytic second derivative is then zero, as the numeric one must be.
    for (size_t j = 0; j < grads.size(); ++j) {
      Tensor zero_term = colony::mul(wrt[j], 0.0);
      grads[j] = grads[j].defined() ? colony::add(grads[j], zero_term) : zero_term;
    }
    return grads;
  };
  return gradcheck_multi(first_gradients, inputs, opts);
}

// A float64 leaf requiring grad with values uniform in [lo, hi), from a fixed seed.
inline Tensor input(const Shape& shape, double lo = -1.0, double hi = 1.0, uint64_t seed = 7) {
  Generator gen(seed);
  Tensor t = raw::add(raw::mul(raw::rand(shape, kFloat64, &gen), hi - lo), lo);
  t.requires_grad_(true);
  return t;
}

// The same values as `input(...)` in a non-contiguous layout (every other element of a buffer
// twice as wide in the last dim), so backward formulas meet strided inputs.
inline Tensor strided_input(const Shape& shape, double lo = -1.0, double hi = 1.0, uint64_t seed = 7) {
  Tensor dense = input(shape, lo, hi, seed).detach();
  if (shape.empty()) return input(shape, lo, hi, seed);
  Shape wide = shape;
  wide.back() *= 2;
  Tensor buffer = raw::zeros(wide, kFloat64);
  Tensor view = raw::slice(buffer, -1, 0, wide.back(), 2);
  raw::copy_(view, dense);
  view.requires_grad_(true);
  return view;
}

}  // namespace colony::testing
