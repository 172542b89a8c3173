// Matrix products on CUDA through cuBLAS: the contract of kernels/cpu/gemm.h, queued on `stream`.
// float32 (float compute; TF32 tensor cores only when matmul_allow_tf32(), off by default as in
// PyTorch), float16 and bfloat16 (float compute), and float64. Row-major products are computed as
// the column-major product of the transposes, so no operand is copied. Each (thread, device)
// handle gets its own workspace per stream (CUBLAS_WORKSPACE_CONFIG sizes it, as in PyTorch).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/matrix.h"

namespace colony::kernels::cuda {

void gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
          void* c, int64_t ldc, int64_t c_batch_stride, double alpha, double beta, void* stream);

}  // namespace colony::kernels::cuda
