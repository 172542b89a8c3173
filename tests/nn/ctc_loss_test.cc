// F::ctc_loss and nn::CTCLoss (nn/functional_loss_ctc.cc, kernels/common/ctc_loss.h): every case of
// ctc_loss_golden.h (torch's losses and log_probs gradients, written by ctc_loss_golden.py: padded
// and concatenated targets, repeated labels, empty targets, inputs too short for their targets
// with and without zero_infinity, unbatched input, float64 and float32, each reduction); float64
// gradchecks; the vector overload, the module, autocast; every refusal with torch's message; the
// cases on CUDA against torch's values (`_CUDA`).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "nn/loss.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/ctc_loss_golden.h"

namespace colony::nn {
namespace {

using colony::testing::gradcheck;
using colony::testing::input;
using colony::testing::throws_with;
using colony::testing::values;
using F::Reduction;
using In = const std::vector<Tensor>&;
namespace golden = colony::testing::golden;

Tensor longs(const std::vector<int64_t>& v, const Shape& shape) {
  return raw::from_vector<int64_t>(v, shape, TensorOptions(kInt64));
}

bool has(const std::string& name, const std::string& part) { return name.find(part) != std::string::npos; }

// The options each case of ctc_loss_golden.py names: its reduction, blank=4 for blank_last,
// zero_infinity.
F::CTCLossFuncOptions options_of(const std::string& name) {
  F::CTCLossFuncOptions o;
  o.reduction(has(name, "_none") ? Reduction::None : has(name, "_sum") ? Reduction::Sum : Reduction::Mean);
  if (has(name, "blank_last")) o.blank(4);
  o.zero_infinity(has(name, "zero_infinity"));
  return o;
}

std::map<std::string, golden::Op> calls() {
  std::map<std::string, golden::Op> t;
  for (const golden::Case& c : testing::ctc_loss_golden::kCases) {
    const F::CTCLossFuncOptions o = options_of(c.name);
    t[c.name] = [o](In x, Device) { return F::ctc_loss(x[0], x[1], x[2], x[3], o); };
  }
  return t;
}

TEST(CtcLossGolden, EveryCaseAsTorch) {
  ASSERT_GE(testing::ctc_loss_golden::kCases.size(), 17u);
  for (const golden::Case& c : testing::ctc_loss_golden::kCases) EXPECT_TRUE(golden::matches(c, calls(), kCPU, 1e-5));
}

// torch's gradient (and so Colony's) is with respect to log_probs as if they were logits: it equals
// the loss's derivative once a log_softmax over C precedes it (its rows then sum to 0), which is
// how ctc_loss is used; so the checks run through log_softmax.
TEST(CtcLossGradcheck, Float64EachReductionAndTargetLayout) {
  const Tensor padded = longs({1, 1, 2, 3, 2, 0}, {2, 3});
  const Tensor concatenated = longs({1, 1, 2, 3, 2}, {5});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    EXPECT_TRUE(gradcheck([&](In x) { return F::ctc_loss(log_softmax(x[0], 2), padded, std::vector<int64_t>{6, 5},
                                                          std::vector<int64_t>{3, 2}, F::CTCLossFuncOptions().reduction(r)); },
                          {input({6, 2, 4}, -2, 1)}));
  }
  EXPECT_TRUE(gradcheck([&](In x) { return F::ctc_loss(log_softmax(x[0], 2), concatenated, std::vector<int64_t>{6, 4},
                                                        std::vector<int64_t>{3, 2}, F::CTCLossFuncOptions().blank(3)); },
                        {input({6, 2, 4}, -2, 1, 9)}));
  // An impossible sample (2 labels in 1 step) beside a possible one, its loss and gradient zeroed.
  EXPECT_TRUE(gradcheck([&](In x) {
                          return F::ctc_loss(log_softmax(x[0], 2), padded, std::vector<int64_t>{1, 5}, std::vector<int64_t>{2, 2},
                                             F::CTCLossFuncOptions().zero_infinity(true));
                        },
                        {input({5, 2, 4}, -2, 1, 11)}));
}

TEST(CtcLoss, VectorLengthsModuleAndPrinting) {
  Tensor lp = raw::log_softmax(raw::randn({7, 3, 5}, TensorOptions(kFloat64)), 2);
  Tensor targets = longs({1, 2, 2, 4, 3, 0, 0, 0, 1, 1, 1, 1}, {3, 4});
  const Tensor il = longs({7, 6, 7}, {3}), tl = longs({3, 2, 3}, {3});
  const std::vector<double> want = values(F::ctc_loss(lp, targets, il, tl));
  EXPECT_EQ(values(F::ctc_loss(lp, targets, std::vector<int64_t>{7, 6, 7}, std::vector<int64_t>{3, 2, 3})), want);
  CTCLoss module(CTCLossOptions().reduction(Reduction::Sum));
  EXPECT_EQ(values(module.forward(lp, targets, il, tl)),
            values(F::ctc_loss(lp, targets, il, tl, F::CTCLossFuncOptions().reduction(Reduction::Sum))));
  EXPECT_EQ(values(module.forward(lp, targets, std::vector<int64_t>{7, 6, 7}, std::vector<int64_t>{3, 2, 3})),
            values(module.forward(lp, targets, il, tl)));
  EXPECT_EQ(module.repr(), "CTCLoss()");
  // int32 targets and lengths, as torch takes them.
  EXPECT_EQ(values(F::ctc_loss(lp, raw::to(targets, kCPU, kInt32), raw::to(il, kCPU, kInt32), raw::to(tl, kCPU, kInt32))),
            want);
}

TEST(CtcLoss, Float32StaysAndAutocastComputesInFloat32) {
  Tensor lp = raw::log_softmax(raw::randn({6, 2, 4}), 2);
  Tensor targets = longs({1, 2, 3, 3}, {2, 2});
  const std::vector<int64_t> il = {6, 6}, tl = {2, 2};
  EXPECT_EQ(F::ctc_loss(lp, targets, il, tl).dtype(), kFloat32);
  Tensor half = raw::to(lp, kCPU, kBFloat16);
  EXPECT_TRUE(throws_with([&] { F::ctc_loss(half, targets, il, tl); }, "\"ctc_loss\" not implemented for 'bfloat16'"));
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  Tensor out = F::ctc_loss(half, targets, il, tl);
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_EQ(values(out), values(F::ctc_loss(raw::to(half, kCPU, kFloat32), targets, il, tl)));
}

TEST(CtcLoss, EveryRefusalSaysWhatWasWrong) {
  Tensor lp = raw::log_softmax(raw::randn({6, 2, 5}), 2);
  Tensor targets = longs({1, 2, 3, 3}, {2, 2});
  auto ctc = [&](const Tensor& x, const Tensor& tg, std::vector<int64_t> il, std::vector<int64_t> tl,
                 F::CTCLossFuncOptions o = {}) { return F::ctc_loss(x, tg, il, tl, o); };
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {6, 6}, {2, 3}); },
                          "Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 "
                          "'targets' (while checking arguments for ctc_loss_allocate_outputs)"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, longs({1, 2, 3}, {3}), {6, 6}, {2, 2}); },
                          "Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 'targets'"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {7, 6}, {2, 2}); },
                          "Expected input_lengths to have value at most 6, but got value 7"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {-1, 6}, {2, 2}); },
                          "Expected input_lengths to have value at least 0, but got value -1"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {6, 6}, {-1, 2}); },
                          "Expected target_lengths to have value at least 0, but got value -1"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {6, 6, 6}, {2, 2}); }, "input_lengths must be of size batch_size"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {6, 6}, {2}); }, "target_lengths must be of size batch_size"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {6, 6}, {2, 2}, F::CTCLossFuncOptions().blank(5)); },
                          "blank must be in label range"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, raw::zeros({2, 2, 2}, TensorOptions(kInt64)), {6, 6}, {2, 2}); },
                          "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'"));
  EXPECT_TRUE(throws_with([&] { ctc(raw::reshape(lp, {6, 10}), targets, {6, 6}, {2, 2}); },
                          "input_lengths must be of size batch_size"));
  EXPECT_TRUE(throws_with([&] { ctc(raw::randn({6, 2, 5, 1}), targets, {6, 6}, {2, 2}); },
                          "Expected 3-dimensional tensor, but got 4-dimensional tensor for argument #1 'log_probs'"));
  EXPECT_TRUE(throws_with([&] { ctc(raw::zeros({0, 2, 5}), targets, {0, 0}, {0, 0}); }, "log_probs tensor must not be empty"));
  EXPECT_TRUE(throws_with([&] { F::ctc_loss(lp, targets, raw::ones({2}), longs({2, 2}, {2})); },
                          "input_lengths must be integral"));
  EXPECT_TRUE(throws_with([&] { F::ctc_loss(lp, targets, longs({6, 6}, {2}), raw::ones({2})); },
                          "target_lengths must be integral"));
  EXPECT_TRUE(throws_with([&] { ctc(lp, targets, {6, 6}, {2, 2}, F::CTCLossFuncOptions().reduction(Reduction::BatchMean)); },
                          "kl_div's only"));
  // Colony's own check (torch reads outside log_probs there): a label outside [0, C).
  EXPECT_TRUE(throws_with([&] { ctc(lp, longs({1, 5, 3, 3}, {2, 2}), {6, 6}, {2, 2}); },
                          "ctc_loss: target 5 (label 1 of sample 0) is out of bounds for 5 classes"));
  // Past a sample's target length, a padded target's values are never read, as torch's.
  EXPECT_NO_THROW(ctc(lp, longs({1, 99, 3, 3}, {2, 2}), {6, 6}, {1, 2}));
}

TEST(CtcLoss, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::ctc_loss_golden::kCases) {
    EXPECT_TRUE(golden::matches(c, calls(), Device::cuda(0), 1e-5));
  }
  // Lengths from a CUDA tensor, targets on the host: moved as torch moves them.
  Tensor lp = raw::to(raw::log_softmax(raw::randn({9, 3, 6}), 2), Device::cuda(0), kFloat32);
  Tensor targets = longs({1, 2, 2, 4, 3, 0, 0, 0, 5, 1, 1, 1}, {3, 4});
  Tensor il = raw::to(longs({9, 6, 8}, {3}), Device::cuda(0), kInt64), tl = longs({3, 2, 4}, {3});
  Tensor host = F::ctc_loss(raw::to(lp, kCPU, kFloat32), targets, il, tl, F::CTCLossFuncOptions().reduction(Reduction::None));
  Tensor cuda = F::ctc_loss(lp, targets, il, tl, F::CTCLossFuncOptions().reduction(Reduction::None));
  const std::vector<double> a = values(host), b = values(cuda);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(a[i])));
}

}  // namespace
}  // namespace colony::nn
