// F::pad (nn/functional_pad.cc) and the padding modules (nn/padding.h): values and gradients
// against torch in float64 and float32 (tests/nn/padding_golden.py writes padding_golden.h), 3-D
// reflect / replicate / circular padding of 5-D inputs, negative pads, unbatched inputs, float64
// gradchecks, torch's refusals, the modules' options and printing, and CUDA against the CPU.
#include "nn/padding.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "nn/any_module.h"
#include "nn/containers.h"
#include "nn/functional.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/nn/padding_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

namespace F = functional;
using colony::testing::throws_with;
using In = std::vector<Tensor>;
using testing::golden::Op;

Op pad_op(std::vector<int64_t> pad, std::string mode, double value = 0.0) {
  return [=](const In& x, Device) { return F::pad(x[0], F::PadFuncOptions(pad).mode(mode).value(value)); };
}

template <typename M, typename O>
Op module_op(O options) {
  return [=](const In& x, Device device) {
    auto m = std::make_shared<M>(options);
    m->to(device);
    return m->forward(x[0]);
  };
}

// The Colony call of each case of padding_golden.py, by name (its _f32 twin calls the same).
std::map<std::string, Op> calls() {
  std::map<std::string, Op> c = {
      {"reflect3d", pad_op({1, 2, 2, 1, 1, 2}, "reflect")},
      {"replicate3d", pad_op({2, 1, 0, 2, 1, 1}, "replicate")},
      {"circular3d", pad_op({1, 2, 2, 1, 2, 0}, "circular")},
      {"reflect3d_unbatched", pad_op({2, 1, 3, 0, 1, 2}, "reflect")},
      {"replicate3d_unbatched", pad_op({1, 1, 1, 1, 1, 1}, "replicate")},
      {"circular3d_unbatched", pad_op({3, 3, 3, 2, 2, 0}, "circular")},
      {"reflect2d", pad_op({1, 2, 4, 3}, "reflect")},
      {"reflect2d_unbatched", pad_op({5, 0, 0, 4}, "reflect")},
      {"replicate2d_unbatched", pad_op({3, 7, 2, 0}, "replicate")},
      {"circular2d", pad_op({6, 1, 2, 5}, "circular")},
      {"reflect1d", pad_op({3, 6}, "reflect")},
      {"replicate1d_unbatched", pad_op({4, 2}, "replicate")},
      {"circular1d", pad_op({7, 3}, "circular")},
      {"reflect_negative", pad_op({-2, 3}, "reflect")},
      {"reflect2d_negative", pad_op({2, -3, -1, 4}, "reflect")},
      {"replicate_negative", pad_op({-1, 4, 3, -2}, "replicate")},
      {"replicate3d_negative", pad_op({-5, 2, 1, -1, -3, 0}, "replicate")},
      {"circular_negative", pad_op({2, -1, -1, 3}, "circular")},
      {"circular3d_negative", pad_op({-2, 3, 1, -1, -1, -1}, "circular")},
      {"constant_negative", pad_op({-1, 2, -2, 1}, "constant", 1.5)},
      {"constant4d", pad_op({1, 0, 2, 1, 0, 1, 1, 1}, "constant", -0.5)},
      {"module_ZeroPad1d", module_op<ZeroPad1d>(ZeroPad1dOptions(2))},
      {"module_ZeroPad2d", module_op<ZeroPad2d>(ZeroPad2dOptions({1, 2, 0, 3}))},
      {"module_ZeroPad3d", module_op<ZeroPad3d>(ZeroPad3dOptions(1))},
      {"module_ConstantPad1d", module_op<ConstantPad1d>(ConstantPad1dOptions({3, -1}, 2.5))},
      {"module_ConstantPad2d", module_op<ConstantPad2d>(ConstantPad2dOptions(1, -1.0))},
      {"module_ConstantPad3d", module_op<ConstantPad3d>(ConstantPad3dOptions({1, 0, 0, 2, 1, 1}, 0.5))},
      {"module_ReflectionPad1d", module_op<ReflectionPad1d>(ReflectionPad1dOptions({2, 3}))},
      {"module_ReflectionPad2d", module_op<ReflectionPad2d>(ReflectionPad2dOptions({1, 2, 2, 0}))},
      {"module_ReflectionPad3d", module_op<ReflectionPad3d>(ReflectionPad3dOptions(1))},
      {"module_ReplicationPad1d", module_op<ReplicationPad1d>(ReplicationPad1dOptions(3))},
      {"module_ReplicationPad2d", module_op<ReplicationPad2d>(ReplicationPad2dOptions({0, 2, 3, 1}))},
      {"module_ReplicationPad3d", module_op<ReplicationPad3d>(ReplicationPad3dOptions({1, 2, 0, 1, 2, 1}))},
      {"module_CircularPad1d", module_op<CircularPad1d>(CircularPad1dOptions({4, 2}))},
      {"module_CircularPad2d", module_op<CircularPad2d>(CircularPad2dOptions(2))},
      {"module_CircularPad3d", module_op<CircularPad3d>(CircularPad3dOptions({1, 0, 2, 1, 1, 2}))},
  };
  std::map<std::string, Op> all = c;
  for (const auto& [name, op] : c) all[name + "_f32"] = op;
  return all;
}

TEST(Pad, MatchesTorch) {
  const auto ops = calls();
  for (const auto& c : testing::padding_golden::kCases) EXPECT_TRUE(testing::golden::matches(c, ops, kCPU));
}

TEST(Pad, Gradcheck) {
  using colony::testing::gradcheck;
  const Tensor x5 = colony::testing::input({1, 2, 3, 4, 3});
  const Tensor x3 = colony::testing::input({2, 2, 6});
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    EXPECT_TRUE(gradcheck([mode](const In& x) { return F::pad(x[0], F::PadFuncOptions({2, 1, 1, 3, 2, 0}).mode(mode)); },
                          {x5}))
        << mode;
    EXPECT_TRUE(gradcheck([mode](const In& x) { return F::pad(x[0], F::PadFuncOptions({-2, 3}).mode(mode)); }, {x3}))
        << mode;
  }
  EXPECT_TRUE(gradcheck([](const In& x) { return F::pad(x[0], F::PadFuncOptions({-1, 2, 1, -1}).value(0.5)); }, {x3}));
}

TEST(Pad, RefusesWhatTorchRefuses) {
  const Tensor x = raw::zeros({1, 2, 6}, TensorOptions(kFloat64));
  auto pad = [](const Tensor& t, std::vector<int64_t> p, const char* mode) {
    return [=] { F::pad(t, F::PadFuncOptions(p).mode(mode)); };
  };
  EXPECT_TRUE(throws_with(pad(x, {6, 0}, "reflect"),
                          "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                          "padding (6, 0) at dimension 2 of input [1, 2, 6]"));
  EXPECT_TRUE(throws_with(pad(raw::zeros({1, 2, 4, 5}, TensorOptions(kFloat64)), {0, 0, 4, 0}, "reflect"),
                          "Argument #6: Padding size should be less than the corresponding input dimension, but got: "
                          "padding (4, 0) at dimension 2 of input [1, 2, 4, 5]"));
  EXPECT_TRUE(throws_with(pad(x, {-3, -3}, "reflect"), "input (W: 6) is too small. Calculated output W: 0"));
  EXPECT_TRUE(throws_with(pad(raw::zeros({1, 2, 3, 4, 5}, TensorOptions(kFloat64)), {0, 0, 0, 0, -3, -2}, "replicate"),
                          "Calculated output D: -2 H: 4 W: 5 must be >= 1 in every dimension (input D: 3, H: 4, W: 5)"));
  EXPECT_TRUE(throws_with(pad(x, {7, 0}, "circular"), "Padding value causes wrapping around more than once."));
  EXPECT_TRUE(throws_with(pad(x, {-4, -3}, "circular"), "Negative padding value is resulting in an empty dimension"));
  EXPECT_TRUE(throws_with(pad(x, {4, -3}, "circular"), "wraps around the 3 elements"));
  EXPECT_TRUE(throws_with(pad(raw::zeros({2, 0, 5}, TensorOptions(kFloat64)), {1, 1}, "replicate"),
                          "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero "
                          "dimensions for input, but got: [2, 0, 5]"));
  EXPECT_TRUE(throws_with(pad(raw::zeros({1, 1, 2, 3, 4}, TensorOptions(kFloat64)), {1, 1, 1, 1}, "reflect"),
                          "Padding size 4 is not supported for 5D input tensor"));
  EXPECT_TRUE(throws_with(pad(raw::zeros({6}, TensorOptions(kFloat64)), {1, 1}, "reflect"),
                          "Padding size 2 is not supported for 1D input tensor"));
  EXPECT_TRUE(throws_with(pad(x, {1, 1, 1}, "constant"), "Padding length must be divisible by 2"));
  EXPECT_TRUE(throws_with(pad(x, {1, 2, 3, 4, 5, 6, 7, 8}, "constant"),
                          "Padding length should be less than or equal to two times the input dimension"));
  EXPECT_TRUE(throws_with(pad(x, {1, 1}, "foo"), "mode must be"));
  EXPECT_TRUE(throws_with([&] { F::pad(x, F::PadFuncOptions({1, 1}).mode("reflect").value(1.0)); },
                          "Padding mode \"reflect\" doesn't take in value argument"));
  // A zero-size batch is fine, as torch's.
  EXPECT_EQ(F::pad(raw::zeros({0, 2, 3, 4}, TensorOptions(kFloat64)), F::PadFuncOptions({1, 1, 1, 1}).mode("reflect"))
                .sizes(),
            (Shape{0, 2, 5, 6}));
}

// The kernel (kernels/common/pad.h) moves elements whatever their dtype: integers, bool and 16-bit
// floats pad as float64 does, bit for bit; the gradient of 16-bit inputs sums in float32 and is
// the float32 gradient rounded once; the raw op repeats the checks its kernels rely on.
TEST(Pad, EveryDtypePadsAsFloat64AndSixteenBitGradientsRoundOnce) {
  const Tensor x = raw::reshape(raw::arange(0.0, 2.0 * 3 * 4 * 5), {2, 3, 4, 5});
  const std::vector<std::pair<std::vector<int64_t>, std::string>> cases = {
      {{2, 3, 1, 2}, "reflect"}, {{-1, 4, 3, -2}, "replicate"}, {{4, -1, 2, 3}, "circular"},
      {{1, 2, 0, -1, 2, 1}, "reflect"}};
  for (const auto& [pad, mode] : cases) {
    SCOPED_TRACE(mode);
    const Tensor want = F::pad(x.to(kFloat64), F::PadFuncOptions(pad).mode(mode));
    for (DType t : {kInt64, kInt32, kUInt8, kBool, kFloat16, kBFloat16}) {
      EXPECT_EQ(testing::values(F::pad(x.to(t), F::PadFuncOptions(pad).mode(mode))), testing::values(want.to(t)));
    }
    // Output gradients bfloat16 can hold, so both sums start from the same numbers.
    const Tensor g = (raw::reshape(raw::arange(0.0, static_cast<double>(want.numel())), want.sizes()) * 0.01)
                         .to(kBFloat16)
                         .to(kFloat32);
    Tensor x32 = x.to(kFloat32).requires_grad_(true), x16 = x.to(kBFloat16).requires_grad_(true);
    colony::sum(F::pad(x32, F::PadFuncOptions(pad).mode(mode)) * g).backward();
    colony::sum(F::pad(x16, F::PadFuncOptions(pad).mode(mode)) * g).backward();
    EXPECT_EQ(testing::values(x16.grad()), testing::values(x32.grad().to(kBFloat16)));
  }
  EXPECT_TRUE(throws_with([&] { raw::pad_by_mode(x, kernels::PadMode::Reflect, {5, 0}); },
                          "reflect padding must be smaller than the dim it pads, got (5, 0) of dim 3 of size 5"));
  EXPECT_TRUE(throws_with([&] { raw::pad_by_mode(x, kernels::PadMode::Circular, {-2, 4}); },
                          "circular padding wraps around more than once"));
}

TEST(PadModules, OptionsPrintingAndRefusals) {
  EXPECT_EQ(ZeroPad1d(1).repr(), "ZeroPad1d((1, 1))");
  EXPECT_EQ(ZeroPad2d(2).repr(), "ZeroPad2d((2, 2, 2, 2))");
  EXPECT_EQ(ZeroPad2d({1, 2, 3, 4}).repr(), "ZeroPad2d((1, 2, 3, 4))");
  EXPECT_EQ(ZeroPad3d(1).repr(), "ZeroPad3d((1, 1, 1, 1, 1, 1))");
  EXPECT_EQ(ConstantPad1d(ConstantPad1dOptions(2, 3.5)).repr(), "ConstantPad1d(padding=(2, 2), value=3.5)");
  EXPECT_EQ(ConstantPad3d(ConstantPad3dOptions({1, 2, 3, 4, 5, 6}, -1.0)).repr(),
            "ConstantPad3d(padding=(1, 2, 3, 4, 5, 6), value=-1.0)");
  EXPECT_EQ(ReflectionPad1d(2).repr(), "ReflectionPad1d((2, 2))");
  EXPECT_EQ(ReplicationPad3d(1).repr(), "ReplicationPad3d((1, 1, 1, 1, 1, 1))");
  EXPECT_EQ(CircularPad2d({1, 2, 3, 4}).repr(), "CircularPad2d((1, 2, 3, 4))");
  EXPECT_EQ(ReflectionPad2d({1, 2, 3, 4}).padding(), (std::vector<int64_t>{1, 2, 3, 4}));

  EXPECT_TRUE(throws_with([] { ZeroPad2d({1, 2}); }, "ZeroPad2d: padding must be one number or 4 values"));
  EXPECT_TRUE(throws_with([] { ReflectionPad3d({1, 2, 3, 4}); }, "ReflectionPad3d: padding must be one number or 6"));
  const Tensor x2 = raw::zeros({3, 4}, TensorOptions(kFloat64));
  EXPECT_TRUE(throws_with([&] { CircularPad2d(1).forward(x2); }, "CircularPad2d: expected 3D or 4D input (got 2D input)"));
  EXPECT_TRUE(throws_with([&] { CircularPad1d(1).forward(raw::zeros({5}, TensorOptions(kFloat64))); },
                          "expected 2D or 3D input (got 1D input)"));
  EXPECT_TRUE(throws_with([&] { ReflectionPad1d(4).forward(x2); }, "Padding size should be less than"));
  EXPECT_TRUE(throws_with([&] { ReflectionPad2d(1).forward(x2); }, "Padding size 4 is not supported for 2D input"));
  // The zero and constant pads take any input with enough dims, unbatched included.
  EXPECT_EQ(ZeroPad2d(1).forward(x2).sizes(), (Shape{5, 6}));
  EXPECT_EQ(ReflectionPad1d(1).forward(x2).sizes(), (Shape{3, 6}));

  // In a container, as any module.
  Sequential seq(std::make_shared<ReflectionPad2d>(1), std::make_shared<ZeroPad2d>(ZeroPad2dOptions({0, 1, 0, 1})));
  EXPECT_EQ(seq.forward(raw::zeros({1, 2, 4, 4}, TensorOptions(kFloat32))).sizes(), (Shape{1, 2, 7, 7}));
  AnyModule any(std::make_shared<ReplicationPad1d>(2));
  EXPECT_EQ(any.forward(raw::zeros({2, 3}, TensorOptions(kFloat32))).sizes(), (Shape{2, 7}));
}

TEST(Pad, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const auto ops = calls();
  for (const auto& c : testing::padding_golden::kCases) {
    EXPECT_TRUE(testing::golden::matches(c, ops, Device::cuda(0)));
  }
}

TEST(PadModules, OnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = raw::randn({2, 3, 4, 5, 6}, TensorOptions(kFloat32));
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<ReflectionPad3d>(2); }, x);
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<ReplicationPad3d>(ReplicationPad3dOptions({1, 2, 3, 0, 2, 1})); }, x);
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<CircularPad3d>(CircularPad3dOptions({2, -1, 1, 3, 0, 2})); }, x);
}

}  // namespace
}  // namespace colony::nn
