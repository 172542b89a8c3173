// One operand of a (batched) matrix product as the GEMM kernels see it. Row-major puts element
// (i, j) at i * ld + j, column-major at i + j * ld; a transposed view of a row-major matrix is
// column-major, so neither backend copies it.
#pragma once

#include <cstdint>

namespace colony::kernels {

struct MatrixArg {
  const void* data = nullptr;
  int64_t ld = 1;
  bool col_major = false;
  int64_t batch_stride = 0;  // elements between consecutive matrices of a batch (0: one shared matrix)
};

}  // namespace colony::kernels
