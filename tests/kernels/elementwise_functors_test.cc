// The shared elementwise math (kernels/common) on the host, against hand-derived values: the same
// functions run inside the CUDA kernels. Half/bfloat16 bit patterns are worked out by hand from
// the IEEE formats (binary16: 1 sign, 5 exponent bits biased by 15, 10 mantissa bits).
#include "kernels/common/elementwise_functors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/common/convert.h"
#include "kernels/common/half.h"

namespace colony::kernels {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t half_bits(float f) { return Half(f).bits; }
uint16_t bf16_bits(float f) { return BFloat16(f).bits; }
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(HalfConversion, NormalValues) {
  EXPECT_EQ(half_bits(1.0f), 0x3C00);
  EXPECT_EQ(half_bits(-2.0f), 0xC000);
  EXPECT_EQ(half_bits(0.1f), 0x2E66);  // 1.6 * 2^-4: mantissa 0.6 * 1024 = 614.4 -> 614 = 0x266
  EXPECT_EQ(half_bits(65504.0f), 0x7BFF);  // the largest finite half
  EXPECT_EQ(half_bits(0.0f), 0x0000);
  EXPECT_EQ(half_bits(-0.0f), 0x8000);
}

TEST(HalfConversion, RoundsToNearestEven) {
  // Steps of 2^-10 above 1: 1 + 2^-11 is halfway between 0x3C00 and 0x3C01, the even one wins.
  EXPECT_EQ(half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // between 0x3C01 and 0x3C02
  EXPECT_EQ(half_bits(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);  // just above the tie
  EXPECT_EQ(half_bits(65519.0f), 0x7BFF);  // below 65504 + half a step (16)
  EXPECT_EQ(half_bits(65520.0f), 0x7C00);  // the tie rounds to the even neighbour, Inf
}

TEST(HalfConversion, InfAndNaN) {
  EXPECT_EQ(half_bits(kInf), 0x7C00);
  EXPECT_EQ(half_bits(-kInf), 0xFC00);
  EXPECT_EQ(half_bits(1e10f), 0x7C00);
  uint16_t nan = half_bits(kNaN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half::from_bits(nan))));
  // A NaN whose payload sits only in the low float mantissa bits must not turn into Inf.
  uint16_t low_payload = half_bits(from_bits(0x7F800001u));
  EXPECT_NE(low_payload & 0x03FF, 0);
  EXPECT_EQ(half_bits(-kNaN) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half::from_bits(0xFC00))));
}

TEST(HalfConversion, Subnormals) {
  const float tiny = std::ldexp(1.0f, -24);  // the smallest subnormal half
  EXPECT_EQ(half_bits(tiny), 0x0001);
  EXPECT_EQ(half_bits(std::ldexp(1.0f, -25)), 0x0000);      // tie between 0 and 1 ulp: even is 0
  EXPECT_EQ(half_bits(3 * std::ldexp(1.0f, -25)), 0x0002);  // tie between 1 and 2 ulps: 2
  EXPECT_EQ(half_bits(std::ldexp(1.0f, -14)), 0x0400);      // the smallest normal
  EXPECT_EQ(half_bits(std::ldexp(1.0f, -14) - tiny), 0x03FF);  // the largest subnormal
  EXPECT_EQ(half_bits(-tiny), 0x8001);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x0001)), tiny);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x03FF)), 1023 * tiny);
}

TEST(HalfConversion, ToFloat) {
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x3555)), 0.333251953125f);  // 2^-2 * (1 + 341/1024)
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x7BFF)), 65504.0f);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0xC000)), -2.0f);
  EXPECT_TRUE(std::signbit(static_cast<float>(Half::from_bits(0x8000))));
}

TEST(BFloat16Conversion, RoundingAndSpecials) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie, even stays
  EXPECT_EQ(bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie between 0x3F81 and 0x3F82
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
  EXPECT_EQ(bf16_bits(kInf), 0x7F80);
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::max()), 0x7F80);  // beyond the last bf16 step: Inf
  EXPECT_EQ(bf16_bits(from_bits(0x7F800001u)), 0x7FC0);  // signalling NaN stays NaN (quieted)
  EXPECT_EQ(bf16_bits(from_bits(0x00010000u)), 0x0001);   // subnormal
  EXPECT_EQ(static_cast<float>(BFloat16::from_bits(0x4049)), 3.140625f);
}

TEST(Convert, BetweenDtypes) {
  EXPECT_EQ((convert<int32_t>(2.9f)), 2);
  EXPECT_EQ((convert<int32_t>(-2.9f)), -2);  // toward zero
  EXPECT_EQ((convert<int64_t>(-0.5)), 0);
  EXPECT_EQ((convert<uint8_t>(-1.0f)), 255);  // wraps through int64
  EXPECT_EQ((convert<uint8_t>(300)), 44);
  EXPECT_EQ((convert<bool>(kNaN)), true);
  EXPECT_EQ((convert<bool>(0.0)), false);
  EXPECT_EQ((convert<bool>(-0.0f)), false);
  EXPECT_EQ((convert<bool>(Half(0.5f))), true);
  EXPECT_EQ((convert<float>(true)), 1.0f);
  EXPECT_EQ((convert<Half>(0.1)).bits, 0x2E66);
  EXPECT_EQ((convert<BFloat16>(int64_t{3})).bits, 0x4040);
  EXPECT_EQ((convert<int32_t>(Half::from_bits(0xC500))), -5);  // -5.0 in half
  EXPECT_EQ((convert<Half>(Half::from_bits(0x7E01))).bits, 0x7E01);  // same dtype keeps the bits
  EXPECT_EQ((convert<double>(BFloat16::from_bits(0x3F80))), 1.0);
}

TEST(UnaryFunctors, HandValues) {
  EXPECT_EQ((unary_fn<UnaryOp::Neg>(3.0f)), -3.0f);
  EXPECT_EQ((unary_fn<UnaryOp::Neg, uint8_t>(1)), 255);
  EXPECT_EQ((unary_fn<UnaryOp::Abs, int32_t>(-7)), 7);
  EXPECT_EQ((unary_fn<UnaryOp::Abs>(-0.25)), 0.25);
  EXPECT_EQ((unary_fn<UnaryOp::Relu>(-1.0f)), 0.0f);
  EXPECT_EQ((unary_fn<UnaryOp::Relu>(2.0f)), 2.0f);
  EXPECT_TRUE(std::isnan(unary_fn<UnaryOp::Relu>(kNaN)));
  EXPECT_EQ((unary_fn<UnaryOp::Relu, int64_t>(-4)), 0);
  EXPECT_EQ((unary_fn<UnaryOp::Square, int32_t>(-3)), 9);
  EXPECT_EQ((unary_fn<UnaryOp::Reciprocal>(4.0f)), 0.25f);
  EXPECT_EQ((unary_fn<UnaryOp::Rsqrt>(4.0)), 0.5);
  EXPECT_EQ((unary_fn<UnaryOp::Sqrt>(9.0f)), 3.0f);
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Exp>(1.0)), 2.718281828459045);
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Log>(std::exp(2.0))), 2.0);
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Log1p>(1e-20)), 1e-20);  // where log(1 + x) would give 0
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Expm1>(1e-20)), 1e-20);
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Tanh>(0.5)), 0.46211715726000974);
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Sin>(M_PI / 6)), 0.5);
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Cos>(M_PI / 3)), 0.5000000000000001);
  EXPECT_EQ((unary_fn<UnaryOp::LogicalNot>(0.0f)), true);
  EXPECT_EQ((unary_fn<UnaryOp::LogicalNot, int32_t>(5)), false);
  EXPECT_EQ((unary_fn<UnaryOp::Floor>(-1.5f)), -2.0f);
  EXPECT_EQ((unary_fn<UnaryOp::Ceil>(-1.5f)), -1.0f);
}

TEST(UnaryFunctors, SigmoidIsStable) {
  EXPECT_EQ((unary_fn<UnaryOp::Sigmoid>(0.0f)), 0.5f);
  EXPECT_EQ((unary_fn<UnaryOp::Sigmoid>(100.0f)), 1.0f);
  float tiny = unary_fn<UnaryOp::Sigmoid>(-100.0f);  // e^-100 = 3.72e-44: a float subnormal, not NaN
  EXPECT_GT(tiny, 0.0f);
  EXPECT_NEAR(tiny, 3.720075976020836e-44, 1e-45);
  EXPECT_EQ((unary_fn<UnaryOp::Sigmoid>(-1000.0f)), 0.0f);
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Sigmoid>(2.0)), 1.0 / (1.0 + std::exp(-2.0)));
  EXPECT_DOUBLE_EQ((unary_fn<UnaryOp::Sigmoid>(-2.0)), std::exp(-2.0) / (1.0 + std::exp(-2.0)));
  EXPECT_TRUE(std::isnan(unary_fn<UnaryOp::Sigmoid>(kNaN)));
}

TEST(UnaryFunctors, RoundHalfToEven) {
  EXPECT_EQ((unary_fn<UnaryOp::Round>(2.5f)), 2.0f);
  EXPECT_EQ((unary_fn<UnaryOp::Round>(3.5f)), 4.0f);
  EXPECT_EQ((unary_fn<UnaryOp::Round>(-1.5)), -2.0);
  EXPECT_EQ((unary_fn<UnaryOp::Round>(0.49999997f)), 0.0f);
  float neg_half = unary_fn<UnaryOp::Round>(-0.5f);
  EXPECT_EQ(neg_half, 0.0f);
  EXPECT_TRUE(std::signbit(neg_half));
}

TEST(UnaryFunctors, Erf) {
  // Values of math.erf.
  EXPECT_NEAR((unary_fn<UnaryOp::Erf>(0.5)), 0.5204998778130465, 1e-15);
  EXPECT_NEAR((unary_fn<UnaryOp::Erf>(-1.5f)), -0.9661051464753108, 1e-6);
  EXPECT_EQ((unary_fn<UnaryOp::Erf>(0.0)), 0.0);
  EXPECT_TRUE(std::isnan(unary_fn<UnaryOp::Erf>(kNaN)));
}

TEST(UnaryFunctors, Sign) {
  EXPECT_EQ((unary_fn<UnaryOp::Sign>(-3.5f)), -1.0f);
  EXPECT_EQ((unary_fn<UnaryOp::Sign>(0.0f)), 0.0f);
  EXPECT_EQ((unary_fn<UnaryOp::Sign>(7.0)), 1.0);
  EXPECT_EQ((unary_fn<UnaryOp::Sign>(kNaN)), 0.0f);  // (0 < x) - (x < 0), as in PyTorch
  EXPECT_EQ((unary_fn<UnaryOp::Sign, int64_t>(-9)), -1);
  EXPECT_EQ((unary_fn<UnaryOp::Sign, uint8_t>(200)), 1);
  EXPECT_EQ((unary_fn<UnaryOp::Sign, bool>(true)), true);
}

TEST(BinaryFunctors, Arithmetic) {
  EXPECT_EQ((binary_fn<BinaryOp::Add>(1.0f, 2.0f, 1.0f)), 3.0f);
  EXPECT_EQ((binary_fn<BinaryOp::Add>(1.0f, 2.0f, 3.0f)), 7.0f);  // alpha scales b
  EXPECT_EQ((binary_fn<BinaryOp::Add, uint8_t>(250, 10, 1)), 4);  // wraps like uint8
  EXPECT_EQ((binary_fn<BinaryOp::Add, bool>(true, true, true)), true);
  EXPECT_EQ((binary_fn<BinaryOp::Sub>(1.0, 3.0, 1.0)), -2.0);
  EXPECT_EQ((binary_fn<BinaryOp::Mul, int32_t>(-4, 6, 1)), -24);
  EXPECT_EQ((binary_fn<BinaryOp::Div>(1.0f, 4.0f, 1.0f)), 0.25f);
  EXPECT_TRUE(std::isinf(binary_fn<BinaryOp::Div>(1.0f, 0.0f, 1.0f)));
}

TEST(BinaryFunctors, Pow) {
  EXPECT_EQ((binary_fn<BinaryOp::Pow>(2.0f, 10.0f, 1.0f)), 1024.0f);
  EXPECT_EQ((binary_fn<BinaryOp::Pow>(4.0, 0.5, 1.0)), 2.0);
  EXPECT_TRUE(std::isnan(binary_fn<BinaryOp::Pow>(-8.0, 1.0 / 3.0, 1.0)));
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int64_t>(3, 4, 1)), 81);
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int32_t>(-2, 3, 1)), -8);
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int32_t>(7, 0, 1)), 1);
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int32_t>(2, -1, 1)), 0);  // 1/2 truncated
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int32_t>(-1, -3, 1)), -1);
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int32_t>(-1, -4, 1)), 1);
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int32_t>(1, -5, 1)), 1);
  EXPECT_EQ((binary_fn<BinaryOp::Pow, uint8_t>(2, 9, 1)), 0);  // 512 mod 256
  EXPECT_EQ((binary_fn<BinaryOp::Pow, uint8_t>(3, 5, 1)), 243);
  EXPECT_EQ((binary_fn<BinaryOp::Pow, int64_t>(3, 40, 1)), -6289078614652622815LL);  // 3^40 mod 2^64
  EXPECT_EQ((binary_fn<BinaryOp::Pow, bool>(false, false, true)), true);  // 0^0 = 1
  EXPECT_EQ((binary_fn<BinaryOp::Pow, bool>(false, true, true)), false);
}

TEST(BinaryFunctors, MaximumMinimumPropagateNaN) {
  EXPECT_EQ((binary_fn<BinaryOp::Maximum>(1.0f, 2.0f, 1.0f)), 2.0f);
  EXPECT_EQ((binary_fn<BinaryOp::Minimum>(1.0f, 2.0f, 1.0f)), 1.0f);
  EXPECT_TRUE(std::isnan(binary_fn<BinaryOp::Maximum>(kNaN, 1.0f, 1.0f)));
  EXPECT_TRUE(std::isnan(binary_fn<BinaryOp::Maximum>(1.0f, kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(binary_fn<BinaryOp::Minimum>(kNaN, 1.0f, 1.0f)));
  EXPECT_TRUE(std::isnan(binary_fn<BinaryOp::Minimum>(1.0f, kNaN, 1.0f)));
  EXPECT_EQ((binary_fn<BinaryOp::Maximum, int32_t>(-3, -5, 1)), -3);
}

TEST(BinaryFunctors, Comparisons) {
  EXPECT_TRUE((binary_fn<BinaryOp::Eq>(2.0f, 2.0f, 1.0f)));
  EXPECT_FALSE((binary_fn<BinaryOp::Eq>(kNaN, kNaN, 1.0f)));
  EXPECT_TRUE((binary_fn<BinaryOp::Ne>(kNaN, kNaN, 1.0f)));
  EXPECT_TRUE((binary_fn<BinaryOp::Lt, int64_t>(-1, 0, 1)));
  EXPECT_TRUE((binary_fn<BinaryOp::Le>(1.0, 1.0, 1.0)));
  EXPECT_FALSE((binary_fn<BinaryOp::Gt>(kNaN, 0.0f, 1.0f)));
  EXPECT_TRUE((binary_fn<BinaryOp::Ge, uint8_t>(255, 0, 1)));
  static_assert(std::is_same_v<binary_out_t<BinaryOp::Lt, float>, bool>);
  static_assert(std::is_same_v<binary_out_t<BinaryOp::Add, Half>, Half>);
  static_assert(std::is_same_v<unary_out_t<UnaryOp::LogicalNot, int32_t>, bool>);
}

TEST(ClampFunctor, BoundsAndNaN) {
  EXPECT_EQ(clamp_fn(5.0f, true, 0.0f, true, 3.0f), 3.0f);
  EXPECT_EQ(clamp_fn(-5.0f, true, 0.0f, true, 3.0f), 0.0f);
  EXPECT_EQ(clamp_fn(1.0f, true, 0.0f, false, 0.0f), 1.0f);
  EXPECT_EQ(clamp_fn(9.0f, false, 0.0f, true, 3.0f), 3.0f);
  EXPECT_EQ(clamp_fn(1.0f, true, 3.0f, true, 2.0f), 2.0f);  // min > max: everything is max
  EXPECT_EQ(clamp_fn(9.0f, true, 3.0f, true, 2.0f), 2.0f);
  EXPECT_TRUE(std::isnan(clamp_fn(kNaN, true, 0.0f, true, 1.0f)));
  EXPECT_TRUE(std::isnan(clamp_fn(0.5f, true, kNaN, false, 0.0f)));
  EXPECT_EQ(clamp_fn<int32_t>(-7, true, -2, true, 2), -2);
}

TEST(ActivationGradFunctors, HandValues) {
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Relu>(2.0f, -1.0f)), 0.0f);
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Relu>(2.0f, 0.0f)), 0.0f);  // no gradient at the kink
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Relu>(2.0f, 0.5f)), 2.0f);
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Sigmoid>(2.0f, 0.25f)), 0.375f);  // 2 * 0.75 * 0.25
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Tanh>(2.0, 0.5)), 1.5);         // 2 * (1 - 0.25)
}

// The shrinks and threshold (ATen's kernels): the bounds themselves are inside the zero band, NaN
// passes, softshrink's band is +0, threshold truncates its Scalars on integers.
TEST(UnaryFunctors, ShrinksAndThreshold) {
  UnaryAttrs a;
  a.lambd = 0.5;
  EXPECT_EQ((unary_fn<UnaryOp::Hardshrink>(0.5, a)), 0.0);
  EXPECT_EQ((unary_fn<UnaryOp::Hardshrink>(-0.75, a)), -0.75);
  EXPECT_TRUE(std::isnan(unary_fn<UnaryOp::Hardshrink>(kNaN, a)));
  EXPECT_EQ((unary_fn<UnaryOp::Softshrink>(2.0f, a)), 1.5f);
  EXPECT_EQ((unary_fn<UnaryOp::Softshrink>(-2.0, a)), -1.5);
  EXPECT_FALSE(std::signbit(unary_fn<UnaryOp::Softshrink>(-0.25, a)));  // +0, torch's vectorized kernel
  EXPECT_TRUE(std::isnan(unary_fn<UnaryOp::Softshrink>(kNaN, a)));
  a.threshold = 1.5;
  a.value = -7;
  EXPECT_EQ((unary_fn<UnaryOp::Threshold>(1.5, a)), -7.0);  // at the threshold: the value
  EXPECT_EQ((unary_fn<UnaryOp::Threshold>(1.75, a)), 1.75);
  EXPECT_EQ((unary_fn<UnaryOp::Threshold, int64_t>(1, a)), -7);
  EXPECT_EQ((unary_fn<UnaryOp::Threshold, int64_t>(2, a)), 2);
  EXPECT_TRUE(std::isnan(unary_fn<UnaryOp::Threshold>(kNaN, a)));
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Hardshrink>(3.0, 0.5, a)), 0.0);
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Softshrink>(3.0, -0.6, a)), 3.0);
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Softshrink, double>(3.0, kNaN, a)), 3.0);
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Threshold>(3.0, 1.5, a)), 0.0);
  EXPECT_EQ((activation_grad_fn<ActivationGrad::Threshold>(3.0, 1.6, a)), 3.0);
  EXPECT_STREQ(op_name(ActivationGrad::Threshold), "threshold_backward");
}

// GELU and SiLU against values of the float64 formulas (Python's math.erf / math.tanh), and their
// derivatives against central differences of the same formulas.
TEST(UnaryFunctors, GeluAndSilu) {
  const UnaryAttrs exact{GeluApproximate::None}, tanh_form{GeluApproximate::Tanh};
  EXPECT_NEAR((unary_fn<UnaryOp::Gelu>(1.0, exact)), 0.8413447460685429, 1e-15);
  EXPECT_NEAR((unary_fn<UnaryOp::Gelu>(-1.0, exact)), -0.15865525393145707, 1e-15);
  EXPECT_NEAR((unary_fn<UnaryOp::Gelu>(3.0, exact)), 2.99595030590511, 1e-14);
  EXPECT_NEAR((unary_fn<UnaryOp::Gelu>(1.0, tanh_form)), 0.8411919906082768, 1e-15);
  EXPECT_NEAR((unary_fn<UnaryOp::Gelu>(-1.0, tanh_form)), -0.15880800939172324, 1e-15);
  EXPECT_NEAR((unary_fn<UnaryOp::Gelu>(0.5f, tanh_form)), 0.34571400982514394f, 1e-7f);
  EXPECT_EQ((unary_fn<UnaryOp::Gelu>(1.0)), (unary_fn<UnaryOp::Gelu>(1.0, exact)));  // the default is exact
  EXPECT_TRUE(std::isnan(unary_fn<UnaryOp::Gelu>(kNaN, exact)));
  EXPECT_NEAR((unary_fn<UnaryOp::Silu>(1.0)), 0.7310585786300049, 1e-15);
  EXPECT_NEAR((unary_fn<UnaryOp::Silu>(-1.0)), -0.2689414213699951, 1e-15);
  EXPECT_NEAR((unary_fn<UnaryOp::Silu>(3.0f)), 2.8577223804672998f, 1e-6f);
  // exp(100) overflows float: x / inf is -0, as PyTorch's x / (1 + exp(-x)) gives.
  float far = unary_fn<UnaryOp::Silu>(-100.0f);
  EXPECT_EQ(far, 0.0f);
  EXPECT_TRUE(std::signbit(far));
}

TEST(ActivationGradFunctors, GeluAndSiluAreTheDerivatives) {
  const UnaryAttrs exact{GeluApproximate::None}, tanh_form{GeluApproximate::Tanh};
  EXPECT_NEAR((activation_grad_fn<ActivationGrad::Gelu>(1.0, 1.0, exact)), 1.0833154705876864, 1e-12);
  EXPECT_NEAR((activation_grad_fn<ActivationGrad::Gelu>(2.0, -1.0, exact)), 2 * -0.08331547057816024, 1e-9);
  EXPECT_NEAR((activation_grad_fn<ActivationGrad::Gelu>(1.0, 1.0, tanh_form)), 1.0829640837983767, 1e-9);
  EXPECT_NEAR((activation_grad_fn<ActivationGrad::Gelu>(1.0, 3.0, tanh_form)), 1.0115841666546999, 1e-9);
  EXPECT_NEAR((activation_grad_fn<ActivationGrad::Silu>(1.0, 1.0)), 0.9276705117966522, 1e-9);
  EXPECT_NEAR((activation_grad_fn<ActivationGrad::Silu>(1.0, -1.0)), 0.0723294881210812, 1e-9);
  for (double x : {-4.0, -0.7, 0.0, 0.3, 2.5}) {
    SCOPED_TRACE(x);
    const double h = 1e-6;
    for (UnaryAttrs a : {exact, tanh_form}) {
      double fd = (unary_fn<UnaryOp::Gelu>(x + h, a) - unary_fn<UnaryOp::Gelu>(x - h, a)) / (2 * h);
      EXPECT_NEAR((activation_grad_fn<ActivationGrad::Gelu>(1.0, x, a)), fd, 1e-8);
    }
    double fd = (unary_fn<UnaryOp::Silu>(x + h) - unary_fn<UnaryOp::Silu>(x - h)) / (2 * h);
    EXPECT_NEAR((activation_grad_fn<ActivationGrad::Silu>(1.0, x)), fd, 1e-8);
  }
}

TEST(OpLists, NamesComeFromTheLists) {
  EXPECT_STREQ(op_name(UnaryOp::Gelu), "gelu");
  EXPECT_STREQ(op_name(UnaryOp::LogicalNot), "logical_not");
  EXPECT_STREQ(op_name(BinaryOp::Maximum), "maximum");
  EXPECT_STREQ(op_name(ActivationGrad::Silu), "silu_backward");
  EXPECT_STREQ(op_name(ActivationGrad::Relu), "relu_backward");
}

}  // namespace
}  // namespace colony::kernels
