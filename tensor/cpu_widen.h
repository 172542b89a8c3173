// The CPU kernels for matrix products, convolution and pooling are written for float32 and float64.
// A float16/bfloat16 operand is widened to float32 for the kernel and the result rounded back once,
// so products accumulate in float32 (as PyTorch's CPU kernels and cuBLAS with CUBLAS_COMPUTE_32F
// do) and a 16-bit result differs from the float32 one by its final rounding only. It costs two
// extra passes over the operands; a native 16-bit kernel would only pay off with AVX-512 BF16/FP16.
#pragma once

#include "tensor/raw_ops.h"

namespace colony::raw::detail {

inline bool widened_on_cpu(const Tensor& t) {
  return t.defined() && t.is_cpu() && (t.dtype() == kFloat16 || t.dtype() == kBFloat16);
}

// t as float32 (undefined stays undefined).
inline Tensor widen(const Tensor& t) { return t.defined() ? to(t, kCPU, kFloat32) : t; }

// t rounded to `dtype` (undefined stays undefined).
inline Tensor narrow_to(const Tensor& t, DType dtype) { return t.defined() ? to(t, kCPU, dtype) : t; }

}  // namespace colony::raw::detail
