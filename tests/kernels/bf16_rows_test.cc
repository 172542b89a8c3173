// kernels/cpu/bf16_rows.h's vector rows against the scalar BFloat16 arithmetic they replace, bit for
// bit: every one of the 65,536 bfloat16 bit patterns (NaNs, infinities, +-0, subnormals) through
// ReLU, its gradient and widening, and float32 values near every rounding case through rounding.
// Lengths that are not a multiple of the vector width run the scalar tails too. The rows are AVX2
// (the baseline ISA), so every CPU tests the code it runs.
#include "kernels/cpu/bf16_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/elementwise_functors.h"

namespace colony::kernels::cpu {
namespace {

std::vector<BFloat16> every_bf16() {
  std::vector<BFloat16> v(65536);
  for (uint32_t b = 0; b < 65536; ++b) v[b] = BFloat16::from_bits(static_cast<uint16_t>(b));
  return v;
}

float bits_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

// The lengths each row function runs at: whole vectors, a tail of every size, and the whole set.
const int64_t kLengths[] = {0, 1, 7, 8, 15, 16, 17, 31, 33, 65536};

TEST(Bf16Rows, ReluEqualsTheScalarFunctorRoundedForEveryBitPattern) {
  const std::vector<BFloat16> x = every_bf16();
  for (int64_t n : kLengths) {
    std::vector<BFloat16> y(n, BFloat16(7.0f));
    relu_row_bf16(x.data() + 65536 - n, n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const BFloat16 in = x[65536 - n + i];
      const BFloat16 want(unary_fn<UnaryOp::Relu>(static_cast<float>(in)));
      ASSERT_EQ(y[i].bits, want.bits) << "n " << n << ", input bits " << in.bits;
    }
  }
  std::vector<BFloat16> inplace = x;  // y may be x
  relu_row_bf16(inplace.data(), 65536, inplace.data());
  for (int64_t i = 0; i < 65536; ++i) {
    ASSERT_EQ(inplace[i].bits, BFloat16(unary_fn<UnaryOp::Relu>(static_cast<float>(x[i]))).bits);
  }
}

TEST(Bf16Rows, ReluGradientEqualsTheScalarFunctorRoundedForEveryBitPattern) {
  const std::vector<BFloat16> all = every_bf16();
  // saved takes every pattern against three gradients each: a number, a NaN and a negative.
  for (uint16_t g_bits : {uint16_t(0x3fc0), uint16_t(0x7f81), uint16_t(0xc0a0)}) {
    for (int64_t n : kLengths) {
      std::vector<BFloat16> grad(n), out(n);
      for (int64_t i = 0; i < n; ++i) grad[i] = BFloat16::from_bits(static_cast<uint16_t>(g_bits + (i & 3)));
      relu_grad_row_bf16(grad.data(), all.data(), n, out.data());
      for (int64_t i = 0; i < n; ++i) {
        const BFloat16 want(
            activation_grad_fn<ActivationGrad::Relu>(static_cast<float>(grad[i]), static_cast<float>(all[i])));
        ASSERT_EQ(out[i].bits, want.bits) << "n " << n << ", grad bits " << grad[i].bits << ", saved bits "
                                          << all[i].bits;
      }
    }
  }
  // Every pattern as the gradient where saved is positive (it passes, NaNs quieted).
  std::vector<BFloat16> ones(65536, BFloat16(1.0f)), out(65536);
  relu_grad_row_bf16(all.data(), ones.data(), 65536, out.data());
  for (int64_t i = 0; i < 65536; ++i) ASSERT_EQ(out[i].bits, BFloat16(static_cast<float>(all[i])).bits);
}

TEST(Bf16Rows, WideningIsExactForEveryBitPattern) {
  const std::vector<BFloat16> x = every_bf16();
  for (int64_t n : kLengths) {
    std::vector<float> y(n, 7.0f);
    widen_row_from_bf16(x.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      uint32_t got;
      std::memcpy(&got, &y[i], sizeof(got));
      ASSERT_EQ(got, static_cast<uint32_t>(x[i].bits) << 16) << "bits " << x[i].bits;
    }
  }
}

TEST(Bf16Rows, RoundingEqualsBFloat16FromFloatIncludingTiesAndNaNs) {
  // Every bfloat16 pattern's float32 value plus low bits at the rounding boundaries: exact, just
  // below, at and above the tie, the largest low part; and random values with an addend.
  std::vector<float> src;
  for (uint32_t b = 0; b < 65536; ++b) {
    for (uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) src.push_back(bits_float((b << 16) | low));
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int i = 0; i < 4096; ++i) src.push_back(normal(rng));
  for (int64_t n : {int64_t(0), int64_t(5), int64_t(13), static_cast<int64_t>(src.size())}) {
    std::vector<BFloat16> got(n);
    round_row_to_bf16<false>(src.data(), n, 0.0f, got.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i].bits, BFloat16(src[i]).bits) << "float bits index " << i;
    round_row_to_bf16<true>(src.data(), n, 0.375f, got.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i].bits, BFloat16(src[i] + 0.375f).bits) << "index " << i;
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
