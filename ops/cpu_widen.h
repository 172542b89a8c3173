// The CPU kernels for matrix products, convolution and pooling are written for float32 and float64.
// A float16/bfloat16 operand is widened to float32 for the kernel and the result rounded back once,
// so products accumulate in float32 (as PyTorch's CPU kernels and cuBLAS with CUBLAS_COMPUTE_32F
// do) and a 16-bit result differs from the float32 one by its final rounding only. It costs two
// extra passes over the operands. The exceptions are bfloat16 matrix products and convolutions on
// a CPU with AVX512_BF16, which multiply the 16-bit operands natively (kernels/cpu/gemm.h,
// conv.h), accumulating in float32 all the same, and bfloat16 max pooling (kernels/common/pool.h).
#pragma once

#include "kernels/cpu/conv.h"
#include "kernels/cpu/gemm.h"
#include "ops/raw_ops.h"

namespace colony::raw::detail {

inline bool widened_on_cpu(const Tensor& t) {
  return t.defined() && t.is_cpu() && (t.dtype() == kFloat16 || t.dtype() == kBFloat16);
}

// Whether a convolution of `input` widens (a 16-bit CPU tensor the kernels do not take natively).
inline bool conv_widened_on_cpu(const Tensor& input, const kernels::Conv2dGeometry& g) {
  return widened_on_cpu(input) && !kernels::cpu::conv2d_native_16bit(input.dtype(), g);
}

// Whether a matrix product into `out` widens.
inline bool gemm_widened_on_cpu(const Tensor& out) {
  return widened_on_cpu(out) && !kernels::cpu::gemm_native_16bit(out.dtype());
}

// t as float32 (undefined stays undefined).
inline Tensor widen(const Tensor& t) { return t.defined() ? to(t, kCPU, kFloat32) : t; }

// t rounded to `dtype` (undefined stays undefined).
inline Tensor narrow_to(const Tensor& t, DType dtype) { return t.defined() ? to(t, kCPU, dtype) : t; }

}  // namespace colony::raw::detail
