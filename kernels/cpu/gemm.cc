#include "kernels/cpu/gemm.h"

#include <Eigen/Core>
#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

template <typename T, int Order>
using MatMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, Eigen::Unaligned,
                          Eigen::OuterStride<>>;
template <typename T>
using OutMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, Eigen::Unaligned,
                          Eigen::OuterStride<>>;

// Rows [r0, r0 + rows) of one product. A's rows start r0 rows in; B is used whole.
template <typename T, int AOrder, int BOrder>
void gemm_block(const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t rows, int64_t n,
                int64_t k, T alpha, T beta) {
  MatMap<T, AOrder> A(a, rows, k, Eigen::OuterStride<>(lda));
  MatMap<T, BOrder> B(b, k, n, Eigen::OuterStride<>(ldb));
  OutMap<T> C(c, rows, n, Eigen::OuterStride<>(ldc));
  if (beta == T(0)) {
    C.noalias() = alpha * (A * B);
  } else {
    if (beta != T(1)) C *= beta;
    C.noalias() += alpha * (A * B);
  }
}

template <typename T>
void gemm_typed(int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, T* c,
                int64_t ldc, int64_t c_bs, T alpha, T beta) {
  const T* ap = static_cast<const T*>(a.data);
  const T* bp = static_cast<const T*>(b.data);
  // Split the batch's m rows (all products' rows, flattened) into chunks of at least ~256K
  // multiply-adds, so a chunk amortises the pool wake-up and Eigen's packing of B.
  int64_t row_work = std::max<int64_t>(1, n * k);
  int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / row_work);
  parallel_for(batch * m, grain, [&](int64_t begin, int64_t end) {
    for (int64_t flat = begin; flat < end;) {
      int64_t p = flat / m, r0 = flat % m;
      int64_t rows = std::min(m - r0, end - flat);
      const T* a_rows = ap + p * a.batch_stride + (a.col_major ? r0 : r0 * a.ld);
      const T* b_mat = bp + p * b.batch_stride;
      T* c_rows = c + p * c_bs + r0 * ldc;
      if (!a.col_major && !b.col_major) {
        gemm_block<T, Eigen::RowMajor, Eigen::RowMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      } else if (!a.col_major) {
        gemm_block<T, Eigen::RowMajor, Eigen::ColMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      } else if (!b.col_major) {
        gemm_block<T, Eigen::ColMajor, Eigen::RowMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      } else {
        gemm_block<T, Eigen::ColMajor, Eigen::ColMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      }
      flat += rows;
    }
  });
}

}  // namespace

void gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
          void* c, int64_t ldc, int64_t c_batch_stride, double alpha, double beta) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  switch (dtype) {
    case DType::Float32:
      gemm_typed<float>(batch, m, n, k, a, b, static_cast<float*>(c), ldc, c_batch_stride, static_cast<float>(alpha),
                        static_cast<float>(beta));
      return;
    case DType::Float64:
      gemm_typed<double>(batch, m, n, k, a, b, static_cast<double*>(c), ldc, c_batch_stride, alpha, beta);
      return;
    default:
      throw std::invalid_argument(std::string("gemm: CPU matrix products support float32 and float64, got ") +
                                  dtype_name(dtype));
  }
}

}  // namespace colony::kernels::cpu
