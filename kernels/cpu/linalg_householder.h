// What the CPU decompositions of linalg_decomp.h share (linalg_decomp.cc: LU, triangular solves,
// Cholesky, QR; linalg_eigh.cc; linalg_svd.cc): the per-matrix task split, the dtype dispatch, the
// products through Colony's GEMM, and Householder reflectors, one at a time and in LAPACK's compact
// WY form (dlarfg, dlarft, dlarfb, dorgqr). Internal to kernels/cpu's linalg files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/gemm.h"
#include "kernels/common/matrix.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu::linalg_internal {

// One matrix per task: a matrix is already thousands of operations from 3 x 3 up, more than a
// task's hand-off costs, so there is no grain to tune.
template <typename F>
void per_matrix(int64_t batch, F&& fn) {
  parallel_for(batch, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(b);
  });
}

template <typename F>
void dispatch(DType dtype, const char* op, F&& fn) {
  if (dtype == DType::Float32) {
    fn(float{});
  } else if (dtype == DType::Float64) {
    fn(double{});
  } else {
    throw std::invalid_argument(std::string(op) + ": float32 or float64 only");
  }
}

// Blocked factorizations: a panel of kBlock columns is factored with the loops LAPACK's unblocked
// routines use, then the rest of the matrix is updated by one product through Colony's GEMM
// (right-looking, as dgetrf/dpotrf), where O(n^3) of the work is. A matrix no wider than one
// panel takes the unblocked loops alone, operation for operation as before blocking (so the small
// goldens' pivots and rounding are unchanged). 32 columns: wide enough that the products run near
// GEMM's speed, narrow enough that the panel's scalar loops stay a small share at n = 64..256.
constexpr int64_t kBlock = 32;

template <typename T>
constexpr DType dtype_of() {
  return sizeof(T) == 4 ? DType::Float32 : DType::Float64;
}

// C[m, n] = alpha A B + beta C for operands given as MatrixArgs (one product, C row-major).
template <typename T>
void product(int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, T* c, int64_t ldc, double alpha,
             double beta) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  Gemm::cpu(dtype_of<T>(), 1, m, n, k, a, b, c, ldc, 0, alpha, beta);
}

// C[m, n] -= A[m, k] B[k, n], row-major with leading dimensions lda, ldb, ldc (b_cols: B given as
// the transpose of a row-major [n, k], i.e. column-major).
template <typename T>
void gemm_sub(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
              bool b_col_major = false) {
  product<T>(m, n, k, MatrixArg{a, lda, false, 0}, MatrixArg{b, ldb, b_col_major, 0}, c, ldc, -1.0, 1.0);
}

// The dot product of x and y (n entries), in 8 independent partial sums: the compiler vectorizes
// these without reassociating one sum (a single running sum would run at the adder's latency).
template <typename T>
T dot8(const T* x, const T* y, int64_t n) {
  T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int q = 0; q < 8; ++q) acc[q] += x[i + q] * y[i + q];
  T sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// Rotations of a QL or QR sweep are applied to the rows of the vectors after the sweep, this many
// columns at a time: consecutive rotations share a row, so each row block is read from L1 once per
// sweep rather than from L2 twice per rotation.
constexpr int64_t kRotationColumns = 128;

// sqrt(a^2 + b^2) without the cost of std::hypot where the squares neither overflow nor lose
// precision to underflow (nearly always: the QR iterations call this twice per rotation).
template <typename T>
T pythag(T a, T b) {
  const T r = std::sqrt(a * a + b * b);
  // lo^2 and hi^2 stay normal: 1e-36 and 1e36 in float32, 1e-300 and 1e300 in float64.
  constexpr T lo = static_cast<T>(sizeof(T) == 4 ? 1e-18 : 1e-150), hi = T(1) / lo;
  if (r > lo && r < hi) return r;
  return std::hypot(a, b);
}

// The factor that brings a matrix whose largest |entry| is amax into [sqrt(tiny / eps),
// sqrt(eps / tiny)] (LAPACK dsyev's and dgesvd's rmin and rmax), or 1 when it is there or zero:
// outside it the sums of squares of the reflectors and rotations would underflow (a column of
// 1e-25 in float32 read as already zero) or overflow. The result is divided by it again.
template <typename T>
T range_scale(T amax) {
  const T small = std::sqrt(std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon());
  const T big = T(1) / small;
  if (amax > T(0) && amax < small) return small / amax;
  if (amax > big && amax <= std::numeric_limits<T>::max()) return big / amax;
  return T(1);
}

// The reflector H = I - tau v vᵀ with H [x0; x] = [beta; 0] and v = [1; x / (x0 - beta)], as
// LAPACK's dlarfg chooses it: beta = -sign(x0) ||[x0; x]||, and no reflection (tau 0, beta x0)
// when x is already zero. x (count entries, stride) is overwritten with v's tail; returns tau and
// sets beta.
template <typename T>
T make_reflector(T x0, T* x, int64_t count, int64_t stride, T& beta) {
  T sigma = 0;
  for (int64_t i = 0; i < count; ++i) sigma += x[i * stride] * x[i * stride];
  if (sigma == T(0)) {
    beta = x0;
    return T(0);
  }
  beta = -std::copysign(std::sqrt(x0 * x0 + sigma), x0);
  const T scale = T(1) / (x0 - beta);
  for (int64_t i = 0; i < count; ++i) x[i * stride] *= scale;
  return (beta - x0) / beta;
}

// x[rows, cols] (leading dimension ld) <- (I - tau v vᵀ) x: the dots vᵀ x accumulated row by row
// into dots, then the rank-1 update row by row.
template <typename T>
void reflect_rows(T* x, int64_t ld, const T* v, T tau, int64_t rows, int64_t cols, std::vector<T>& dots) {
  dots.assign(cols, T(0));
  for (int64_t i = 0; i < rows; ++i) {
    const T vi = v[i];
    const T* xi = x + i * ld;
    for (int64_t c = 0; c < cols; ++c) dots[c] += vi * xi[c];
  }
  for (int64_t c = 0; c < cols; ++c) dots[c] *= tau;
  for (int64_t i = 0; i < rows; ++i) {
    const T vi = v[i];
    T* xi = x + i * ld;
    for (int64_t c = 0; c < cols; ++c) xi[c] -= dots[c] * vi;
  }
}

// The jb x jb upper-triangular T of the compact WY form H_j0 ... H_{j0+jb-1} = I - V T Vᵀ (LAPACK
// dlarft, forward, columnwise): V's column p is vs[(j0 + p) m + j0 ...], the reflector's vector
// from row j0 on (zero above its own start row j0 + p).
template <typename T>
void block_reflector(const T* vs, const T* tau, int64_t j0, int64_t jb, int64_t m, T* t) {
  std::fill(t, t + jb * jb, T(0));
  std::vector<T> w(jb);
  for (int64_t i = 0; i < jb; ++i) {
    t[i * jb + i] = tau[j0 + i];
    if (tau[j0 + i] == T(0)) continue;
    const T* vi = vs + (j0 + i) * m;
    // t[0:i, i] = -tau_i T[0:i, 0:i] (V[:, 0:i]ᵀ v_i)
    for (int64_t p = 0; p < i; ++p) {
      const T* vp = vs + (j0 + p) * m;
      T dot = 0;
      for (int64_t r = j0 + i; r < m; ++r) dot += vp[r] * vi[r];
      w[p] = -tau[j0 + i] * dot;
    }
    for (int64_t p = 0; p < i; ++p) {
      T acc = 0;
      for (int64_t c = p; c < i; ++c) acc += t[p * jb + c] * w[c];
      t[p * jb + i] = acc;
    }
  }
}

// x [rows, cols] (leading dimension ldx, rows from j0 on) <- (I - V T Vᵀ) x, or with Tᵀ when
// transposed (the block's Hᵀ), through three products.
template <typename T>
void apply_block(const T* vs, const T* t, int64_t j0, int64_t jb, int64_t m, T* x, int64_t ldx, int64_t cols,
                 bool transposed, std::vector<T>& w1, std::vector<T>& w2) {
  const int64_t rows = m - j0;
  w1.resize(jb * cols);
  w2.resize(jb * cols);
  const MatrixArg vt{vs + j0 * m + j0, m, false, 0};  // Vᵀ: jb x rows, row-major
  const MatrixArg v{vs + j0 * m + j0, m, true, 0};    // V: rows x jb, column-major
  product<T>(jb, cols, rows, vt, MatrixArg{x, ldx, false, 0}, w1.data(), cols, 1.0, 0.0);
  product<T>(jb, cols, jb, MatrixArg{t, jb, transposed, 0}, MatrixArg{w1.data(), cols, false, 0}, w2.data(), cols, 1.0,
             0.0);
  product<T>(rows, cols, jb, v, MatrixArg{w2.data(), cols, false, 0}, x, ldx, -1.0, 1.0);
}

// q [m, qcols] (leading dimension qcols) <- the first qcols columns of H_0 H_1 ... H_{k-1} (LAPACK
// dorgqr), the reflectors given as make_reflector's vectors in vs (reflector j's at vs + j m, from
// row j on, with vs[j m + j] = 1 and zeros above row j) and their taus. Backwards, one reflector at a
// time for k up to kBlock, past that a panel of kBlock at a time through apply_block.
template <typename T>
void accumulate_reflectors(const T* vs, const T* tau, int64_t m, int64_t k, T* q, int64_t qcols) {
  thread_local std::vector<T> dots, tblock, w1, w2;
  std::fill(q, q + m * qcols, T(0));
  for (int64_t i = 0; i < std::min(m, qcols); ++i) q[i * qcols + i] = 1;
  if (k <= kBlock) {
    for (int64_t j = k - 1; j >= 0; --j) {  // Q = H_0 H_1 ... H_{k-1} I
      if (tau[j] == T(0)) continue;
      reflect_rows(q + j * qcols, qcols, vs + j * m + j, tau[j], m - j, qcols, dots);
    }
    return;
  }
  tblock.resize(kBlock * kBlock);
  for (int64_t j0 = ((k - 1) / kBlock) * kBlock; j0 >= 0; j0 -= kBlock) {
    const int64_t jb = std::min(kBlock, k - j0);
    block_reflector(vs, tau, j0, jb, m, tblock.data());
    apply_block(vs, tblock.data(), j0, jb, m, q + j0 * qcols, qcols, qcols, /*transposed=*/false, w1, w2);
  }
}

}  // namespace colony::kernels::cpu::linalg_internal
