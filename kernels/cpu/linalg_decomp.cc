#include "kernels/cpu/linalg_decomp.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/cpu/linalg_householder.h"

namespace colony::kernels::cpu {
namespace {

using namespace linalg_internal;  // NOLINT: the shared pieces of the linalg kernels

template <typename T>
void lu_factor_one(T* a, int32_t* piv, int32_t* info, int64_t m, int64_t n, bool pivot) {
  const int64_t k = std::min(m, n);
  *info = 0;
  for (int64_t j0 = 0; j0 < k; j0 += kBlock) {
    const int64_t jb = std::min(kBlock, k - j0), j1 = j0 + jb;
    // The panel: columns [j0, j1) below row j0, rows swapped across the whole width (dlaswp).
    const int64_t panel_end = k <= kBlock ? n : j1;
    for (int64_t j = j0; j < j1; ++j) {
      int64_t p = j;
      T best = std::abs(a[j * n + j]);
      for (int64_t i = j + 1; pivot && i < m; ++i) {
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
    // L21 = A21 L11^-T, as L11 L21ᵀ = A21ᵀ on a transposed copy: the forward substitution then
    // runs along rows of n - j1 entries (vectorized) instead of as one running sum per entry
    // (same operations, same order): about a third of the time at n = 256 before, 618 -> 439 us.
    const int64_t rows = n - j1;
    if (rows > 0) {
      thread_local std::vector<T> l21t;
      l21t.resize(jb * rows);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < jb; ++j) l21t[j * rows + i] = a[(j1 + i) * n + j0 + j];
      trsm_left(a11, n, l21t.data(), jb, rows, /*upper=*/false, /*unit=*/false);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < jb; ++j) a[(j1 + i) * n + j0 + j] = l21t[j * rows + i];
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
  accumulate_reflectors(vs, tau, m, k, q, complete ? m : k);
}

}  // namespace

void lu_factor(DType dtype, void* a, int32_t* pivots, int32_t* info, int64_t batch, int64_t m, int64_t n,
               bool pivot) {
  dispatch(dtype, "lu_factor", [&](auto tag) {
    using T = decltype(tag);
    const int64_t k = std::min(m, n);
    per_matrix(batch, [&](int64_t b) {
      lu_factor_one(static_cast<T*>(a) + b * m * n, pivots + b * k, info + b, m, n, pivot);
    });
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

}  // namespace colony::kernels::cpu
