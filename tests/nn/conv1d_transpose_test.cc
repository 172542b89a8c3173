// Conv1d, ConvTranspose1d/2d and the 1-D pools as modules: options, weight shapes and init
// statistics, repr and state-dict names as torch's, forward(input, output_size), every error,
// gradchecks of the transposed convolution, use in Sequential / AnyModule, and CUDA against the CPU.
// (Values against torch: conv_norm_golden_test.cc.)
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

namespace F = functional;
using testing::throws_with;

std::string printed(const Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

std::vector<std::string> keys(const Module& m) {
  std::vector<std::string> k;
  for (const auto& [name, t] : m.state_dict()) k.push_back(name);
  return k;
}

// All values within +-bound, and spread over it (max |v| above 0.9 bound: a narrower init fails).
void expect_uniform_within(const Tensor& t, double bound) {
  double most = 0;
  for (double v : testing::values(t)) {
    EXPECT_LE(std::abs(v), bound);
    most = std::max(most, std::abs(v));
  }
  EXPECT_GT(most, 0.9 * bound);
}

Tensor randn(const Shape& shape, uint64_t seed = 3, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(dtype), &gen);
}

TEST(Conv1dModule, ShapesInitReprAndStateDict) {
  Conv1d conv(Conv1dOptions(16, 32, 5).stride(2).padding(1).dilation(2).groups(4));
  EXPECT_EQ(conv.weight.sizes(), (Shape{32, 4, 5}));
  EXPECT_EQ(conv.bias.sizes(), (Shape{32}));
  expect_uniform_within(conv.weight, 1.0 / std::sqrt(4.0 * 5));  // fan_in = in / groups * k
  expect_uniform_within(conv.bias, 1.0 / std::sqrt(4.0 * 5));
  EXPECT_EQ(keys(conv), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(printed(conv), "Conv1d(16, 32, kernel_size=(5,), stride=(2,), padding=(1,), dilation=(2,), groups=4)");
  EXPECT_EQ(printed(Conv1d(Conv1dOptions(16, 33, 3).bias(false))), "Conv1d(16, 33, kernel_size=(3,), stride=(1,), bias=False)");
  EXPECT_EQ(keys(Conv1d(Conv1dOptions(2, 3, 3).bias(false))), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(conv.forward(randn({3, 16, 20})).sizes(), (Shape{3, 32, 7}));  // (20 + 2 - 8 - 1) / 2 + 1
  EXPECT_EQ(conv.forward(randn({16, 20})).sizes(), (Shape{32, 7}));  // unbatched
}

TEST(Conv1dModule, IsConv2dOnOneRowImages) {
  Conv1d conv(Conv1dOptions(4, 6, 3).stride(2).padding(1).groups(2));
  Tensor x = randn({2, 4, 9});
  Tensor expected = raw::squeeze(raw::conv2d(raw::unsqueeze(x, 2), raw::unsqueeze(conv.weight.detach(), 2),
                                             conv.bias.detach(), {1, 2}, {0, 1}, 1, 2),
                                 2);
  EXPECT_TRUE(testing::all_close(conv.forward(x), expected, 0, 0));
}

TEST(Conv1dModule, Errors) {
  EXPECT_TRUE(throws_with([] { Conv1d(Conv1dOptions(6, 4, 3).groups(4)); },
                          "in_channels (6) and out_channels (4) must be divisible by groups (4)"));
  EXPECT_TRUE(throws_with([] { Conv1d(Conv1dOptions(0, 4, 3)); }, "channels and groups must be positive"));
  Conv1d conv(Conv1dOptions(4, 6, 3));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({2, 4, 5, 5})); },
                          "conv1d: expected 2-D (unbatched [C, L]) or 3-D ([N, C, L]) input, got [2, 4, 5, 5]"));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({2, 3, 9})); },
                          "conv1d: expected input with 4 channels (weight [6, 4, 3], groups 1), got input [2, 3, 9]"));
  EXPECT_TRUE(throws_with([&] { F::conv1d(randn({2, 4, 9}), randn({6, 4, 3, 1})); },
                          "conv1d: expected weight of 3 dims [C_out, C_in / groups, k], got [6, 4, 3, 1]"));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({2, 4, 2})); }, "is larger than the padded input"));
}

TEST(ConvTranspose2dModule, ShapesInitReprAndStateDict) {
  ConvTranspose2d conv(ConvTranspose2dOptions(16, 32, {3, 5}).stride(2).groups(4));
  EXPECT_EQ(conv.weight.sizes(), (Shape{16, 8, 3, 5}));  // [in, out / groups, kH, kW]
  // torch's fan_in of a transposed weight: weight.size(1) * kernel = out / groups * kH * kW.
  expect_uniform_within(conv.weight, 1.0 / std::sqrt(8.0 * 15));
  expect_uniform_within(conv.bias, 1.0 / std::sqrt(8.0 * 15));
  EXPECT_EQ(keys(conv), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(printed(conv), "ConvTranspose2d(16, 32, kernel_size=(3, 5), stride=(2, 2), groups=4)");
  EXPECT_EQ(printed(ConvTranspose2d(ConvTranspose2dOptions(16, 32, 3))),
            "ConvTranspose2d(16, 32, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(printed(ConvTranspose2d(
                ConvTranspose2dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).dilation(2).bias(false))),
            "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
            "output_padding=(1, 1), bias=False)");
  // Ho = (H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1
  ConvTranspose2d up(ConvTranspose2dOptions(4, 6, 3).stride(2).padding(1).output_padding(1));
  EXPECT_EQ(up.forward(randn({2, 4, 5, 7})).sizes(), (Shape{2, 6, 10, 14}));
  EXPECT_EQ(up.forward(randn({4, 5, 7})).sizes(), (Shape{6, 10, 14}));  // unbatched
}

TEST(ConvTranspose2dModule, ForwardWithOutputSizePicksTheOutputPadding) {
  ConvTranspose2d conv(ConvTranspose2dOptions(3, 2, 3).stride({2, 3}).padding(1));
  Tensor x = randn({1, 3, 4, 4});
  // Without output_padding: Ho = 3 * 2 - 2 + 2 + 1 = 7, Wo = 3 * 3 - 2 + 2 + 1 = 10.
  Tensor y = conv.forward(x, {8, 12});
  EXPECT_EQ(y.sizes(), (Shape{1, 2, 8, 12}));
  Tensor expected = F::conv_transpose2d(x, conv.weight, conv.bias,
                                        F::ConvTranspose2dFuncOptions().stride({2, 3}).padding(1).output_padding({1, 2}));
  EXPECT_TRUE(testing::all_close(y, expected, 0, 0));
  EXPECT_EQ(conv.forward(x, {1, 2, 7, 10}).sizes(), (Shape{1, 2, 7, 10}));  // [N, C, Ho, Wo] also taken
  EXPECT_TRUE(throws_with([&] { conv.forward(x, {9, 10}); },
                          "ConvTranspose2d: requested an output size of [9, 10], but valid sizes range from [7, 10] "
                          "to [8, 12] (for an input of [4, 4])"));
  EXPECT_TRUE(throws_with([&] { conv.forward(x, {7}); }, "output_size must have 2 or 4 elements, got [7]"));
}

TEST(ConvTranspose2dModule, Errors) {
  EXPECT_TRUE(throws_with([] { ConvTranspose2d(ConvTranspose2dOptions(4, 6, 3).groups(4)); },
                          "ConvTranspose2d: in_channels (4) and out_channels (6) must be divisible by groups (4)"));
  ConvTranspose2d conv(ConvTranspose2dOptions(4, 6, 3).stride(2));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({1, 2, 4, 5, 5})); }, "conv_transpose2d: expected 3-D (unbatched"));
  EXPECT_TRUE(throws_with([&] { colony::conv_transpose2d(randn({4, 5, 5}), randn({4, 6, 3, 3})); },
                          "conv_transpose2d: input must be 4-D (N,C,H,W), got [4, 5, 5]"));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({4, 5})); },
                          "conv_transpose2d: expected 3-D (unbatched [C, H, W]) or 4-D ([N, C, H, W]) input, got [4, 5]"));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({2, 3, 5, 5})); },
                          "conv_transpose2d: expected input with 4 channels (weight [4, 6, 3, 3] is "
                          "(C_in,C_out/groups,kH,kW)), got [2, 3, 5, 5]"));
  Tensor x = randn({1, 4, 5, 5}), w = randn({4, 6, 3, 3});
  EXPECT_TRUE(throws_with([&] { F::conv_transpose2d(x, w, Tensor(), F::ConvTranspose2dFuncOptions().stride(2).output_padding(2)); },
                          "conv_transpose2d: output_padding (2, 2) must be smaller than stride (2, 2) in each dim"));
  EXPECT_TRUE(throws_with([&] { F::conv_transpose2d(x, w, randn({4})); },
                          "conv_transpose2d: expected bias of shape [6]"));
  EXPECT_TRUE(throws_with([&] { F::conv_transpose2d(x, randn({4, 3, 3, 3}), Tensor(), F::ConvTranspose2dFuncOptions().groups(3)); },
                          "has 4 input channels, which groups 3 does not divide"));
  EXPECT_TRUE(throws_with([&] { F::conv_transpose2d(randn({1, 4, 1, 1}), randn({4, 2, 1, 1}), Tensor(), F::ConvTranspose2dFuncOptions().padding(1)); },
                          "give an empty output -1x-1"));
  EXPECT_TRUE(throws_with([&] { F::conv_transpose2d(x, randn({4, 6, 3, 3}, 3, kFloat64)); },
                          "conv_transpose2d: expected weight of dtype float32 like input, got float64"));
}

TEST(ConvTranspose1dModule, ShapesReprOutputSizeAndErrors) {
  ConvTranspose1d conv(ConvTranspose1dOptions(6, 4, 3).stride(2).padding(1).groups(2));
  EXPECT_EQ(conv.weight.sizes(), (Shape{6, 2, 3}));
  expect_uniform_within(conv.weight, 1.0 / std::sqrt(2.0 * 3));
  EXPECT_EQ(keys(conv), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(printed(conv), "ConvTranspose1d(6, 4, kernel_size=(3,), stride=(2,), padding=(1,), groups=2)");
  EXPECT_EQ(printed(ConvTranspose1d(ConvTranspose1dOptions(16, 33, 3).stride(2).padding(1).output_padding(1).dilation(2).bias(false))),
            "ConvTranspose1d(16, 33, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), output_padding=(1,), "
            "bias=False)");
  Tensor x = randn({2, 6, 5});
  EXPECT_EQ(conv.forward(x).sizes(), (Shape{2, 4, 9}));
  EXPECT_EQ(conv.forward(x, {10}).sizes(), (Shape{2, 4, 10}));
  EXPECT_EQ(conv.forward(randn({6, 5})).sizes(), (Shape{4, 9}));
  EXPECT_TRUE(throws_with([&] { conv.forward(x, {11}); },
                          "ConvTranspose1d: requested an output size of [11], but valid sizes range from [9] to [10] "
                          "(for an input of [5])"));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({2, 4, 5})); },
                          "conv_transpose1d: expected input with 6 channels (weight [6, 2, 3] is [C_in, C_out / groups, k]), "
                          "got input [2, 4, 5]"));
  EXPECT_TRUE(throws_with([&] { F::conv_transpose1d(x, conv.weight, Tensor(), F::ConvTranspose1dFuncOptions().stride(2).output_padding(2)); },
                          "conv_transpose1d: output_padding 2 must be smaller than stride 2"));
  EXPECT_TRUE(throws_with([&] { conv.forward(randn({1, 2, 6, 5})); }, "conv_transpose1d: expected 2-D"));
}

// The transposed convolution's backward (conv2d for the input, conv2d's weight gradient with the
// roles swapped) against central differences, with every option at once.
TEST(ConvTransposeGrad, Gradcheck) {
  auto f = [](const std::vector<Tensor>& in) {
    return conv_transpose2d(in[0], in[1], in[2], {2, 3}, {1, 0}, {1, 2}, {2, 1}, 2);
  };
  EXPECT_TRUE(testing::gradcheck(f, {testing::input({2, 4, 3, 4}, -1, 1, 1), testing::input({4, 2, 2, 3}, -1, 1, 2),
                                     testing::input({4}, -1, 1, 3)}));
  auto g = [](const std::vector<Tensor>& in) {
    return F::conv_transpose1d(in[0], in[1], Tensor(), F::ConvTranspose1dFuncOptions().stride(3).padding(2).output_padding(1));
  };
  EXPECT_TRUE(testing::gradcheck(g, {testing::strided_input({2, 3, 5}, -1, 1, 4), testing::input({3, 2, 4}, -1, 1, 5)}));
  auto h = [](const std::vector<Tensor>& in) {
    return F::conv1d(in[0], in[1], in[2], F::Conv1dFuncOptions().stride(2).padding(1).dilation(2).groups(3));
  };
  EXPECT_TRUE(testing::gradcheck(h, {testing::input({2, 6, 9}, -1, 1, 6), testing::input({3, 2, 3}, -1, 1, 7),
                                     testing::input({3}, -1, 1, 8)}));
}

// bfloat16 on the CPU with a bias: the float32 result rounded once (the bias is not added in
// bfloat16 after a rounded convolution).
TEST(ConvTransposeGrad, Bfloat16WithBiasRoundsOnce) {
  auto bf16 = [](const Tensor& t) { return raw::to(t, kCPU, kBFloat16); };
  auto f32 = [](const Tensor& t) { return raw::to(t, kCPU, kFloat32); };
  Tensor x = bf16(randn({2, 4, 5, 6})), w = bf16(randn({4, 3, 3, 3}, 4)), b = bf16(randn({3}, 5));
  Tensor y = raw::conv_transpose2d(x, w, b, 2, 1, 1);
  EXPECT_EQ(y.dtype(), kBFloat16);
  EXPECT_TRUE(testing::all_close(y, bf16(raw::conv_transpose2d(f32(x), f32(w), f32(b), 2, 1, 1)), 0, 0));
}

// Only the inputs asked for get a gradient; a frozen weight gets none.
TEST(ConvTransposeGrad, OnlyWhatIsAskedFor) {
  Tensor x = testing::input({1, 2, 3, 3}), w = randn({2, 3, 2, 2}, 4, kFloat64);
  sum(conv_transpose2d(x, w, Tensor(), 2)).backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
}

TEST(Pool1dModules, ReprShapesAndErrors) {
  EXPECT_EQ(printed(MaxPool1d(MaxPool1dOptions(3).stride(2))),
            "MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(printed(AvgPool1d(AvgPool1dOptions(3).stride(2))), "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))");
  EXPECT_EQ(printed(AdaptiveAvgPool1d(5)), "AdaptiveAvgPool1d(output_size=5)");
  EXPECT_EQ(MaxPool1d(2).forward(randn({2, 3, 9})).sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(AvgPool1d(AvgPool1dOptions(3).ceil_mode(true)).forward(randn({3, 10})).sizes(), (Shape{3, 4}));
  EXPECT_EQ(AdaptiveAvgPool1d(4).forward(randn({2, 3, 9})).sizes(), (Shape{2, 3, 4}));
  EXPECT_TRUE(throws_with([] { MaxPool1d(2).forward(randn({1, 2, 3, 9})); },
                          "max_pool1d: expected 2-D (unbatched [C, L]) or 3-D ([N, C, L]) input, got [1, 2, 3, 9]"));
  EXPECT_TRUE(throws_with([] { AvgPool1d(2).forward(randn({9})); }, "avg_pool1d: expected 2-D"));
  EXPECT_TRUE(throws_with([] { AdaptiveAvgPool1d(2).forward(randn({9})); }, "adaptive_avg_pool1d: expected 2-D"));
}

TEST(Conv1dModule, WorksInSequentialAndAnyModule) {
  Sequential net(std::make_shared<Conv1d>(Conv1dOptions(2, 4, 3).padding(1)), std::make_shared<ReLU>(),
                 std::make_shared<MaxPool1d>(2), std::make_shared<ConvTranspose1d>(ConvTranspose1dOptions(4, 2, 2).stride(2)),
                 std::make_shared<AdaptiveAvgPool1d>(3));
  Tensor y = net.forward(randn({3, 2, 8}));
  EXPECT_EQ(y.sizes(), (Shape{3, 2, 3}));
  AnyModule any = std::make_shared<ConvTranspose2d>(ConvTranspose2dOptions(2, 3, 2).stride(2));
  EXPECT_EQ(any.forward(randn({1, 2, 3, 3})).sizes(), (Shape{1, 3, 6, 6}));
}

TEST(Conv1dModule, MatchesTheCpuOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Conv1d>(Conv1dOptions(4, 6, 3).stride(2).padding(1).groups(2)); }, randn({2, 4, 17}));
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<ConvTranspose2d>(ConvTranspose2dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).groups(2)); },
      randn({2, 4, 5, 6}));
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<ConvTranspose1d>(ConvTranspose1dOptions(3, 4, 4).stride(3).dilation(2)); },
      randn({2, 3, 7}));
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<MaxPool1d>(MaxPool1dOptions(3).stride(2).padding(1)); },
                                          randn({2, 3, 11}));
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<AvgPool1d>(AvgPool1dOptions(3).stride(2)); },
                                          randn({2, 3, 11}));
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<AdaptiveAvgPool1d>(4); }, randn({2, 3, 11}));
}

}  // namespace
}  // namespace colony::nn
