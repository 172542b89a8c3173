// Matrix products on the CPU through Eigen, without copying transposed operands (see MatrixArg).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/matrix.h"

namespace colony::kernels::cpu {

// For each of `batch` products: C[m, n] = alpha * A[m, k] @ B[k, n] + beta * C, with C row-major
// (leading dimension ldc, consecutive products c_batch_stride apart). beta == 0 overwrites C, NaNs
// included. float32 and float64; the rows of all products are split over the thread pool and each
// chunk is one single-threaded Eigen product.
void gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
          void* c, int64_t ldc, int64_t c_batch_stride, double alpha, double beta);

}  // namespace colony::kernels::cpu
