// The activations of nn/activation.h against PyTorch (tests/nn/activation_golden.py writes
// activation_golden.h): outputs and gradients in float64, float32 and bfloat16 on inputs that hold
// the corner cases (+-inf, NaN, signed zeros, the kinks at 0, +-3 and 6, softplus's thresholds, values
// far out on both sides), PReLU's weight gradient, and the softmax family.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "autograd/autograd.h"
#include "nn/activation.h"
#include "tests/nn/activation_golden.h"
#include "tests/test_util.h"

namespace colony {
namespace {

namespace F = nn::functional;
namespace golden = activation_golden;
using Fn = std::function<Tensor(const Tensor&)>;

// The Colony call for each name the golden script uses.
const std::map<std::string, Fn>& calls() {
  static const std::map<std::string, Fn> table = {
      {"leaky_relu", [](const Tensor& x) { return F::leaky_relu(x); }},
      {"leaky_relu(negative_slope=0.2)", [](const Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions(0.2)); }},
      {"leaky_relu(negative_slope=-1.5)",
       [](const Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(-1.5)); }},
      {"elu", [](const Tensor& x) { return F::elu(x); }},
      {"elu(alpha=0.5)", [](const Tensor& x) { return F::elu(x, F::ELUFuncOptions().alpha(0.5)); }},
      {"selu", [](const Tensor& x) { return F::selu(x); }},
      {"celu", [](const Tensor& x) { return F::celu(x); }},
      {"celu(alpha=0.5)", [](const Tensor& x) { return F::celu(x, F::CELUFuncOptions(0.5)); }},
      {"softplus", [](const Tensor& x) { return F::softplus(x); }},
      {"softplus(beta=2, threshold=5)",
       [](const Tensor& x) { return F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(5)); }},
      {"softplus(beta=0.5, threshold=1)",
       [](const Tensor& x) { return F::softplus(x, F::SoftplusFuncOptions().beta(0.5).threshold(1)); }},
      {"mish", [](const Tensor& x) { return F::mish(x); }},
      {"hardswish", [](const Tensor& x) { return F::hardswish(x); }},
      {"hardsigmoid", [](const Tensor& x) { return F::hardsigmoid(x); }},
      {"hardtanh", [](const Tensor& x) { return F::hardtanh(x); }},
      {"hardtanh(min_val=-2, max_val=3.5)",
       [](const Tensor& x) { return F::hardtanh(x, F::HardtanhFuncOptions().min_val(-2).max_val(3.5)); }},
      {"relu6", [](const Tensor& x) { return F::relu6(x); }},
      {"logsigmoid", [](const Tensor& x) { return F::logsigmoid(x); }},
      {"softsign", [](const Tensor& x) { return F::softsign(x); }},
      {"tanhshrink", [](const Tensor& x) { return F::tanhshrink(x); }},
      {"tanh", [](const Tensor& x) { return F::tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return F::sigmoid(x); }},
      {"hardshrink", [](const Tensor& x) { return F::hardshrink(x); }},
      {"hardshrink(lambd=2.9)", [](const Tensor& x) { return F::hardshrink(x, F::HardshrinkFuncOptions(2.9)); }},
      {"softshrink", [](const Tensor& x) { return F::softshrink(x); }},
      {"softshrink(lambd=3)", [](const Tensor& x) { return F::softshrink(x, F::SoftshrinkFuncOptions().lambda(3)); }},
      {"softshrink(lambd=0)", [](const Tensor& x) { return F::softshrink(x, F::SoftshrinkFuncOptions(0)); }},
      {"threshold(threshold=0.5, value=-2)", [](const Tensor& x) { return F::threshold(x, F::ThresholdFuncOptions(0.5, -2)); }},
      {"threshold(threshold=-3, value=20)", [](const Tensor& x) { return F::threshold(x, F::ThresholdFuncOptions(-3, 20)); }},
      {"rrelu(lower=0.1, upper=0.3, training=False)",
       [](const Tensor& x) { return F::rrelu(x, F::RReLUFuncOptions().lower(0.1).upper(0.3)); }},
      {"rrelu", [](const Tensor& x) { return F::rrelu(x); }},
  };
  return table;
}

// got matches want to atol + rtol |want|; NaN matches NaN, an infinity itself, and where the
// expected value is a zero (in float64) its sign must match too: hardswish(-3) is -0 in PyTorch.
::testing::AssertionResult matches(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                                   double atol, bool signed_zeros) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    bool ok = (std::isnan(g) && std::isnan(w)) || g == w || std::abs(g - w) <= atol + rtol * std::abs(w);
    if (ok && signed_zeros && w == 0 && std::signbit(g) != std::signbit(w)) ok = false;
    if (!ok) {
      return ::testing::AssertionFailure() << "at x = " << golden::kX[i % golden::kX.size()] << " (element " << i
                                           << "): " << g << " vs PyTorch's " << w;
    }
  }
  return ::testing::AssertionSuccess();
}

// Tolerances per dtype: glibc's libm against PyTorch's vectorized (Sleef) functions differ by an ulp
// or so, which the composed formulas (mish's gradient: 4.5e-7 at x = -1) can double; bfloat16
// results are float32 results rounded once, at most one bfloat16 ulp apart (2^-7 relative at the
// bottom of a binade: logsigmoid's gradient at 1 is 0.875 here, 0.87109375 in torch, whose
// log_sigmoid_backward reads a bfloat16 buffer). softsign and tanhshrink are compositions in both
// (x / (|x| + 1), x - tanh x) whose gradients sum two terms that nearly cancel for large |x|, in the
// input's dtype: their rounding differs with the order of the ops (softsign's float64 gradient at
// -100: 1.6e-14 relative; its bfloat16 gradient there is 6.1e-5 here, 1.2e-4 in torch, both the
// difference of two terms of 1.1e-2 rounded to bfloat16; at -6, 0.0332 against 0.0342, one ulp of
// the 0.232 terms), so they are held to an ulp of the terms (at most 2.7 here: 1e-2).
struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance(DType dtype, bool composite) {
  if (dtype == kFloat64) return composite ? Tolerance{1e-13, 1e-300} : Tolerance{1e-14, 1e-300};
  if (dtype == kFloat32) return composite ? Tolerance{1e-5, 1e-7} : Tolerance{1e-6, 1e-38};
  return composite ? Tolerance{1.0 / 64, 1e-2} : Tolerance{1.0 / 128, 1e-38};
}

TEST(ActivationGolden, EveryCaseHasACall) {
  std::set<std::string> names;
  for (const auto& c : golden::kCases) names.insert(c.name);
  for (const std::string& name : names) EXPECT_TRUE(calls().count(name)) << name;
  EXPECT_EQ(names.size(), calls().size());
}

TEST(ActivationGolden, ValuesAndGradientsMatchPyTorch) {
  const int64_t n = static_cast<int64_t>(golden::kX.size());
  for (const auto& c : golden::kCases) {
    SCOPED_TRACE(c.name + " in " + dtype_name(c.dtype));
    auto call = calls().find(c.name);
    ASSERT_NE(call, calls().end());
    Tensor x = raw::to(raw::from_vector(golden::kX, {n}), kCPU, c.dtype);
    Tensor g = raw::to(raw::from_vector(golden::kG, {n}), kCPU, c.dtype);
    x.requires_grad_();
    Tensor y = call->second(x);
    EXPECT_EQ(y.dtype(), c.dtype);
    const Tolerance tol = tolerance(c.dtype, c.name == "softsign" || c.name == "tanhshrink");
    EXPECT_TRUE(matches(testing::values(y.detach()), c.y, tol.rtol, tol.atol, c.dtype == kFloat64)) << "output";
    y.backward(g);
    ASSERT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().dtype(), c.dtype);
    EXPECT_TRUE(matches(testing::values(x.grad()), c.dx, tol.rtol, tol.atol, false)) << "gradient";
  }
}

TEST(ActivationGolden, PReLUValuesAndBothGradients) {
  std::vector<double> xs(24), gs(24);
  for (int i = 0; i < 24; ++i) {
    xs[i] = 3 * std::sin(1.3 * i);
    gs[i] = 1 + i / 8.0;
  }
  struct Case {
    const char* name;
    const std::vector<double>& weight;
    const std::vector<double>& y;
    const std::vector<double>& dx;
    const std::vector<double>& dw;
  };
  for (const Case& c : {Case{"per channel", golden::kPReLUChannelsWeight, golden::kPReLUChannelsY,
                             golden::kPReLUChannelsDx, golden::kPReLUChannelsDw},
                        Case{"one slope", golden::kPReLUOneWeight, golden::kPReLUOneY, golden::kPReLUOneDx,
                             golden::kPReLUOneDw}}) {
    SCOPED_TRACE(c.name);
    Tensor x = raw::from_vector(xs, {2, 3, 4});
    Tensor w = raw::from_vector(c.weight, {static_cast<int64_t>(c.weight.size())});
    x.requires_grad_();
    w.requires_grad_();
    Tensor y = F::prelu(x, w);
    EXPECT_TRUE(matches(testing::values(y.detach()), c.y, 1e-15, 0, true));
    y.backward(raw::from_vector(gs, {2, 3, 4}));
    EXPECT_TRUE(matches(testing::values(x.grad()), c.dx, 1e-15, 0, false));
    EXPECT_TRUE(matches(testing::values(w.grad()), c.dw, 1e-14, 1e-14, false));
  }
}

TEST(ActivationGolden, SoftmaxFamilyMatchesPyTorch) {
  std::vector<double> xs(12), gs(12);
  for (int i = 0; i < 12; ++i) {
    xs[i] = 4 * std::cos(0.7 * i);
    gs[i] = 1 + i / 8.0;
  }
  for (const auto& c : golden::kSoftmaxCases) {
    SCOPED_TRACE(c.name + " dim " + std::to_string(c.dim));
    Tensor x = raw::from_vector(xs, {3, 4});
    x.requires_grad_();
    Tensor y = c.name == "softmax"       ? F::softmax(x, F::SoftmaxFuncOptions(c.dim))
               : c.name == "log_softmax" ? F::log_softmax(x, F::LogSoftmaxFuncOptions(c.dim))
                                         : F::softmin(x, F::SoftminFuncOptions(c.dim));
    EXPECT_TRUE(matches(testing::values(y.detach()), c.y, 1e-14, 1e-16, false));
    y.backward(raw::from_vector(gs, {3, 4}));
    EXPECT_TRUE(matches(testing::values(x.grad()), c.dx, 1e-13, 1e-15, false));
  }
}

}  // namespace
}  // namespace colony
