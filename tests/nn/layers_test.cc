#include "nn/layers.h"

#include <gtest/gtest.h>

#include <sstream>

#include "autograd/autograd.h"
#include "nn/nn.h"
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
  EXPECT_EQ(printed(BatchNorm2d(16)), "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
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

}  // namespace
}  // namespace colony::nn
