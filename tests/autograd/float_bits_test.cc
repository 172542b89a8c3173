// nextafter, frexp and the bit shifts (functor-table ops, kernels/common/elementwise_functors.h),
// round(x, decimals) and div(a, b, rounding_mode):
// every case of float_bits_golden.h (torch's values, bit for bit, and gradients, written by
// float_bits_golden.py), float64 gradchecks, the Tensor members and operators, refusals, and a
// `_CUDA` test of the same cases.
#include <cmath>
#include <map>
#include <string>

#include "tests/autograd/float_bits_golden.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using testing::values;
using In = const std::vector<Tensor>&;
namespace golden = testing::golden;

const std::map<std::string, golden::Op>& ops() {
  static const std::map<std::string, golden::Op> table = {
      {"nextafter", [](In x, Device) { return nextafter(x[0], x[1]); }},
      {"frexp_mantissa", [](In x, Device) { return frexp(x[0]).first; }},
      {"frexp_exponent", [](In x, Device) { return frexp(x[0]).second; }},
      {"bitwise_left_shift", [](In x, Device) { return bitwise_left_shift(x[0], x[1]); }},
      {"bitwise_right_shift", [](In x, Device) { return bitwise_right_shift(x[0], x[1]); }},
      {"left_shift_by_2", [](In x, Device) { return x[0] << 2.0; }},
      {"right_shift_by_3", [](In x, Device) { return x[0] >> 3.0; }},
      {"round_decimals_1", [](In x, Device) { return round(x[0], 1); }},
      {"round_decimals_2", [](In x, Device) { return round(x[0], 2); }},
      {"round_decimals_-1", [](In x, Device) { return round(x[0], -1); }},
      {"div_trunc", [](In x, Device) { return div(x[0], x[1], "trunc"); }},
      {"div_floor", [](In x, Device) { return divide(x[0], x[1], "floor"); }},
      {"div_floor_by_0.3", [](In x, Device) { return div(x[0], 0.3, "floor"); }},
      {"div_trunc_by_-2", [](In x, Device) { return div(x[0], -2.0, "trunc"); }},
  };
  return table;
}

// The outputs bit for bit (the sign of zero included, NaN equal to NaN): these ops step by one ulp,
// which a relative tolerance would not see.
::testing::AssertionResult exactly(const golden::Case& c, Device device) {
  std::vector<Tensor> inputs;
  for (const golden::Input& in : c.inputs) inputs.push_back(golden::from_values(in.values, in.shape, device, in.dtype));
  Tensor out = ops().at(c.name)(inputs, device);
  if (out.dtype() != c.out_dtype || out.sizes() != c.out_shape) {
    return ::testing::AssertionFailure() << c.name << ": " << dtype_name(out.dtype()) << " " << shape_str(out.sizes());
  }
  std::vector<double> got = values(out);
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = c.out[i];
    const bool same = (std::isnan(got[i]) && std::isnan(want)) ||
                      (got[i] == want && std::signbit(got[i]) == std::signbit(want));
    if (!same) return ::testing::AssertionFailure() << c.name << "[" << i << "] = " << got[i] << ", torch " << want;
  }
  return ::testing::AssertionSuccess();
}

TEST(FloatBits, EveryGoldenCaseBitForBit) {
  for (const golden::Case& c : testing::float_bits_golden::kCases) EXPECT_TRUE(exactly(c, kCPU));
}

TEST(FloatBits, EveryGoldenCaseWithItsGradients) {
  for (const golden::Case& c : testing::float_bits_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), kCPU));
}

TEST(FloatBits, Gradcheck) {
  EXPECT_TRUE(gradcheck([](In x) { return nextafter(x[0], x[1]); }, {input({2, 3}), input({3}, -1.0, 1.0, 4)}));
  // away from the powers of two, where the mantissa jumps
  EXPECT_TRUE(gradcheck([](In x) { return frexp(x[0]).first; }, {input({5}, 0.55, 0.95, 2)}));
  Tensor x = input({3});
  auto [m, e] = frexp(x);
  EXPECT_TRUE(m.requires_grad());
  EXPECT_FALSE(e.requires_grad());
  EXPECT_EQ(e.dtype(), kInt32);
}

TEST(FloatBits, MembersAndOperators) {
  Tensor a = raw::from_vector<int32_t>({1, -200}, {2});
  EXPECT_EQ((a << 2.0).dtype(), kInt32);  // a number keeps the tensor's dtype, as torch's
  EXPECT_EQ(values(a.bitwise_left_shift(31.0)), (std::vector<double>{-2147483648.0, 0.0}));
  EXPECT_EQ(values(a.bitwise_right_shift(32.0)), (std::vector<double>{0.0, -1.0}));
  EXPECT_EQ(values(a >> raw::from_vector<int32_t>({0, 2}, {2})), (std::vector<double>{1.0, -50.0}));
  // uint8: torch's [1, 200, 255] << [1, 1, 8] and >> [1, 7, 8]
  Tensor u = raw::from_vector<uint8_t>({1, 200, 255}, {3});
  EXPECT_EQ(values(u << raw::from_vector<uint8_t>({1, 1, 8}, {3})), (std::vector<double>{2, 144, 0}));
  EXPECT_EQ(values(u >> raw::from_vector<uint8_t>({1, 7, 8}, {3})), (std::vector<double>{0, 1, 0}));
  Tensor f = raw::tensor({1.0, 2.0});
  EXPECT_EQ(values(f.frexp().first), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(values(f.frexp().second), (std::vector<double>{1, 2}));
  EXPECT_GT(values(f.nextafter(raw::tensor({2.0, 3.0})))[0], 1.0);
  Tensor i = raw::arange(3.0);
  i.bitwise_left_shift_(2.0);
  EXPECT_EQ(values(i), (std::vector<double>{0, 4, 8}));
}

TEST(FloatBits, Refusals) {
  const Tensor f = raw::ones({2}), i = raw::ones({2}, kInt64), b = raw::ones({2}, kBool);
  EXPECT_TRUE(throws_with([&] { nextafter(i, i); }, "nextafter: expected a floating-point tensor"));
  EXPECT_TRUE(throws_with([&] { nextafter(raw::ones({2}, kFloat16), raw::ones({2}, kFloat16)); },
                          "nextafter: not implemented for float16"));
  EXPECT_TRUE(throws_with([&] { frexp(i); }, "torch.frexp() only supports floating-point dtypes"));
  EXPECT_TRUE(throws_with([&] { bitwise_left_shift(f, f); }, "bitwise_left_shift: not implemented for float32"));
  EXPECT_TRUE(throws_with([&] { bitwise_right_shift(b, b); }, "bitwise_right_shift: not implemented for bool"));
  EXPECT_TRUE(throws_with([&] { i << 1.5; }, "not implemented for float32"));  // 1.5 makes it floating, as torch
  EXPECT_TRUE(throws_with([&] { round(i, 1); }, "round: not implemented for int64 tensors"));
  EXPECT_TRUE(throws_with([&] { div(f, f, "xyz"); },
                          "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'xyz'"));
  EXPECT_TRUE(throws_with([&] { div(i, raw::zeros({2}, kInt64), "trunc"); }, "ZeroDivisionError"));
  EXPECT_TRUE(throws_with([&] { div(b, b, "floor"); }, "not implemented for bool"));
}

TEST(FloatBits, TensorPredicates) {
  EXPECT_TRUE(raw::tensor({5.0}).is_nonzero());
  EXPECT_FALSE(raw::zeros({1, 1}).is_nonzero());
  EXPECT_TRUE(raw::tensor({std::nan("")}).is_nonzero());
  EXPECT_TRUE(throws_with([] { raw::ones({2}).is_nonzero(); }, "Boolean value of Tensor with more than one value is ambiguous"));
  EXPECT_TRUE(throws_with([] { raw::ones({0}).is_nonzero(); }, "Boolean value of Tensor with no values is ambiguous"));
  EXPECT_TRUE(raw::zeros({2, 3}).is_same_size(raw::ones({2, 3}, kInt64)));
  EXPECT_FALSE(raw::zeros({2, 3}).is_same_size(raw::ones({3, 2})));
  EXPECT_TRUE(raw::ones({1}).is_signed());
  EXPECT_TRUE(raw::ones({1}, kInt32).is_signed());
  EXPECT_FALSE(raw::ones({1}, kUInt8).is_signed());
  EXPECT_FALSE(raw::ones({1}, kBool).is_signed());
}

TEST(FloatBits, EveryGoldenCaseOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::float_bits_golden::kCases) {
    EXPECT_TRUE(exactly(c, Device::cuda(0)));
    EXPECT_TRUE(golden::matches(c, ops(), Device::cuda(0)));
  }
}

}  // namespace
}  // namespace colony
