// The window functions (ops/window_ops.cc: hann, hamming, blackman, bartlett, kaiser) and the Bessel
// functions i0 / special_i1 they rest on (kernels/common/scalar_math.h): every case of
// window_golden.h (torch's values and gradients, written by window_golden.py), float64 gradchecks,
// the refusals in torch's words, and a `_CUDA` test of the same cases.
#include <map>
#include <string>

#include "tests/autograd/gradcheck.h"
#include "tests/autograd/window_golden.h"
#include "tests/golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using testing::values;
using In = const std::vector<Tensor>&;
namespace golden = testing::golden;

// A window case's input holds [window_length, periodic, param1, param2] (window_golden.py).
struct WindowArgs {
  int64_t length;
  bool periodic;
  double p1, p2;
};
WindowArgs window_args(In x) {
  const std::vector<double> v = values(x[0]);
  return {static_cast<int64_t>(v[0]), v[1] != 0.0, v[2], v[3]};
}

const std::map<std::string, golden::Op>& ops() {
  static const std::map<std::string, golden::Op> table = [] {
    std::map<std::string, golden::Op> t;
    for (const auto& [suffix, dtype] : {std::pair<std::string, DType>{"f64", kFloat64}, {"f32", kFloat32}}) {
      const DType dt = dtype;
      t["hann_window_" + suffix] = [dt](In x, Device d) {
        const WindowArgs a = window_args(x);
        return hann_window(a.length, a.periodic, TensorOptions(dt).device(d));
      };
      t["hamming_window_" + suffix] = [dt](In x, Device d) {
        const WindowArgs a = window_args(x);
        return hamming_window(a.length, a.periodic, a.p1, a.p2, TensorOptions(dt).device(d));
      };
      t["blackman_window_" + suffix] = [dt](In x, Device d) {
        const WindowArgs a = window_args(x);
        return blackman_window(a.length, a.periodic, TensorOptions(dt).device(d));
      };
      t["bartlett_window_" + suffix] = [dt](In x, Device d) {
        const WindowArgs a = window_args(x);
        return bartlett_window(a.length, a.periodic, TensorOptions(dt).device(d));
      };
      t["kaiser_window_" + suffix] = [dt](In x, Device d) {
        const WindowArgs a = window_args(x);
        return kaiser_window(a.length, a.periodic, a.p1, TensorOptions(dt).device(d));
      };
    }
    // The defaults (periodic, float32, beta 12), on the case's device.
    t["hann_window_default"] = [](In, Device d) { return hann_window(10, d); };
    t["hamming_window_default"] = [](In, Device d) { return hamming_window(10, d); };
    t["blackman_window_default"] = [](In, Device d) { return blackman_window(10, d); };
    t["bartlett_window_default"] = [](In, Device d) { return bartlett_window(10, d); };
    t["kaiser_window_default"] = [](In, Device d) { return kaiser_window(10, d); };
    t["i0"] = [](In x, Device) { return i0(x[0]); };
    t["special_i1"] = [](In x, Device) { return special_i1(x[0]); };
    return t;
  }();
  return table;
}

TEST(Window, EveryGoldenCase) {
  for (const golden::Case& c : testing::window_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), kCPU));
}

TEST(Window, DefaultsAndOptions) {
  // Symmetric hann of 5: 0, 0.5, 1, 0.5, 0; periodic is the default.
  EXPECT_TRUE(testing::matches_values(hann_window(5, false, kFloat64), {0.0, 0.5, 1.0, 0.5, 0.0}, 1e-15));
  EXPECT_TRUE(testing::matches_values(hann_window(4, kFloat64), {0.0, 0.5, 1.0, 0.5}, 1e-15));
  EXPECT_EQ(hann_window(4).dtype(), kFloat32);
  EXPECT_FALSE(hann_window(4).requires_grad());
  EXPECT_TRUE(kaiser_window(4, TensorOptions(kFloat64).requires_grad(true)).requires_grad());
  EXPECT_EQ(i0(raw::ones({2}, kInt64)).dtype(), kFloat32);
  EXPECT_TRUE(testing::matches_values(raw::ones({1}).i0(), {1.2660658777520082}, 1e-6));
  // bfloat16 rounds each step as torch's does (torch 2.15's values: hann_window(5, False,
  // dtype=torch.bfloat16), kaiser_window(6, ...), blackman_window(7, ...)).
  EXPECT_TRUE(testing::matches_values(hann_window(5, false, kBFloat16), {0.0, 0.5, 1.0, 0.49609375, 0.0}, 0.0));
  EXPECT_TRUE(testing::matches_values(kaiser_window(6, kBFloat16),
                                      {5.269050598144531e-05, 0.0546875, 0.51953125, 1.0, 0.51953125, 0.0546875}, 0.0));
  // Blackman's "+ 0.42" rounds 0.42 to bfloat16 first in torch's CPU kernel, while Colony adds the
  // float32 scalar: a bfloat16 step apart at most (ops/raw_ops.h says so).
  EXPECT_TRUE(testing::matches_values(blackman_window(7, kBFloat16),
                                      {0.0, 0.091796875, 0.4609375, 0.91796875, 0.91796875, 0.453125, 0.09375}, 4e-3));
  EXPECT_EQ(kaiser_window(6, kBFloat16).dtype(), kBFloat16);
}

TEST(Window, BesselGradcheck) {
  EXPECT_TRUE(gradcheck([](In x) { return i0(x[0]); }, {input({7}, -9.0, 9.0)}));
  EXPECT_TRUE(gradcheck([](In x) { return special_i1(x[0]); }, {input({7}, -9.0, 9.0)}));
  // i1's gradient at 0 is the limit 0.5 (the formula i0 - i1 / x is 0 / 0 there).
  Tensor zero = raw::zeros({1}, kFloat64);
  zero.requires_grad_(true);
  sum(special_i1(zero)).backward();
  EXPECT_TRUE(testing::matches_values(zero.grad(), {0.5}, 0.0));
}

TEST(Window, RefusalsInTorchsWords) {
  EXPECT_TRUE(throws_with([] { hann_window(3, kInt64); }, "hann_window expects floating point dtypes, got: int64"));
  EXPECT_TRUE(throws_with([] { kaiser_window(3, kInt32); }, "kaiser_window expects floating point dtypes"));
  EXPECT_TRUE(throws_with([] { hamming_window(-1); }, "hamming_window requires non-negative window_length, got window_length=-1"));
  EXPECT_TRUE(throws_with([] { blackman_window(-2); }, "blackman_window requires non-negative window_length"));
  EXPECT_TRUE(throws_with([] { bartlett_window(-1); }, "bartlett_window requires non-negative window_length"));
}

TEST(Window, EveryGoldenCaseOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::window_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), Device::cuda(0)));
}

}  // namespace
}  // namespace colony
