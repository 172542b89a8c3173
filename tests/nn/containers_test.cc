#include "nn/containers.h"

#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "nn/nn.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;

std::vector<std::string> names(const NamedTensors& v) {
  std::vector<std::string> out;
  for (const auto& [n, _] : v) out.push_back(n);
  return out;
}

TEST(Sequential, NamedChildrenNameTheParameters) {
  auto block = std::make_shared<Sequential>(std::initializer_list<NamedModule>{
      {"conv", std::make_shared<Conv2d>(Conv2dOptions(1, 2, 3).padding(1))},
      {"bn", std::make_shared<BatchNorm2d>(2)},
      {"relu", std::make_shared<ReLU>(ReLUOptions().inplace(true))}});
  EXPECT_EQ(names(block->named_parameters()),
            (std::vector<std::string>{"conv.weight", "conv.bias", "bn.weight", "bn.bias"}));
  EXPECT_EQ(block->forward(raw::ones({2, 1, 4, 4})).sizes(), (Shape{2, 2, 4, 4}));
  block->push_back("pool", std::make_shared<MaxPool2d>(2));
  EXPECT_EQ(block->size(), 4u);
  EXPECT_NE(block->repr().find("(pool): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
            std::string::npos)
      << block->repr();
}

TEST(ModuleList, IndexesIteratesAndRegisters) {
  ModuleList list{std::make_shared<Linear>(3, 3), std::make_shared<Linear>(3, 2)};
  list.push_back(std::make_shared<ReLU>());
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(names(list.named_parameters()), (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"}));
  Tensor x = raw::ones({1, 3});
  for (const auto& m : list) x = m->forward(x);
  EXPECT_EQ(x.sizes(), (Shape{1, 2}));
  EXPECT_TRUE(throws_with([&] { list.forward(x); }, "ModuleList"));  // no forward of its own
}

TEST(ModuleDict, LooksUpByNameAndSaysWhatItHolds) {
  ModuleDict heads{{"cls", std::make_shared<Linear>(4, 10)}, {"box", std::make_shared<Linear>(4, 4)}};
  EXPECT_EQ(heads.keys(), (std::vector<std::string>{"cls", "box"}));
  EXPECT_TRUE(heads.contains("box"));
  EXPECT_EQ(heads["box"]->forward(raw::ones({2, 4})).sizes(), (Shape{2, 4}));
  EXPECT_EQ(names(heads.named_parameters()), (std::vector<std::string>{"cls.weight", "cls.bias", "box.weight", "box.bias"}));
  EXPECT_TRUE(throws_with([&] { heads["mask"]; }, "no module named \"mask\"; it holds \"cls\", \"box\""));
  EXPECT_TRUE(throws_with([&] { heads.insert("cls", std::make_shared<ReLU>()); }, "already registered"));
}

// A small network of every layer kind, as one Sequential, on CUDA against the CPU: the parameters
// and buffers of the children move with the container, and gradients reach each of them.
TEST(Sequential, ForwardAndBackwardOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  auto make = [] {
    return std::make_shared<Sequential>(std::initializer_list<std::shared_ptr<Module>>{
        std::make_shared<Conv2d>(Conv2dOptions(3, 4, 3).padding(1)), std::make_shared<BatchNorm2d>(4),
        std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2), std::make_shared<Conv2d>(Conv2dOptions(4, 6, 3)),
        std::make_shared<AvgPool2d>(AvgPool2dOptions(2).stride(1)), std::make_shared<AdaptiveAvgPool2d>(2),
        std::make_shared<Dropout>(DropoutOptions(0.0)), std::make_shared<Flatten>(), std::make_shared<Linear>(24, 10)});
  };
  Generator gen(30);
  Tensor x = raw::randn({4, 3, 12, 12}, TensorOptions(kFloat32), &gen);
  colony::testing::expect_cuda_module_matches_cpu(make, x);
}

}  // namespace
}  // namespace colony::nn
