// Matrix products on the CPU through Eigen, without copying transposed operands (see MatrixArg).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/matrix.h"

namespace colony::kernels::cpu {

// Whether gemm takes `dtype` (a 16-bit type): bfloat16 where AVX512_BF16 is active, on
// small_gemm_bf16.h's tiles with float32 accumulation and C rounded once. Elsewhere callers widen
// 16-bit operands to float32 (tensor/cpu_widen.h), which gives the same values up to the order of
// the float32 additions.
bool gemm_native_16bit(DType dtype);

// For each of `batch` products: C[m, n] = alpha * A[m, k] @ B[k, n] + beta * C, with C row-major
// (leading dimension ldc, consecutive products c_batch_stride apart). beta == 0 overwrites C, NaNs
// included. float32 and float64 (and bfloat16, see above); the rows of all products are split over
// the thread pool and each chunk is one single-threaded Eigen product (or bfloat16 tile product).
void gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
          void* c, int64_t ldc, int64_t c_batch_stride, double alpha, double beta);

}  // namespace colony::kernels::cpu
