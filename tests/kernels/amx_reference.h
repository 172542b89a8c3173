// tdpbf16ps' arithmetic one output at a time (kernels/cpu/amx_gemm.h): per 32-deep step, the even
// and the odd positions' exact products summed apart in float32, then C + (E + O), denormals read
// as zero and every result flushed. Shared by the tests of the AMX products (amx_gemm_test) and of
// the convolutions on them (conv_test); it loops over outputs, not tiles, so it shares no blocking
// or packing with the code under test.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common/half.h"

namespace colony::testing {

inline float amx_flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

// c + sum over p < k of a(p) * b(p) (a, b: bfloat16 bits) in the tiles' order, k padded with zero
// products to whole 32-deep steps.
template <typename A, typename B>
float amx_dot(int64_t k, const A& a, const B& b, float c) {
  auto operand = [](uint16_t bits) {
    return static_cast<double>(amx_flush(static_cast<float>(BFloat16::from_bits(bits))));
  };
  for (int64_t p0 = 0; p0 < k; p0 += 32) {
    float even = 0.0f, odd = 0.0f;
    // A step past k still adds its zero products: +0 turns a flushed -0 sum into +0.
    for (int64_t p = p0; p < p0 + 32; ++p) {
      float& sum = (p - p0) % 2 == 0 ? even : odd;
      const double product = p < k ? operand(a(p)) * operand(b(p)) : 0.0;
      sum = amx_flush(static_cast<float>(sum + product));
    }
    c = amx_flush(amx_flush(c) + amx_flush(even + odd));
  }
  return c;
}

}  // namespace colony::testing
