#include "kernels/cpu/linalg_decomp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/common/gemm.h"
#include "kernels/common/matrix.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

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

// C[m, n] -= A[m, k] B[k, n], row-major with leading dimensions lda, ldb, ldc (b_cols: B given as
// the transpose of a row-major [n, k], i.e. column-major).
template <typename T>
void gemm_sub(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
              bool b_col_major = false) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const MatrixArg am{a, lda, false, 0}, bm{b, ldb, b_col_major, 0};
  Gemm::cpu(dtype_of<T>(), 1, m, n, k, am, bm, c, ldc, 0, -1.0, 1.0);
}

template <typename T>
void lu_factor_one(T* a, int32_t* piv, int32_t* info, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  *info = 0;
  for (int64_t j0 = 0; j0 < k; j0 += kBlock) {
    const int64_t jb = std::min(kBlock, k - j0), j1 = j0 + jb;
    // The panel: columns [j0, j1) below row j0, rows swapped across the whole width (dlaswp).
    const int64_t panel_end = k <= kBlock ? n : j1;
    for (int64_t j = j0; j < j1; ++j) {
      int64_t p = j;
      T best = std::abs(a[j * n + j]);
      for (int64_t i = j + 1; i < m; ++i) {
        const T v = std::abs(a[i * n + j]);
        if (v > best) best = v, p = i;  // the first of equal magnitudes, as idamax
      }
      piv[j] = static_cast<int32_t>(p + 1);
      if (p != j) std::swap_ranges(a + j * n, a + (j + 1) * n, a + p * n);
      const T d = a[j * n + j];
      if (d == T(0)) {
        if (*info == 0) *info = static_cast<int32_t>(j + 1);
        continue;  // getrf goes on: the column below is left as it is
      }
      const T* prow = a + j * n;
      for (int64_t i = j + 1; i < m; ++i) {
        T* row = a + i * n;
        const T l = row[j] / d;
        row[j] = l;
        if (l == T(0)) continue;
        for (int64_t c = j + 1; c < panel_end; ++c) row[c] -= l * prow[c];
      }
    }
    if (panel_end == n) break;  // one panel held the whole matrix
    // U12 = L11^-1 A12 (unit lower), then A22 -= L21 U12.
    for (int64_t j = j0; j < j1; ++j) {
      const T* prow = a + j * n;
      for (int64_t i = j + 1; i < j1; ++i) {
        T* row = a + i * n;
        const T l = row[j];
        if (l == T(0)) continue;
        for (int64_t c = j1; c < n; ++c) row[c] -= l * prow[c];
      }
    }
    gemm_sub(m - j1, n - j1, jb, a + j1 * n + j0, n, a + j0 * n + j1, n, a + j1 * n + j1, n);
  }
}

// b <- T^-1 b for the triangle of a (n x n, leading dimension lda; unit: ones on the diagonal
// assumed), b [n, k] (leading dimension k), blocked: each diagonal block of kBlock rows solved by
// substitution, then its rows of x taken from the rows still to solve with one product.
template <typename T>
void trsm_left(const T* a, int64_t lda, T* b, int64_t n, int64_t k, bool upper, bool unit) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  for (int64_t s = 0; s < blocks; ++s) {
    // Lower: blocks top down; upper: bottom up.
    const int64_t blk = upper ? blocks - 1 - s : s;
    const int64_t i0 = blk * kBlock, i1 = std::min(n, i0 + kBlock);
    for (int64_t t = i0; t < i1; ++t) {
      const int64_t i = upper ? i1 - 1 - (t - i0) : t;
      T* bi = b + i * k;
      const int64_t j0 = upper ? i + 1 : i0, j1 = upper ? i1 : i;
      for (int64_t j = j0; j < j1; ++j) {
        const T v = a[i * lda + j];
        const T* bj = b + j * k;
        for (int64_t c = 0; c < k; ++c) bi[c] -= v * bj[c];
      }
      if (!unit) {
        const T d = a[i * lda + i];
        for (int64_t c = 0; c < k; ++c) bi[c] /= d;
      }
    }
    if (upper) {
      gemm_sub(i0, k, i1 - i0, a + i0, lda, b + i0 * k, k, b, k);  // rows [0, i0)
    } else {
      gemm_sub(n - i1, k, i1 - i0, a + i1 * lda + i0, lda, b + i0 * k, k, b + i1 * k, k);  // rows [i1, n)
    }
  }
}

template <typename T>
void lu_solve_one(const T* lu, const int32_t* piv, T* b, int64_t n, int64_t k) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = piv[i] - 1;
    if (p != i) std::swap_ranges(b + i * k, b + (i + 1) * k, b + p * k);
  }
  trsm_left(lu, n, b, n, k, /*upper=*/false, /*unit=*/true);  // L y = P b
  trsm_left(lu, n, b, n, k, /*upper=*/true, /*unit=*/false);  // U x = y
}

template <typename T>
void triangular_solve_one(const T* a, T* b, int64_t n, int64_t k, bool upper, bool unit) {
  trsm_left(a, n, b, n, k, upper, unit);
}

// The unblocked Cholesky (dpotf2's dot-product form) of the n x n block at a (leading dimension
// lda): 0, or the order of the first minor that is not positive-definite.
template <typename T>
int32_t cholesky_block(T* a, int64_t n, int64_t lda) {
  for (int64_t j = 0; j < n; ++j) {
    T d = a[j * lda + j];
    for (int64_t c = 0; c < j; ++c) d -= a[j * lda + c] * a[j * lda + c];
    if (!(d > T(0))) return static_cast<int32_t>(j + 1);  // NaN too
    d = std::sqrt(d);
    a[j * lda + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      T v = a[i * lda + j];
      for (int64_t c = 0; c < j; ++c) v -= a[i * lda + c] * a[j * lda + c];
      a[i * lda + j] = v / d;
    }
  }
  return 0;
}

constexpr int64_t kCholeskyRows = 128;

template <typename T>
int32_t cholesky_one(T* a, int64_t n) {
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t jb = std::min(kBlock, n - j0), j1 = j0 + jb;
    T* a11 = a + j0 * n + j0;
    const int32_t bad = cholesky_block(a11, jb, n);
    if (bad != 0) return static_cast<int32_t>(j0 + bad);
    // L21 = A21 L11^-T, row by row: x L11ᵀ = a_i by forward substitution.
    for (int64_t i = j1; i < n; ++i) {
      T* row = a + i * n + j0;
      for (int64_t j = 0; j < jb; ++j) {
        T v = row[j];
        for (int64_t c = 0; c < j; ++c) v -= row[c] * a11[j * n + c];
        row[j] = v / a11[j * n + j];
      }
    }
    // A22 -= L21 L21ᵀ, its lower triangle (and some of the upper, never read) in blocks of
    // kCholeskyRows rows: fewer, larger products than a block of kBlock rows each.
    for (int64_t r0 = j1; r0 < n; r0 += kCholeskyRows) {
      const int64_t r1 = std::min(n, r0 + kCholeskyRows);
      gemm_sub(r1 - r0, r1 - j1, jb, a + r0 * n + j0, n, a + j1 * n + j0, n, a + r0 * n + j1, n,
               /*b_col_major=*/true);
    }
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) a[i * n + j] = T(0);
  return 0;
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

// C[m, n] = alpha A B + beta C for operands given as MatrixArgs (one product, C row-major).
template <typename T>
void product(int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, T* c, int64_t ldc, double alpha,
             double beta) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  Gemm::cpu(dtype_of<T>(), 1, m, n, k, a, b, c, ldc, 0, alpha, beta);
}

// The jb x jb upper-triangular T of the compact WY form H_j0 ... H_{j0+jb-1} = I - V T Vᵀ (LAPACK
// dlarft, forward, columnwise): V's column p is vs[(j0 + p) m + j0 ...], the reflector's vector
// from row j0 on.
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

// Householder QR of r (m x n, in place into R) with the reflectors' vectors kept in vs (m per
// reflector, zero above their start) and their taus, as dlarfg builds them: no reflection (tau 0)
// when the column below the diagonal is already zero, so a triangular input keeps its signs.
// Blocked as dgeqrf/dorgqr past one panel of kBlock columns: a panel's reflectors applied to the
// rest of R (and, backwards, to Q) at once in the compact WY form; a matrix of one panel runs the
// reflectors one at a time, as before blocking.
template <typename T>
void householder_one(const T* a, T* q, T* rout, int64_t m, int64_t n, bool complete, std::vector<T>& work) {
  const int64_t k = std::min(m, n);
  thread_local std::vector<T> dots, tblock, w1, w2;
  work.assign(m * n + m * k + k, T(0));
  T* r = work.data();
  T* vs = r + m * n;
  T* tau = vs + m * k;
  std::copy(a, a + m * n, r);
  const bool blocked = k > kBlock;
  for (int64_t j0 = 0; j0 < k; j0 += kBlock) {
    const int64_t j1 = std::min(k, j0 + kBlock), panel_end = blocked ? j1 : n;
    for (int64_t j = j0; j < j1; ++j) {
      T* v = vs + j * m;
      const T x0 = r[j * n + j];
      T sigma = 0;
      for (int64_t i = j + 1; i < m; ++i) sigma += r[i * n + j] * r[i * n + j];
      if (sigma == T(0)) {
        tau[j] = 0;
        continue;
      }
      const T beta = -std::copysign(std::sqrt(x0 * x0 + sigma), x0);
      tau[j] = (beta - x0) / beta;
      const T scale = T(1) / (x0 - beta);
      v[j] = 1;
      for (int64_t i = j + 1; i < m; ++i) v[i] = r[i * n + j] * scale;
      // R[j:, j:panel_end] -= tau v (vᵀ R[j:, j:panel_end]), along R's rows (each column's dot
      // summed in the same order as a column at a time, without striding down the columns).
      reflect_rows(r + j * n + j, n, v + j, tau[j], m - j, panel_end - j, dots);
      for (int64_t i = j + 1; i < m; ++i) r[i * n + j] = 0;
    }
    if (!blocked || j1 == n) continue;
    tblock.resize(kBlock * kBlock);
    block_reflector(vs, tau, j0, j1 - j0, m, tblock.data());
    apply_block(vs, tblock.data(), j0, j1 - j0, m, r + j0 * n + j1, n, n - j1, /*transposed=*/true, w1, w2);
  }
  const int64_t rrows = complete ? m : k;
  for (int64_t i = 0; i < rrows; ++i)
    for (int64_t c = 0; c < n; ++c) rout[i * n + c] = c >= i ? r[i * n + c] : T(0);
  if (q == nullptr) return;
  const int64_t qcols = complete ? m : k;
  std::fill(q, q + m * qcols, T(0));
  for (int64_t i = 0; i < std::min(m, qcols); ++i) q[i * qcols + i] = 1;
  if (!blocked) {
    for (int64_t j = k - 1; j >= 0; --j) {  // Q = H_0 H_1 ... H_{k-1} I
      if (tau[j] == T(0)) continue;
      const T* v = vs + j * m;
      reflect_rows(q + j * qcols, qcols, v + j, tau[j], m - j, qcols, dots);
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

// Sweeps of cyclic Jacobi before giving up: each sweep squares the off-diagonal mass once the
// rotations are small (quadratic convergence), so 10-15 suffice in double for any n seen here.
constexpr int kMaxJacobiSweeps = 100;

template <typename T>
int32_t eigh_one(T* a, T* w, T* v, int64_t n, std::vector<T>& work) {
  work.assign(n * n + n, T(0));
  T* vec = work.data();
  T* d = vec + n * n;
  for (int64_t i = 0; i < n; ++i) vec[i * n + i] = 1;
  const T eps = std::numeric_limits<T>::epsilon();
  int32_t info = 1;
  for (int sweep = 0; sweep < kMaxJacobiSweeps; ++sweep) {
    T off = 0, diag = 0;
    for (int64_t i = 0; i < n; ++i) {
      diag += a[i * n + i] * a[i * n + i];
      for (int64_t j = i + 1; j < n; ++j) off += a[i * n + j] * a[i * n + j];
    }
    if (off <= eps * eps * diag || off == T(0)) {
      info = 0;
      break;
    }
    for (int64_t p = 0; p < n - 1; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const T apq = a[p * n + q];
        if (apq == T(0)) continue;
        const T app = a[p * n + p], aqq = a[q * n + q];
        // Negligible against both diagonal entries: set to zero, as the classical threshold does.
        if (std::abs(apq) <= eps * T(0.5) * std::sqrt(std::abs(app * aqq)) && sweep > 3) {
          a[p * n + q] = a[q * n + p] = 0;
          continue;
        }
        const T theta = (aqq - app) / (T(2) * apq);
        const T t = std::copysign(T(1), theta) / (std::abs(theta) + std::sqrt(theta * theta + T(1)));
        const T c = T(1) / std::sqrt(t * t + T(1)), s = t * c;
        for (int64_t r = 0; r < n; ++r) {  // columns p, q
          const T arp = a[r * n + p], arq = a[r * n + q];
          a[r * n + p] = c * arp - s * arq;
          a[r * n + q] = s * arp + c * arq;
        }
        for (int64_t r = 0; r < n; ++r) {  // rows p, q
          const T apr = a[p * n + r], aqr = a[q * n + r];
          a[p * n + r] = c * apr - s * aqr;
          a[q * n + r] = s * apr + c * aqr;
        }
        a[p * n + q] = a[q * n + p] = 0;
        for (int64_t r = 0; r < n; ++r) {
          const T vrp = vec[r * n + p], vrq = vec[r * n + q];
          vec[r * n + p] = c * vrp - s * vrq;
          vec[r * n + q] = s * vrp + c * vrq;
        }
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) d[i] = a[i * n + i];
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return d[x] < d[y]; });
  for (int64_t i = 0; i < n; ++i) w[i] = d[order[i]];
  if (v != nullptr)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < n; ++i) v[r * n + i] = vec[r * n + order[i]];
  return info;
}

// Fills columns [from, cols) of the m x cols row-major u (columns [0, from) orthonormal) with
// orthonormal vectors: Gram-Schmidt of the unit vectors, twice against rounding, keeping each that
// leaves more than half its length.
template <typename T>
void complete_basis(T* u, int64_t m, int64_t cols, int64_t from, std::vector<T>& x) {
  x.resize(m);
  int64_t next = from;
  for (int64_t e = 0; e < m && next < cols; ++e) {
    std::fill(x.begin(), x.end(), T(0));
    x[e] = 1;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t c = 0; c < next; ++c) {
        T dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += u[i * cols + c] * x[i];
        for (int64_t i = 0; i < m; ++i) x[i] -= dot * u[i * cols + c];
      }
    }
    T norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += x[i] * x[i];
    norm = std::sqrt(norm);
    if (norm < T(0.5)) continue;
    for (int64_t i = 0; i < m; ++i) u[i * cols + next] = x[i] / norm;
    ++next;
  }
}

// One-sided Jacobi on a tall matrix given as its columns (wt: n rows of length m, m >= n).
// s descending; u [m, ucols], vt [vrows, n] when wanted (vrows = n: V is n x n anyway).
template <typename T>
int32_t svd_tall(T* wt, T* s, T* u, int64_t ucols, T* vt, int64_t m, int64_t n, std::vector<T>& work,
                 std::vector<T>& scratch) {
  work.assign(n * n + n, T(0));
  T* vcols = work.data();  // column i of V stored as row i
  T* norms = vcols + n * n;
  for (int64_t i = 0; i < n; ++i) vcols[i * n + i] = 1;
  const T eps = std::numeric_limits<T>::epsilon();
  int32_t info = 1;
  for (int sweep = 0; sweep < kMaxJacobiSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n - 1; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        T* wp = wt + p * m;
        T* wq = wt + q * m;
        T alpha = 0, beta = 0, gamma = 0;
        for (int64_t i = 0; i < m; ++i) alpha += wp[i] * wp[i], beta += wq[i] * wq[i], gamma += wp[i] * wq[i];
        if (gamma == T(0) || std::abs(gamma) <= eps * std::sqrt(alpha * beta)) continue;
        rotated = true;
        const T zeta = (beta - alpha) / (T(2) * gamma);
        const T t = std::copysign(T(1), zeta) / (std::abs(zeta) + std::sqrt(T(1) + zeta * zeta));
        const T c = T(1) / std::sqrt(T(1) + t * t), sn = c * t;
        for (int64_t i = 0; i < m; ++i) {
          const T x = wp[i], y = wq[i];
          wp[i] = c * x - sn * y;
          wq[i] = sn * x + c * y;
        }
        T* vp = vcols + p * n;
        T* vq = vcols + q * n;
        for (int64_t i = 0; i < n; ++i) {
          const T x = vp[i], y = vq[i];
          vp[i] = c * x - sn * y;
          vq[i] = sn * x + c * y;
        }
      }
    }
    if (!rotated) {
      info = 0;
      break;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    T nn = 0;
    for (int64_t r = 0; r < m; ++r) nn += wt[i * m + r] * wt[i * m + r];
    norms[i] = std::sqrt(nn);
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return norms[x] > norms[y]; });
  for (int64_t i = 0; i < n; ++i) s[i] = norms[order[i]];
  if (u == nullptr) return info;
  // Columns of U for singular values this small relative to the largest are rounding noise: they
  // are completed as an orthonormal basis instead of divided out.
  const T tiny = (n > 0 ? s[0] : T(0)) * eps * static_cast<T>(std::max(m, n));
  int64_t rank = 0;
  while (rank < n && s[rank] > tiny && s[rank] > T(0)) ++rank;
  std::fill(u, u + m * ucols, T(0));
  for (int64_t i = 0; i < rank; ++i) {
    const T* w = wt + order[i] * m;
    for (int64_t r = 0; r < m; ++r) u[r * ucols + i] = w[r] / s[i];
  }
  complete_basis(u, m, ucols, rank, scratch);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < n; ++c) vt[i * n + c] = vcols[order[i] * n + c];
  return info;
}

template <typename T>
int32_t svd_one(const T* a, T* u, T* s, T* vh, int64_t m, int64_t n, bool full, std::vector<T>& work,
                std::vector<T>& scratch, std::vector<T>& cols) {
  const int64_t k = std::min(m, n);
  const bool want = u != nullptr;
  if (m >= n) {
    // Columns of A as rows of wt.
    cols.resize(m * n + n * n);
    T* wt = cols.data();
    T* vt = wt + m * n;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) wt[c * m + r] = a[r * n + c];
    const int64_t ucols = full ? m : k;
    const int32_t info = svd_tall(wt, s, u, ucols, want ? vt : nullptr, m, n, work, scratch);
    if (want) std::copy(vt, vt + n * n, vh);  // vh is [n, n] either way when m >= n
    return info;
  }
  // A wide: Aᵀ = U' S V'ᵀ, so A = V' S U'ᵀ: U = V' (m x m), Vh = U'ᵀ.
  cols.resize(m * n + m * m + n * n);
  T* wt = cols.data();  // columns of Aᵀ = rows of A
  T* vt = wt + m * n;
  T* up = vt + m * m;  // U' [n, ucols']
  std::copy(a, a + m * n, wt);
  const int64_t vrows = full ? n : k;
  const int32_t info = svd_tall(wt, s, want ? up : nullptr, vrows, want ? vt : nullptr, n, m, work, scratch);
  if (!want) return info;
  for (int64_t r = 0; r < m; ++r)  // U = V' = vtᵀ
    for (int64_t c = 0; c < m; ++c) u[r * m + c] = vt[c * m + r];
  for (int64_t r = 0; r < vrows; ++r)  // Vh = U'ᵀ
    for (int64_t c = 0; c < n; ++c) vh[r * n + c] = up[c * vrows + r];
  return info;
}

}  // namespace

void lu_factor(DType dtype, void* a, int32_t* pivots, int32_t* info, int64_t batch, int64_t m, int64_t n) {
  dispatch(dtype, "lu_factor", [&](auto tag) {
    using T = decltype(tag);
    const int64_t k = std::min(m, n);
    per_matrix(batch, [&](int64_t b) { lu_factor_one(static_cast<T*>(a) + b * m * n, pivots + b * k, info + b, m, n); });
  });
}

void lu_solve(DType dtype, const void* lu, const int32_t* pivots, void* b, int64_t batch, int64_t n, int64_t k) {
  dispatch(dtype, "lu_solve", [&](auto tag) {
    using T = decltype(tag);
    per_matrix(batch, [&](int64_t i) {
      lu_solve_one(static_cast<const T*>(lu) + i * n * n, pivots + i * n, static_cast<T*>(b) + i * n * k, n, k);
    });
  });
}

void triangular_solve(DType dtype, const void* a, void* b, int64_t batch, int64_t n, int64_t k, bool upper,
                      bool unit) {
  dispatch(dtype, "solve_triangular", [&](auto tag) {
    using T = decltype(tag);
    per_matrix(batch, [&](int64_t i) {
      triangular_solve_one(static_cast<const T*>(a) + i * n * n, static_cast<T*>(b) + i * n * k, n, k, upper, unit);
    });
  });
}

void cholesky(DType dtype, void* a, int32_t* info, int64_t batch, int64_t n) {
  dispatch(dtype, "cholesky", [&](auto tag) {
    using T = decltype(tag);
    per_matrix(batch, [&](int64_t b) { info[b] = cholesky_one(static_cast<T*>(a) + b * n * n, n); });
  });
}

void householder_qr(DType dtype, const void* a, void* q, void* r, int64_t batch, int64_t m, int64_t n, bool complete) {
  dispatch(dtype, "qr", [&](auto tag) {
    using T = decltype(tag);
    const int64_t k = std::min(m, n), rrows = complete ? m : k, qcols = complete ? m : k;
    per_matrix(batch, [&](int64_t b) {
      thread_local std::vector<T> work;
      householder_one(static_cast<const T*>(a) + b * m * n, q ? static_cast<T*>(q) + b * m * qcols : nullptr,
                      static_cast<T*>(r) + b * rrows * n, m, n, complete, work);
    });
  });
}

void eigh(DType dtype, void* a, void* w, void* v, int32_t* info, int64_t batch, int64_t n) {
  dispatch(dtype, "eigh", [&](auto tag) {
    using T = decltype(tag);
    per_matrix(batch, [&](int64_t b) {
      thread_local std::vector<T> work;
      info[b] = eigh_one(static_cast<T*>(a) + b * n * n, static_cast<T*>(w) + b * n,
                         v ? static_cast<T*>(v) + b * n * n : nullptr, n, work);
    });
  });
}

void svd(DType dtype, const void* a, void* u, void* s, void* vh, int32_t* info, int64_t batch, int64_t m, int64_t n,
         bool full) {
  dispatch(dtype, "svd", [&](auto tag) {
    using T = decltype(tag);
    const int64_t k = std::min(m, n), ucols = full ? m : k, vrows = full ? n : k;
    per_matrix(batch, [&](int64_t b) {
      thread_local std::vector<T> work, scratch, cols;
      info[b] = svd_one(static_cast<const T*>(a) + b * m * n, u ? static_cast<T*>(u) + b * m * ucols : nullptr,
                        static_cast<T*>(s) + b * k, vh ? static_cast<T*>(vh) + b * vrows * n : nullptr, m, n, full,
                        work, scratch, cols);
    });
  });
}

}  // namespace colony::kernels::cpu
