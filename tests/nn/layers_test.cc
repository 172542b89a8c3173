#include "nn/layers.h"

#include <gtest/gtest.h>

#include <sstream>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

Tensor leaf(const Shape& shape) {
  Tensor t = raw::randn(shape, kFloat64);
  t.requires_grad_(true);
  return t;
}

std::string printed(const Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

TEST(Layers, OptionsTakeAPlainSize) {
  MaxPool2d max_pool(2);
  AvgPool2d avg_pool(2);
  AdaptiveAvgPool2d adaptive(1);
  Tensor x = raw::ones({1, 1, 4, 6});
  EXPECT_EQ(max_pool.forward(x).sizes(), (Shape{1, 1, 2, 3}));
  EXPECT_EQ(avg_pool.forward(x).sizes(), (Shape{1, 1, 2, 3}));
  EXPECT_EQ(adaptive.forward(x).sizes(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(MaxPool2d(MaxPool2dOptions({3, 2}).stride(1)).forward(x).sizes(), (Shape{1, 1, 2, 5}));
}

TEST(Layers, PrintLikePyTorch) {
  EXPECT_EQ(printed(MaxPool2d(2)), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(printed(AvgPool2d(2)), "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(printed(AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions(Int2(1, 1)))), "AdaptiveAvgPool2d(output_size=1)");
  EXPECT_EQ(printed(AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions({2, 3}))), "AdaptiveAvgPool2d(output_size=(2, 3))");
  EXPECT_EQ(printed(Dropout(0.25)), "Dropout(p=0.25, inplace=False)");
  EXPECT_EQ(printed(ReLU()), "ReLU()");
  EXPECT_EQ(printed(ReLU(ReLUOptions().inplace(true))), "ReLU(inplace=True)");
  EXPECT_EQ(printed(Flatten()), "Flatten(start_dim=1, end_dim=-1)");
  EXPECT_EQ(printed(BatchNorm2d(16)), "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)");
  EXPECT_EQ(printed(Conv2d(Conv2dOptions(3, 16, 3).padding(1).bias(false))),
            "Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)");
  EXPECT_EQ(printed(Linear(4, 2)), "Linear(in_features=4, out_features=2, bias=True)");
}

TEST(Layers, InplaceReLUWritesItsInputAndIsDifferentiable) {
  Tensor x = leaf({2, 3});
  Tensor h = mul(x, 2.0);  // inside the graph
  ReLU relu(ReLUOptions().inplace(true));
  Tensor y = relu.forward(h);
  EXPECT_TRUE(y.is_same(h));
  y.sum().backward();
  std::vector<double> xs = testing::values(x.detach()), g = testing::values(x.grad());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(g[i], xs[i] > 0 ? 2.0 : 0.0);
}

TEST(Layers, InplaceDropoutInEvalIsTheIdentity) {
  Dropout drop(DropoutOptions(0.5).inplace(true));
  drop.eval();
  Tensor x = raw::ones({4});
  EXPECT_TRUE(drop.forward(x).is_same(x));
  drop.train();
  Tensor h = mul(leaf({64}), 1.0);
  Tensor y = drop.forward(h);
  EXPECT_TRUE(y.is_same(h));
  y.sum().backward();  // differentiable through the in-place write
}

// ---------- CUDA against the CPU (skipped without a GPU) ----------

using testing::expect_cuda_module_matches_cpu;

Tensor random_images(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(kFloat32), &gen);
}

TEST(Layers, PoolingOnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = random_images({2, 3, 11, 9}, 20);
  for (const MaxPool2dOptions& o : {MaxPool2dOptions(2), MaxPool2dOptions(3).stride(2).padding(1),
                                    MaxPool2dOptions({3, 2}).stride(1).dilation({1, 2}).ceil_mode(true)}) {
    SCOPED_TRACE(MaxPool2d(o).repr());
    expect_cuda_module_matches_cpu([&] { return std::make_shared<MaxPool2d>(o); }, x);
  }
  for (const AvgPool2dOptions& o : {AvgPool2dOptions(2), AvgPool2dOptions(3).stride(2).padding(1),
                                    AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false).ceil_mode(true)}) {
    SCOPED_TRACE(AvgPool2d(o).repr());
    expect_cuda_module_matches_cpu([&] { return std::make_shared<AvgPool2d>(o); }, x);
  }
  for (const AdaptiveAvgPool2dOptions& o : {AdaptiveAvgPool2dOptions(1), AdaptiveAvgPool2dOptions({4, 3}),
                                            AdaptiveAvgPool2dOptions({11, 9})}) {
    SCOPED_TRACE(AdaptiveAvgPool2d(o).repr());
    expect_cuda_module_matches_cpu([&] { return std::make_shared<AdaptiveAvgPool2d>(o); }, x);
  }
}

TEST(Layers, ReLUAndFlattenOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = random_images({2, 3, 4, 5}, 21);
  expect_cuda_module_matches_cpu([] { return std::make_shared<ReLU>(); }, x);
  expect_cuda_module_matches_cpu([] { return std::make_shared<Flatten>(); }, x);
  expect_cuda_module_matches_cpu([] { return std::make_shared<Flatten>(FlattenOptions().start_dim(0).end_dim(2)); }, x);
}

TEST(Layers, DropoutWithPZeroOnCudaIsTheIdentity_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = random_images({4, 5, 6}, 22);
  testing::CudaModuleCheck exact;
  exact.rtol = exact.atol = exact.grad_atol = 0;
  expect_cuda_module_matches_cpu([] { return std::make_shared<Dropout>(DropoutOptions(0.0)); }, x, exact);
  exact.training = false;
  expect_cuda_module_matches_cpu([] { return std::make_shared<Dropout>(DropoutOptions(0.4)); }, x, exact);
}

// Training-mode dropout on CUDA draws its own mask, so it is checked by its statistics: the share
// of zeros is p within 5 standard deviations (sqrt(p (1 - p) / n) = 1.0e-3 for n = 200,000), the
// kept values are 1 / (1 - p), the gradient is the same mask and scale, and two calls draw
// different masks.
TEST(Layers, DropoutOnCudaDropsAShareP_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const double p = 0.3;
  const int64_t n = 200000;
  Dropout drop{DropoutOptions(p)};
  drop.train();
  Tensor x = raw::ones({n}, TensorOptions(kFloat32).device(Device::cuda(0)));
  x.requires_grad_(true);
  Tensor y = drop.forward(x);
  ASSERT_TRUE(y.is_cuda());
  y.sum().backward();
  const std::vector<double> ys = testing::values(y.detach()), gs = testing::values(x.grad());
  const double kept = static_cast<float>(1.0 / (1.0 - p));
  int64_t zeros = 0, wrong = 0, grad_wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    zeros += ys[i] == 0.0;
    wrong += ys[i] != 0.0 && std::abs(ys[i] - kept) > 1e-6 * kept;
    grad_wrong += gs[i] != ys[i];
  }
  EXPECT_NEAR(static_cast<double>(zeros) / n, p, 5 * std::sqrt(p * (1 - p) / n));
  EXPECT_EQ(wrong, 0) << "kept values other than 1 / (1 - p)";
  EXPECT_EQ(grad_wrong, 0) << "gradients other than the output's mask and scale";
  const std::vector<double> again = testing::values(drop.forward(x.detach()));
  EXPECT_NE(again, ys) << "two calls drew the same mask";
}

}  // namespace
}  // namespace colony::nn
