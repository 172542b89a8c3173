// eigh (linalg_decomp.h) as LAPACK's dsyev: Householder reduction to a tridiagonal matrix (dsytrd:
// panels of kBlock columns through dlatrd's rank-2k update, the last 64 columns by dsytd2),
// Q formed from the reflectors (dorgtr, blocked through accumulate_reflectors), then the implicit
// QL iteration with Wilkinson's shift on the tridiagonal matrix (EISPACK's tql2, as dsteqr),
// its rotations applied to Q, and the eigenvalues sorted ascending. The eigenvectors are held as
// the rows of Qᵀ throughout, so that both the reflections and the rotations run along contiguous
// rows; they are transposed into v's columns at the end.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/linalg_decomp.h"
#include "kernels/cpu/linalg_householder.h"

namespace colony::kernels::cpu {
namespace {

using namespace linalg_internal;  // NOLINT: the shared pieces of the linalg kernels

// QL iterations allowed per eigenvalue before reporting no convergence (tql2's and dsteqr's 30,
// doubled: it costs nothing where the iteration converges, as it does in 1-3 for nearly all).
constexpr int kMaxQlIterations = 60;

// The symmetric product p = A22 v along A22's rows (A22: len x len, leading dimension n).
template <typename T>
void symmetric_times(const T* a22, int64_t n, int64_t len, const T* v, T* p) {
  std::fill(p, p + len, T(0));
  for (int64_t i = 0; i < len; ++i) {
    const T* row = a22 + i * n;
    const T vi = v[i];
    for (int64_t c = 0; c < len; ++c) p[c] += vi * row[c];
  }
}

// Columns [j0, j0 + kBlock) of the reduction as LAPACK's dlatrd does them: the panel's reflectors
// are built against A - V Wᵀ - W Vᵀ without updating A (V the panel's vectors, W the products
// tau (A v - ...) of each), then A's trailing rows and columns from j0 + kBlock take the rank-2k
// update A -= V Wᵀ + W Vᵀ through two products (full storage), where half of the reduction's
// operations then run at GEMM's speed instead of along A's rows one reflector at a time.
template <typename T>
void tridiagonal_panel(T* a, int64_t n, int64_t j0, T* d, T* e, T* vs, T* tau, std::vector<T>& p,
                       std::vector<T>& panel) {
  const int64_t m = n - 1, nb = kBlock, j1 = j0 + nb;
  panel.assign(2 * n * nb, T(0));
  T* vp = panel.data();  // V [n, nb]: column i holds reflector j0 + i from its row j0 + i + 1 on
  T* wp = vp + n * nb;   // W [n, nb], alike
  p.resize(n);
  std::vector<T> wv(nb), vv(nb);
  for (int64_t i = 0; i < nb; ++i) {
    const int64_t j = j0 + i;
    T* row = a + j * n;
    // Row j from the diagonal on, brought up to date with the panel's earlier reflectors.
    for (int64_t q = 0; q < i; ++q) {
      const T vj = vp[j * nb + q], wj = wp[j * nb + q];
      for (int64_t c = j; c < n; ++c) row[c] -= vj * wp[c * nb + q] + wj * vp[c * nb + q];
    }
    T* x = row + j + 1;
    const int64_t len = n - j - 1;
    T beta;
    const T t = make_reflector(x[0], x + 1, len - 1, 1, beta);
    d[j] = row[j];
    e[j] = beta;
    tau[j] = t;
    T* v = vs + j * m + j;
    v[0] = 1;
    std::copy(x + 1, x + len, v + 1);
    for (int64_t r = 0; r < len; ++r) vp[(j + 1 + r) * nb + i] = v[r];
    if (t == T(0)) continue;  // W's column stays zero: no update
    // w = tau (A22 - V Wᵀ - W Vᵀ) v - (tau² vᵀ(...)v / 2) v, A22 as of the panel's start.
    T* pw = p.data();
    symmetric_times(a + (j + 1) * n + (j + 1), n, len, v, pw);
    std::fill(wv.begin(), wv.end(), T(0));
    std::fill(vv.begin(), vv.end(), T(0));
    for (int64_t r = 0; r < len; ++r) {
      const T* vr = vp + (j + 1 + r) * nb;
      const T* wr = wp + (j + 1 + r) * nb;
      for (int64_t q = 0; q < i; ++q) {
        wv[q] += wr[q] * v[r];
        vv[q] += vr[q] * v[r];
      }
    }
    for (int64_t r = 0; r < len; ++r) {
      const T* vr = vp + (j + 1 + r) * nb;
      const T* wr = wp + (j + 1 + r) * nb;
      T corr = 0;
      for (int64_t q = 0; q < i; ++q) corr += vr[q] * wv[q] + wr[q] * vv[q];
      pw[r] -= corr;
    }
    T dot = 0;
    for (int64_t r = 0; r < len; ++r) {
      pw[r] *= t;
      dot += pw[r] * v[r];
    }
    const T half = T(0.5) * t * dot;
    for (int64_t r = 0; r < len; ++r) wp[(j + 1 + r) * nb + i] = pw[r] - half * v[r];
  }
  const int64_t rows = n - j1;
  T* a22 = a + j1 * n + j1;
  gemm_sub(rows, rows, nb, vp + j1 * nb, nb, wp + j1 * nb, nb, a22, n, /*b_col_major=*/true);
  gemm_sub(rows, rows, nb, wp + j1 * nb, nb, vp + j1 * nb, nb, a22, n, /*b_col_major=*/true);
}

// Past this many rows and columns left, the reduction takes a panel of kBlock at a time
// (tridiagonal_panel); the last ones go one reflector at a time, as LAPACK's dsytrd leaves its last
// columns to dsytd2.
constexpr int64_t kTridiagonalUnblocked = 64;

// T = Qᵀ A Q for the symmetric a (n x n, both triangles, overwritten): the diagonal d [n], the
// off-diagonal e [n - 1] (e[i] couples i and i + 1), and the reflectors H_0 ... H_{n-3}: reflector
// j acts on rows j + 1 .. n - 1 and is kept in vs as an (n - 1)-row problem (vs + j (n - 1), from
// its row j on, zeros above) with tau[j]. Row j of a is column j below the diagonal, so the
// reflector is built from it in place. Panels of kBlock columns first (tridiagonal_panel) while
// more than kTridiagonalUnblocked are left, then one reflector at a time: each step's product
// p = tau A22 v and its rank-2 update A22 -= v wᵀ + w vᵀ (full storage) along A22's rows.
template <typename T>
void tridiagonalize(T* a, int64_t n, T* d, T* e, T* vs, T* tau, std::vector<T>& p) {
  const int64_t m = n - 1;
  thread_local std::vector<T> panel;
  int64_t j0 = 0;
  for (; n - j0 > kTridiagonalUnblocked; j0 += kBlock) tridiagonal_panel(a, n, j0, d, e, vs, tau, p, panel);
  for (int64_t j = j0; j + 2 < n; ++j) {
    T* x = a + j * n + j + 1;  // A[j, j+1:] = A[j+1:, j]
    const int64_t len = n - j - 1;
    T beta;
    const T t = make_reflector(x[0], x + 1, len - 1, 1, beta);
    d[j] = a[j * n + j];
    e[j] = beta;
    tau[j] = t;
    T* v = vs + j * m + j;
    v[0] = 1;
    std::copy(x + 1, x + len, v + 1);
    if (t == T(0)) continue;
    T* a22 = a + (j + 1) * n + (j + 1);
    p.resize(len);
    // p = tau A22 v as the sum of A22's rows weighted by v (A22 is symmetric): along the rows,
    // with no running sum to serialize.
    T* pw = p.data();
    symmetric_times(a22, n, len, v, pw);
    T vp = 0;
    for (int64_t i = 0; i < len; ++i) {
      pw[i] *= t;
      vp += pw[i] * v[i];
    }
    const T half = T(0.5) * t * vp;
    for (int64_t i = 0; i < len; ++i) pw[i] -= half * v[i];  // w = p - (tau pᵀv / 2) v
    for (int64_t i = 0; i < len; ++i) {
      T* row = a22 + i * n;
      const T vi = v[i], wi = pw[i];
      for (int64_t c = 0; c < len; ++c) row[c] -= vi * pw[c] + wi * v[c];
    }
  }
  if (n >= 2) {
    d[n - 2] = a[(n - 2) * n + n - 2];
    e[n - 2] = a[(n - 2) * n + n - 1];
  }
  d[n - 1] = a[(n - 1) * n + n - 1];
}

// Rows i and i + 1 of zt (length n) <- the rotation of the QL step: (c z_i - s z_{i+1}, s z_i + c z_{i+1}).
template <typename T>
void rotate_rows(T* zi, T* zi1, int64_t n, T c, T s) {
  for (int64_t k = 0; k < n; ++k) {
    const T f = zi1[k], g = zi[k];
    zi1[k] = s * g + c * f;
    zi[k] = c * g - s * f;
  }
}

// The eigenvalues of the symmetric tridiagonal (d, e) into d by implicit QL steps with Wilkinson's
// shift (tql2), each step's rotations applied to the rows of zt (n x n) when it is not null; e is
// destroyed. 0, or 1 when an eigenvalue took more than kMaxQlIterations steps.
template <typename T>
int32_t tridiagonal_ql(T* d, T* e, int64_t n, T* zt, std::vector<T>& cs) {
  const T eps = std::numeric_limits<T>::epsilon();
  e[n - 1] = 0;
  cs.resize(2 * n);
  T* cc = cs.data();
  T* ss = cc + n;
  for (int64_t l = 0; l < n; ++l) {
    int iterations = 0;
    int64_t m;
    do {
      // The first negligible off-diagonal entry from l down splits the matrix there.
      for (m = l; m < n - 1; ++m) {
        if (std::abs(e[m]) <= eps * (std::abs(d[m]) + std::abs(d[m + 1]))) break;
      }
      if (m == l) break;
      if (iterations++ == kMaxQlIterations) return 1;
      // Wilkinson's shift: the eigenvalue of the leading 2 x 2 nearer d[l].
      T g = (d[l + 1] - d[l]) / (T(2) * e[l]);
      T r = pythag(g, T(1));
      g = d[m] - d[l] + e[l] / (g + std::copysign(r, g));
      T s = 1, c = 1, p = 0;
      int64_t i = m - 1;
      bool underflow = false;
      for (; i >= l; --i) {
        const T f = s * e[i], b = c * e[i];
        r = pythag(f, g);
        e[i + 1] = r;
        if (r == T(0)) {  // the bulge vanished: the matrix split, restart from l
          d[i + 1] -= p;
          e[m] = 0;
          underflow = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + T(2) * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        cc[i] = c;
        ss[i] = s;
      }
      if (zt != nullptr) {
        for (int64_t c0 = 0; c0 < n; c0 += kRotationColumns) {
          const int64_t width = std::min(kRotationColumns, n - c0);
          for (int64_t k = m - 1; k > i; --k) rotate_rows(zt + k * n + c0, zt + (k + 1) * n + c0, width, cc[k], ss[k]);
        }
      }
      if (underflow) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0;
    } while (m != l);
  }
  return 0;
}

template <typename T>
int32_t eigh_one(T* a, T* w, T* v, int64_t n) {
  thread_local std::vector<T> work, p, cs;
  const int64_t m = n - 1;
  const bool want = v != nullptr;
  work.assign(3 * n + m * m + (want ? m * m + n * n : 0), T(0));
  T* d = work.data();
  T* e = d + n;
  T* tau = e + n;
  T* vs = tau + n;
  T* qsub = vs + m * m;
  T* zt = qsub + m * m;
  T amax = 0;
  for (int64_t i = 0; i < n * n; ++i) amax = std::max(amax, std::abs(a[i]));
  const T scale = range_scale(amax);
  if (scale != T(1))
    for (int64_t i = 0; i < n * n; ++i) a[i] *= scale;
  tridiagonalize(a, n, d, e, vs, tau, p);
  if (want) {
    // Q = diag(1, H_0 ... H_{n-3}); zt = Qᵀ.
    if (m > 0) accumulate_reflectors(vs, tau, m, std::max<int64_t>(n - 2, 0), qsub, m);
    zt[0] = 1;
    for (int64_t i = 1; i < n; ++i)
      for (int64_t r = 1; r < n; ++r) zt[i * n + r] = qsub[(r - 1) * m + (i - 1)];
  }
  const int32_t info = tridiagonal_ql(d, e, n, want ? zt : nullptr, cs);
  // Ascending, by selection (as dsteqr): each swap moves one eigenvector row.
  for (int64_t i = 0; i + 1 < n; ++i) {
    int64_t k = i;
    for (int64_t j = i + 1; j < n; ++j)
      if (d[j] < d[k]) k = j;
    if (k == i) continue;
    std::swap(d[i], d[k]);
    if (want) std::swap_ranges(zt + i * n, zt + (i + 1) * n, zt + k * n);
  }
  for (int64_t i = 0; i < n; ++i) w[i] = d[i] / scale;
  if (want)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < n; ++i) v[r * n + i] = zt[i * n + r];
  return info;
}

}  // namespace

void eigh(DType dtype, void* a, void* w, void* v, int32_t* info, int64_t batch, int64_t n) {
  dispatch(dtype, "eigh", [&](auto tag) {
    using T = decltype(tag);
    per_matrix(batch, [&](int64_t b) {
      info[b] = eigh_one(static_cast<T*>(a) + b * n * n, static_cast<T*>(w) + b * n,
                         v ? static_cast<T*>(v) + b * n * n : nullptr, n);
    });
  });
}

}  // namespace colony::kernels::cpu
