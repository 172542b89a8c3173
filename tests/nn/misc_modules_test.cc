// The modules and functions added to close torch.nn's list: F::glu / GLU, Softmax2d, F::rrelu /
// RReLU, F::threshold / Threshold (in place too), Hardshrink, Softshrink, F::bilinear / Bilinear,
// ParameterList, F::upsample_nearest / upsample_bilinear and UpsamplingNearest2d /
// UpsamplingBilinear2d, CrossMapLRN2d and AdaptiveLogSoftmaxWithLoss. Every case of
// misc_modules_golden.h (torch's outputs and gradients of every input, float64 and float32, written
// by misc_modules_golden.py), float64 gradchecks, refusals in torch's words, printing, and a `_CUDA`
// run of the cases. The elementwise values at the corner cases are in activation_golden_test.cc.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "autograd/autocast.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/misc_modules_golden.h"

namespace colony::nn {
namespace {

using colony::testing::all_close;
using colony::testing::gradcheck;
using colony::testing::input;
using colony::testing::throws_with;
using colony::testing::values;
using In = const std::vector<Tensor>&;
namespace golden = colony::testing::golden;

// An AdaptiveLogSoftmaxWithLoss(8, 12, {4, 8}, div_value 2) whose parameters are the given tensors
// (head, tail.0.0, tail.0.1, tail.1.0, tail.1.1[, head bias]), so gradients reach them.
std::shared_ptr<AdaptiveLogSoftmaxWithLoss> asm_with(In w, size_t first, Device device) {
  const bool head_bias = w.size() - first == 6;
  auto m = std::make_shared<AdaptiveLogSoftmaxWithLoss>(
      AdaptiveLogSoftmaxWithLossOptions(8, 12, {4, 8}).div_value(2.0).head_bias(head_bias));
  m->to(device, w[first].dtype());
  m->head->weight = m->head->replace_parameter("weight", w[first], w[first].requires_grad());
  if (head_bias) m->head->bias = m->head->replace_parameter("bias", w[first + 5], w[first + 5].requires_grad());
  for (int64_t i = 0; i < 2; ++i) {
    auto seq = m->tail->ptr<Sequential>(i);
    for (int64_t j = 0; j < 2; ++j) {
      auto lin = seq->ptr<Linear>(j);
      lin->weight = lin->replace_parameter("weight", w[first + 1 + 2 * i + j], w[first + 1 + 2 * i + j].requires_grad());
    }
  }
  return m;
}

Tensor moved(const Tensor& t, Device device) { return raw::to(t, device, t.dtype()); }

Tensor cross_map(const Tensor& x, int64_t size, double alpha = 0.5, double beta = 0.75, double k = 1.0) {
  return CrossMapLRN2d(CrossMapLRN2dOptions(size).alpha(alpha).beta(beta).k(k)).forward(x);
}

// Colony's call for each case of misc_modules_golden.py (the float32 cases end in " f32").
const std::map<std::string, golden::Op>& calls() {
  static const std::map<std::string, golden::Op> table = [] {
    std::map<std::string, golden::Op> base = {
        {"glu", [](In x, Device) { return F::glu(x[0]); }},
        {"glu(dim=0)", [](In x, Device) { return F::glu(x[0], F::GLUFuncOptions(0)); }},
        {"glu(dim=1)", [](In x, Device) { return F::glu(x[0], 1); }},
        {"softmax2d 4d", [](In x, Device) { return Softmax2d().forward(x[0]); }},
        {"softmax2d 3d", [](In x, Device) { return Softmax2d().forward(x[0]); }},
        {"bilinear", [](In x, Device) { return F::bilinear(x[0], x[1], x[2], x[3]); }},
        {"bilinear no bias", [](In x, Device) { return F::bilinear(x[0], x[1], x[2]); }},
        {"bilinear batch dims", [](In x, Device) { return F::bilinear(x[0], x[1], x[2], x[3]); }},
        {"bilinear 1-d", [](In x, Device) { return F::bilinear(x[0], x[1], x[2], x[3]); }},
        {"upsample_nearest scale 2",
         [](In x, Device) { return F::upsample_nearest(x[0], UpsamplingOptions().scale_factor(2.0)); }},
        {"upsample_nearest size", [](In x, Device) { return F::upsample_nearest(x[0], UpsamplingOptions().size({5, 4})); }},
        {"upsample_bilinear scale 2",
         [](In x, Device) { return F::upsample_bilinear(x[0], UpsamplingOptions().scale_factor(2.0)); }},
        {"upsample_bilinear size", [](In x, Device) { return F::upsample_bilinear(x[0], UpsamplingOptions().size({5, 4})); }},
        {"cross_map_lrn2d size 3 C 7", [](In x, Device) { return cross_map(x[0], 3); }},
        {"cross_map_lrn2d size 4 C 7", [](In x, Device) { return cross_map(x[0], 4); }},
        {"cross_map_lrn2d size 5 C 7", [](In x, Device) { return cross_map(x[0], 5); }},
        {"cross_map_lrn2d size 5 C 2", [](In x, Device) { return cross_map(x[0], 5); }},
        {"cross_map_lrn2d size 1 C 3", [](In x, Device) { return cross_map(x[0], 1); }},
        {"cross_map_lrn2d alpha beta k", [](In x, Device) { return cross_map(x[0], 3, 2.0, 0.5, 2.0); }},
        {"asm output shortlist only", [](In x, Device d) { return asm_with(x, 2, d)->forward(x[0], x[1]).output; }},
        {"asm output unbatched", [](In x, Device d) { return asm_with(x, 2, d)->forward(x[0], x[1]).output; }},
    };
    for (const std::string hb : {"", " head_bias"}) {
      base["asm output" + hb] = [](In x, Device d) { return asm_with(x, 2, d)->forward(x[0], x[1]).output; };
      base["asm loss" + hb] = [](In x, Device d) { return asm_with(x, 2, d)->forward(x[0], x[1]).loss; };
      base["asm log_prob" + hb] = [](In x, Device d) { return asm_with(x, 1, d)->log_prob(x[0]); };
      base["asm predict" + hb] = [](In x, Device d) { return asm_with(x, 1, d)->predict(x[0]); };
    }
    std::map<std::string, golden::Op> all = base;
    for (const auto& [name, op] : base) all[name + " f32"] = op;
    return all;
  }();
  return table;
}

// float32: CrossMapLRN2d's sums are a matrix product here and a running sum in torch.
constexpr double kF32Tol = 1e-5;

TEST(MiscModules, EveryCaseMatchesTorch) {
  EXPECT_EQ(std::size(misc_modules_golden::kCases), calls().size());
  for (const golden::Case& c : misc_modules_golden::kCases) EXPECT_TRUE(golden::matches(c, calls(), kCPU, kF32Tol));
}

TEST(MiscModules, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : misc_modules_golden::kCases) {
    EXPECT_TRUE(golden::matches(c, calls(), Device::cuda(0), kF32Tol));
  }
  // The elementwise ones and rrelu's draws, on the device.
  Tensor x = moved(input({4, 5}, -3, 3), Device::cuda(0));
  Tensor cpu = moved(x, kCPU);
  EXPECT_TRUE(all_close(moved(F::hardshrink(x), kCPU), F::hardshrink(cpu), 0, 0));
  EXPECT_TRUE(all_close(moved(F::softshrink(x), kCPU), F::softshrink(cpu), 1e-15, 0));
  EXPECT_TRUE(all_close(moved(F::threshold(x, F::ThresholdFuncOptions(0.5, -2)), kCPU),
                        F::threshold(cpu, F::ThresholdFuncOptions(0.5, -2)), 0, 0));
  Tensor y = F::rrelu(x, F::RReLUFuncOptions().training(true));
  std::vector<double> xs = values(cpu), ys = values(moved(y, kCPU));
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] > 0) {
      EXPECT_EQ(ys[i], xs[i]);
    } else if (xs[i] < 0) {
      EXPECT_TRUE(ys[i] / xs[i] >= 1.0 / 8 && ys[i] / xs[i] <= 1.0 / 3);
    }
  }
}

TEST(MiscModules, Gradchecks) {
  EXPECT_TRUE(gradcheck([](In x) { return F::glu(x[0], 1); }, {input({2, 4, 3})}));
  EXPECT_TRUE(gradcheck([](In x) { return Softmax2d().forward(x[0]); }, {input({2, 3, 2, 2})}));
  EXPECT_TRUE(gradcheck([](In x) { return F::bilinear(x[0], x[1], x[2], x[3]); },
                        {input({2, 3, 2}, -1, 1, 1), input({2, 3, 3}, -1, 1, 2), input({4, 2, 3}, -1, 1, 3),
                         input({4}, -1, 1, 4)}));
  for (int64_t size : {2, 3, 4, 5}) {
    EXPECT_TRUE(gradcheck([size](In x) { return cross_map(x[0], size); }, {input({2, 6, 2, 2}, -2, 2)})) << size;
  }
  EXPECT_TRUE(gradcheck([](In x) { return F::upsample_bilinear(x[0], UpsamplingOptions().size({3, 5})); },
                        {input({1, 2, 2, 3})}));
  // Shrinks and threshold away from their kinks (random points in (-2, 2) miss +-0.5 and 0.3).
  EXPECT_TRUE(gradcheck([](In x) { return F::hardshrink(x[0]); }, {input({3, 5}, -2, 2)}));
  EXPECT_TRUE(gradcheck([](In x) { return F::softshrink(x[0], 0.3); }, {input({3, 5}, -2, 2)}));
  EXPECT_TRUE(gradcheck([](In x) { return F::threshold(x[0], F::ThresholdFuncOptions(0.3, 7)); }, {input({3, 5}, -2, 2)}));
  // rrelu in training with the same draws each time: a generator seeded afresh per call.
  EXPECT_TRUE(gradcheck(
      [](In x) {
        Generator gen(11);
        return F::rrelu(x[0], F::RReLUFuncOptions().training(true), &gen);
      },
      {input({3, 5}, -2, 2)}));
  // AdaptiveLogSoftmaxWithLoss: the input and every weight, through output, loss and log_prob.
  // w: the input, then the weights as asm_with reads them from index 1.
  std::vector<Tensor> w = {input({7, 8}, -1, 1, 1), input({6, 8}, -1, 1, 2), input({4, 8}, -1, 1, 3),
                           input({4, 4}, -1, 1, 4), input({2, 8}, -1, 1, 5), input({4, 2}, -1, 1, 6),
                           input({6}, -1, 1, 7)};
  Tensor target = raw::from_vector<int64_t>({0, 5, 11, 3, 8, 6, 9}, {7});
  EXPECT_TRUE(gradcheck([&](In x) { return asm_with(x, 1, kCPU)->forward(x[0], target).loss; }, w));
  EXPECT_TRUE(gradcheck([&](In x) { return asm_with(x, 1, kCPU)->forward(x[0], target).output; }, w));
  EXPECT_TRUE(gradcheck([&](In x) { return asm_with(x, 1, kCPU)->log_prob(x[0]); }, w));
}

TEST(MiscModules, RefusalsInTorchsWords) {
  Tensor x = raw::randn({3, 5});
  EXPECT_TRUE(throws_with([&] { F::glu(x); }, "Halving dimension must be even, but dimension 1 is size 5"));
  EXPECT_TRUE(throws_with([&] { F::glu(raw::randn({})); }, "glu does not support scalars because halving size must be even"));
  EXPECT_TRUE(throws_with([&] { F::glu(x, 2); }, "glu: dim 2 out of range for a 2-D tensor"));
  EXPECT_TRUE(throws_with([&] { F::softshrink(x, -0.5); },
                          "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -0.5"));
  EXPECT_TRUE(throws_with([&] { F::softshrink(raw::to(x, kCPU, kFloat64), -1); },
                          "lambda must be in range [0, 1.79769e+308] for input dtype Double, but found -1"));
  Tensor longs = raw::from_vector<int64_t>({1, 2}, {2});
  EXPECT_TRUE(throws_with([&] { F::hardshrink(longs); }, "hardshrink: expected a floating-point tensor, got int64"));
  EXPECT_TRUE(throws_with([&] { F::rrelu(longs, F::RReLUFuncOptions().training(true)); },
                          "rrelu: expected a floating-point tensor, got int64"));
  EXPECT_TRUE(throws_with([&] { F::rrelu(x, F::RReLUFuncOptions().lower(0.5).upper(0.2)); },
                          "Lower bound should be less than or equal to the upper bound"));
  EXPECT_TRUE(throws_with([&] { Softmax2d().forward(x); }, "Softmax2d: expected input to be 3D or 4D, got 2D instead"));
  EXPECT_TRUE(throws_with([&] { Softmax2d().forward(raw::randn({1, 2, 2, 2, 2})); },
                          "Softmax2d: expected input to be 3D or 4D, got 5D instead"));
  Tensor w = raw::randn({5, 3, 4});
  EXPECT_TRUE(throws_with([&] { F::bilinear(raw::randn({2, 3}), raw::randn({2, 4, 1}), w); },
                          "bilinear(): input dimensions do not match: got 2 and 3"));
  EXPECT_TRUE(throws_with([&] { F::bilinear(raw::randn({2, 3}), raw::randn({3, 4}), w); },
                          "bilinear(): input batch dimensions do not match at dim 0: got 2 and 3"));
  EXPECT_TRUE(throws_with([&] { F::bilinear(raw::randn({2, 2}), raw::randn({2, 4}), w); },
                          "bilinear(): input1 size does not match weight size: got 2 but expected 3"));
  EXPECT_TRUE(throws_with([&] { F::bilinear(raw::randn({2, 3}), raw::randn({2, 5}), w); },
                          "bilinear(): input2 size does not match weight size: got 5 but expected 4"));
  EXPECT_TRUE(throws_with([&] { F::bilinear(raw::randn({2, 3}), raw::randn({2, 4}), w, raw::randn({6})); },
                          "bilinear(): bias size does not match weight size: got 6 but expected 5"));
  EXPECT_TRUE(throws_with([&] { cross_map(x, 3); }, "CrossMapLRN2d: Expected input to be 4D, got 2D instead."));
  const std::string cutoffs_msg =
      "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each value is "
      "between 1 and n_classes-1";
  for (const std::vector<int64_t>& bad :
       std::vector<std::vector<int64_t>>{{5, 3}, {0, 4}, {4, 12}, {4, 4}}) {
    EXPECT_TRUE(throws_with([&] { AdaptiveLogSoftmaxWithLoss(AdaptiveLogSoftmaxWithLossOptions(8, 12, bad)); },
                            cutoffs_msg));
  }
  EXPECT_TRUE(throws_with([&] { AdaptiveLogSoftmaxWithLoss(AdaptiveLogSoftmaxWithLossOptions(8, 12, {})); },
                          "cutoffs should be a sequence of length larger than 0"));
  EXPECT_TRUE(throws_with([&] { AdaptiveLogSoftmaxWithLoss(AdaptiveLogSoftmaxWithLossOptions(8, 12, {4, 8})); },
                          "AdaptiveLogSoftmaxWithLoss: tail cluster 1 would project to in_features // div_value^2 = 0"));
  AdaptiveLogSoftmaxWithLoss m(AdaptiveLogSoftmaxWithLossOptions(8, 12, {4, 8}).div_value(2.0));
  Tensor h = raw::randn({3, 8});
  EXPECT_TRUE(throws_with([&] { m.forward(h, raw::from_vector<int64_t>({1, 2}, {2})); },
                          "Input and target should have the same size in the batch dimension."));
  EXPECT_TRUE(throws_with([&] { m.forward(raw::randn({3, 8, 1}), raw::from_vector<int64_t>({1, 2, 3}, {3})); },
                          "1D target tensor expects 2D input tensors, but found inputs with size torch.Size([3, 8, 1])"));
  EXPECT_TRUE(throws_with([&] { m.forward(h, raw::reshape(raw::from_vector<int64_t>({1}, {1}), {})); },
                          "0D target tensor expects 1D input tensors, but found inputs with size torch.Size([3, 8])"));
  EXPECT_TRUE(throws_with([&] { m.forward(h, raw::from_vector<int64_t>({1, 2, 3}, {3, 1})); },
                          "0D or 1D target tensor expected, multi-target not supported"));
  EXPECT_TRUE(throws_with([&] { m.forward(h, raw::from_vector<int64_t>({1, 12, -1}, {3})); },
                          "Target values should be in [0, 11], but values in range [-1, 12] were found. "));
}

TEST(MiscModules, PrintedAsTorchPrintsThem) {
  EXPECT_EQ(Hardshrink().repr(), "Hardshrink(0.5)");
  EXPECT_EQ(Softshrink(SoftshrinkOptions(0.25)).repr(), "Softshrink(0.25)");
  EXPECT_EQ(Threshold(0.1, 20).repr(), "Threshold(threshold=0.1, value=20.0)");
  EXPECT_EQ(Threshold(ThresholdOptions(0.1, 20).inplace(true)).repr(), "Threshold(threshold=0.1, value=20.0, inplace=True)");
  EXPECT_EQ(GLU().repr(), "GLU(dim=-1)");
  EXPECT_EQ(RReLU().repr(), "RReLU(lower=0.125, upper=0.3333333333333333)");
  EXPECT_EQ(RReLU(RReLUOptions().lower(0.1).upper(0.3).inplace(true)).repr(), "RReLU(lower=0.1, upper=0.3, inplace=True)");
  EXPECT_EQ(Softmax2d().repr(), "Softmax2d()");
  EXPECT_EQ(Bilinear(3, 4, 5).repr(), "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)");
  EXPECT_EQ(Bilinear(BilinearOptions(3, 4, 5).bias(false)).repr(),
            "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=False)");
  EXPECT_EQ(UpsamplingNearest2d(UpsamplingOptions().scale_factor(2.0)).repr(),
            "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')");
  EXPECT_EQ(UpsamplingBilinear2d(UpsamplingOptions().size({3, 4})).repr(), "UpsamplingBilinear2d(size=(3, 4), mode='bilinear')");
  EXPECT_EQ(CrossMapLRN2d(3).repr(), "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)");
  EXPECT_EQ(CrossMapLRN2d(CrossMapLRN2dOptions(5).k(2.5)).repr(), "CrossMapLRN2d(5, alpha=0.0001, beta=0.75, k=2.5)");
  ParameterList p({raw::randn({2}), raw::randn({3, 4})});
  EXPECT_EQ(p.repr(),
            "ParameterList(\n"
            "    (0): Parameter containing: [torch.float32 of size 2]\n"
            "    (1): Parameter containing: [torch.float32 of size 3x4]\n"
            ")");
  EXPECT_EQ(ParameterList().repr(), "ParameterList()");
  EXPECT_EQ(AdaptiveLogSoftmaxWithLoss(AdaptiveLogSoftmaxWithLossOptions(16, 10, {4})).repr(),
            "AdaptiveLogSoftmaxWithLoss(\n"
            "  (head): Linear(in_features=16, out_features=5, bias=False)\n"
            "  (tail): ModuleList(\n"
            "    (0): Sequential(\n"
            "      (0): Linear(in_features=16, out_features=4, bias=False)\n"
            "      (1): Linear(in_features=4, out_features=6, bias=False)\n"
            "    )\n"
            "  )\n"
            ")");
}

TEST(MiscModules, ParameterListHoldsParametersByIndex) {
  struct Holder : Module {
    Holder() { list = register_module("scales", std::make_shared<ParameterList>()); }
    std::shared_ptr<ParameterList> list;
  } holder;
  holder.list->append(raw::ones({2}));
  holder.list->extend({raw::zeros({3}), raw::full({1}, 5.0)});
  EXPECT_EQ(holder.list->size(), 3u);
  std::vector<std::string> keys;
  for (const auto& [k, t] : holder.state_dict()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"scales.0", "scales.1", "scales.2"}));
  EXPECT_EQ(holder.parameters().size(), 3u);
  // As libtorch's append (and ParameterDict::insert): the tensor's own requires_grad (torch's Python
  // ParameterList makes every entry a Parameter, requiring grad).
  EXPECT_FALSE((*holder.list)[0].requires_grad());
  holder.list->append(raw::ones({1}).requires_grad_(true));
  EXPECT_TRUE((*holder.list)[3].requires_grad());
  EXPECT_EQ(values((*holder.list)[-2]), std::vector<double>{5.0});
  EXPECT_EQ((*holder.list)[1].sizes(), (Shape{3}));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { holder.list->get(4); }, "index 4 is out of range"));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { holder.list->get(-5); }, "index -5 is out of range"));
  holder.list->set(1, raw::full({2, 2}, 7.0));
  EXPECT_EQ((*holder.list)[1].sizes(), (Shape{2, 2}));
  EXPECT_EQ(values((*holder.list)[2]), std::vector<double>{5.0});
  EXPECT_TRUE((*holder.list)[3].requires_grad());  // kept through the rebuild
  keys.clear();
  for (const auto& [k, t] : holder.state_dict()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"scales.0", "scales.1", "scales.2", "scales.3"}));
}

TEST(MiscModules, BilinearModuleInitAndForward) {
  Bilinear m(BilinearOptions(4, 3, 5));
  ASSERT_EQ(m.named_parameters().size(), 2u);
  EXPECT_EQ(m.named_parameters()[0].first, "weight");
  EXPECT_EQ(m.weight.sizes(), (Shape{5, 4, 3}));
  EXPECT_EQ(m.bias.sizes(), (Shape{5}));
  // torch's init: uniform(-1/sqrt(in1), 1/sqrt(in1)) = (-0.5, 0.5) for both.
  for (double v : values(m.weight)) EXPECT_LE(std::abs(v), 0.5);
  for (double v : values(m.bias)) EXPECT_LE(std::abs(v), 0.5);
  Tensor a = raw::randn({6, 4}), b = raw::randn({6, 3});
  EXPECT_TRUE(all_close(m.forward(a, b), F::bilinear(a, b, m.weight, m.bias), 0, 0));
  EXPECT_FALSE(Bilinear(BilinearOptions(4, 3, 5).bias(false)).bias.defined());
  AnyModule any(std::make_shared<Bilinear>(4, 3, 5));
  EXPECT_EQ(any.forward(a, b).sizes(), (Shape{6, 5}));
}

// torch's CUDA autocast list has bilinear under "promote": float32 operands stay float32 (the matrix
// product inside is not lowered), mixed operands compute in the widest.
TEST(MiscModules, BilinearIsNotLoweredUnderAutocast) {
  Tensor a = raw::randn({4, 3}), b = raw::randn({4, 2}), w = raw::randn({5, 3, 2});
  Tensor expected = F::bilinear(a, b, w);
  {
    AutocastGuard amp(DeviceType::CPU, kBFloat16);
    Tensor y = F::bilinear(a, b, w);
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TRUE(all_close(y, expected, 0, 0));
    EXPECT_EQ(F::bilinear(raw::to(a, kCPU, kBFloat16), b, w).dtype(), kFloat32);
  }
  EXPECT_EQ(F::bilinear(raw::to(a, kCPU, kFloat64), b, w).dtype(), kFloat64);
}

TEST(MiscModules, RReLUDrawsSlopesWhileTrainingAndUsesTheirMeanInEval) {
  Tensor x = input({200}, -2, 2);
  Tensor y = F::rrelu(x, F::RReLUFuncOptions().lower(0.2).upper(0.4).training(true));
  y.backward(raw::ones_like(y));
  std::vector<double> xs = values(x), ys = values(y), gs = values(x.grad());
  double lo = 1, hi = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] > 0) {
      EXPECT_EQ(ys[i], xs[i]);
      EXPECT_EQ(gs[i], 1.0);
    } else {
      const double slope = ys[i] / xs[i];
      EXPECT_TRUE(slope >= 0.2 && slope <= 0.4) << slope;
      EXPECT_NEAR(gs[i], slope, 1e-12);  // the gradient is the drawn slope
      lo = std::min(lo, slope), hi = std::max(hi, slope);
    }
  }
  EXPECT_GT(hi - lo, 0.1);  // the slopes differ
  // The module: random in train(), (lower + upper) / 2 in eval().
  RReLU m(RReLUOptions().lower(0.2).upper(0.4));
  m.eval();
  const double mean = (0.2 + 0.4) / 2;  // 0.30000000000000004, as torch computes it
  EXPECT_TRUE(all_close(m.forward(x), F::leaky_relu(x, mean), 0, 0));
  m.train();
  EXPECT_FALSE(all_close(m.forward(x), F::leaky_relu(x, mean), 0, 0));
  // A seeded generator draws the same slopes again.
  Generator g1(5), g2(5);
  EXPECT_TRUE(all_close(F::rrelu(x, F::RReLUFuncOptions().training(true), &g1),
                        F::rrelu(x, F::RReLUFuncOptions().training(true), &g2), 0, 0));
}

TEST(MiscModules, InPlaceThresholdAndRReLUWriteTheInputAndRecordIt) {
  Tensor leaf = input({3, 4}, -2, 2);
  Tensor x = colony::mul(leaf, 1.0);
  Tensor& same = x;
  Tensor y = F::threshold(x, F::ThresholdFuncOptions(0.5, -1).inplace(true));
  EXPECT_TRUE(y.is_same(same));
  EXPECT_TRUE(all_close(y, F::threshold(leaf, F::ThresholdFuncOptions(0.5, -1)), 0, 0));
  y.sum().backward();
  std::vector<double> l = values(leaf), g = values(leaf.grad());
  for (size_t i = 0; i < l.size(); ++i) EXPECT_EQ(g[i], l[i] > 0.5 ? 1.0 : 0.0);
  // Without history: the raw write.
  Tensor plain = raw::from_vector<double>({-1, 0.25, 2}, {3});
  F::threshold(plain, F::ThresholdFuncOptions(0.5, 9).inplace(true));
  EXPECT_EQ(values(plain), (std::vector<double>{9, 9, 2}));
  Tensor r = raw::from_vector<double>({-1, 2}, {2});
  F::rrelu(r, F::RReLUFuncOptions().lower(0.5).upper(0.5).inplace(true));
  EXPECT_EQ(values(r), (std::vector<double>{-0.5, 2}));
  Tensor leaf2 = input({8}, -2, 2);
  Tensor x2 = colony::mul(leaf2, 1.0);
  Generator gen(3), same_gen(3);
  Tensor expected = F::rrelu(leaf2.detach(), F::RReLUFuncOptions().training(true), &same_gen);
  F::rrelu(x2, F::RReLUFuncOptions().training(true).inplace(true), &gen);
  EXPECT_TRUE(all_close(x2, expected, 0, 0));
  x2.sum().backward();
  std::vector<double> xs = values(leaf2), ex = values(expected), g2 = values(leaf2.grad());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(g2[i], xs[i] > 0 ? 1.0 : ex[i] / xs[i], 1e-12);
  // Threshold on integers: both Scalars truncated to the type, as torch.
  Tensor ints = raw::from_vector<int64_t>({1, 2, 3}, {3});
  Tensor ti = F::threshold(ints, F::ThresholdFuncOptions(1.5, 0.7));
  EXPECT_EQ(ti.dtype(), kInt64);
  EXPECT_EQ(values(ti), (std::vector<double>{0, 2, 3}));
  // threshold -0.5 truncates to 0, so 0 itself takes the value: torch gives [5, 1] too.
  EXPECT_EQ(values(F::threshold(raw::from_vector<int64_t>({0, 1}, {2}), F::ThresholdFuncOptions(-0.5, 5))),
            (std::vector<double>{5, 1}));
  Tensor bools = raw::to(raw::from_vector<int64_t>({0, 1}, {2}), kCPU, kBool);
  EXPECT_TRUE(throws_with([&] { F::threshold(bools, F::ThresholdFuncOptions(0.5, 0)); },
                          "threshold: not implemented for bool tensors"));
}

TEST(MiscModules, UpsamplingModulesAreUpsampleInTheirModes) {
  Tensor x = raw::randn({1, 2, 3, 3});
  EXPECT_TRUE(all_close(UpsamplingNearest2d(UpsamplingOptions().scale_factor(2.0)).forward(x),
                        F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0}).mode("nearest")),
                        0, 0));
  EXPECT_TRUE(all_close(UpsamplingBilinear2d(UpsamplingOptions().size({5, 4})).forward(x),
                        F::interpolate(x, F::InterpolateFuncOptions()
                                              .size(std::vector<int64_t>{5, 4})
                                              .mode("bilinear")
                                              .align_corners(true)),
                        0, 0));
}

TEST(MiscModules, AdaptiveLogSoftmaxLayoutIsTorchs) {
  AdaptiveLogSoftmaxWithLoss m(AdaptiveLogSoftmaxWithLossOptions(64, 1000, {100, 400}).head_bias(true));
  std::vector<std::pair<std::string, Shape>> got;
  for (const auto& [k, t] : m.named_parameters()) got.emplace_back(k, t.sizes());
  EXPECT_EQ(got, (std::vector<std::pair<std::string, Shape>>{{"head.weight", {102, 64}},
                                                             {"head.bias", {102}},
                                                             {"tail.0.0.weight", {16, 64}},
                                                             {"tail.0.1.weight", {300, 16}},
                                                             {"tail.1.0.weight", {4, 64}},
                                                             {"tail.1.1.weight", {600, 4}}}));
  // log_prob's rows are distributions, predict is their argmax, and the unbatched loss is -output.
  Tensor h = raw::randn({5, 64});
  Tensor lp = m.log_prob(h);
  EXPECT_TRUE(all_close(colony::sum(colony::exp(lp), {1}), raw::ones({5}), 1e-5, 0));
  EXPECT_EQ(values(m.predict(h)), values(raw::argmax(lp, 1)));
  ASMoutput one = m.forward(raw::randn({64}), raw::reshape(raw::from_vector<int64_t>({450}, {1}), {}));
  EXPECT_EQ(one.output.dim(), 0);
  EXPECT_TRUE(all_close(one.loss, colony::neg(one.output), 0, 0));
}

}  // namespace
}  // namespace colony::nn
