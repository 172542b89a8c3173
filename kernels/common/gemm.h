// Matrix products: the entry point, declared once for both devices (kernel.h), defined in
// kernels/cpu/gemm.cc (Eigen or the register tiles of small_gemm.h; kernels/cpu/gemm.h says which)
// and kernels/cuda/blas.cc (cuBLAS).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/matrix.h"

namespace colony::kernels {

// For each of `batch` products: C[m, n] = alpha * A[m, k] @ B[k, n] + beta * C, with C row-major
// (leading dimension ldc, consecutive products c_batch_stride apart), without copying transposed
// operands (see MatrixArg). beta == 0 overwrites C, NaNs included.
COLONY_KERNEL(Gemm, DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
              void* c, int64_t ldc, int64_t c_batch_stride, double alpha, double beta);

// One product with a bias row, a linear layer's forward: C[m, n] = A[m, k] @ B[k, n] + bias[n]
// (bias[j] added to every row's column j), C row-major with leading dimension ldc and only written
// (NaNs there included). CPU, float32 and float64 only: bit for bit Gemm followed by adding the
// bias; the packed product (kernels/cpu/packed_gemm.h) adds it while it stores C, so the second
// pass over C goes. CUDA (all of Gemm's types): the bias copied into C's rows, then Gemm with
// beta = 1.
COLONY_KERNEL(GemmBias, DType dtype, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
              const void* bias, void* c, int64_t ldc);

}  // namespace colony::kernels
