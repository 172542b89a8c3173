// svd (linalg_decomp.h) as LAPACK's dgesvd: Householder reduction to an upper bidiagonal matrix
// (dgebd2), U and V formed from the reflectors (dorgbr, blocked through accumulate_reflectors), then
// Golub and Kahan's implicit-shift QR on the bidiagonal matrix (Golub-Reinsch, as in
// EISPACK's svd) with its rotations applied to U and V, and the singular values sorted descending.
// A wide matrix is decomposed as its transpose. The tall matrix is held as its transpose (its
// columns as rows) and U and V as Uᵀ and Vᵀ, so that the reflections and rotations all run along
// contiguous rows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/linalg_decomp.h"
#include "kernels/cpu/linalg_householder.h"

namespace colony::kernels::cpu {
namespace {

using namespace linalg_internal;  // NOLINT: the shared pieces of the linalg kernels

// QR steps allowed per singular value before reporting no convergence (EISPACK's 30, doubled).
constexpr int kMaxQrIterations = 60;

// Rows x and y (length n) <- (c x + s y, c y - s x).
template <typename T>
void rotate_rows(T* x, T* y, int64_t n, T c, T s) {
  for (int64_t k = 0; k < n; ++k) {
    const T a = x[k], b = y[k];
    x[k] = a * c + b * s;
    y[k] = b * c - a * s;
  }
}

// Rows l .. last + 1 of z (rows of len entries) by the rotations (c[j], s[j]) of rows j, j + 1 for
// j = l .. last in that order, kRotationColumns columns at a time.
template <typename T>
void rotate_chain(T* z, int64_t len, int64_t l, int64_t last, const T* c, const T* s) {
  for (int64_t c0 = 0; c0 < len; c0 += kRotationColumns) {
    const int64_t width = std::min(kRotationColumns, len - c0);
    for (int64_t j = l; j <= last; ++j) rotate_rows(z + j * len + c0, z + (j + 1) * len + c0, width, c[j], s[j]);
  }
}

// Work arrays of one decomposition, kept per thread between matrices.
template <typename T>
struct SvdWork {
  std::vector<T> d, e, tau_u, tau_v, us, vs, dots, ub, vsub;
};

// B = U_Bᵀ A V_B for the tall A (m x n, m >= n) given as wt = Aᵀ (n x m, overwritten): the
// diagonal d [n], the superdiagonal e [n - 1] (e[i] couples columns i and i + 1); the left
// reflectors H_j (rows j.. of A) kept in w.us as an m-row problem, the right ones G_j (columns
// j + 1.. of A) in w.vs as an (n - 1)-row problem, as accumulate_reflectors reads them.
template <typename T>
void bidiagonalize(T* wt, int64_t m, int64_t n, SvdWork<T>& w) {
  const int64_t nv = std::max<int64_t>(n - 1, 1);
  w.d.assign(n, T(0));
  w.e.assign(n, T(0));
  w.tau_u.assign(n, T(0));
  w.tau_v.assign(n, T(0));
  w.us.assign(n * m, T(0));
  w.vs.assign(nv * nv, T(0));
  for (int64_t j = 0; j < n; ++j) {
    // H_j from column j of A below row j (row j of wt), applied to columns j + 1.. of A: each is a
    // row of wt, reflected along its length.
    T* x = wt + j * m + j;
    T beta;
    const T tu = make_reflector(x[0], x + 1, m - j - 1, 1, beta);
    w.d[j] = beta;
    w.tau_u[j] = tu;
    T* u = w.us.data() + j * m + j;
    u[0] = 1;
    std::copy(x + 1, x + (m - j), u + 1);
    if (tu != T(0)) {
      for (int64_t r = j + 1; r < n; ++r) {
        T* row = wt + r * m + j;
        const T dot = dot8(row, u, m - j) * tu;
        for (int64_t i = 0; i < m - j; ++i) row[i] -= dot * u[i];
      }
    }
    if (j + 1 >= n) break;
    // G_j from row j of A right of column j + 1 (column j of wt below row j + 1), applied to rows
    // j + 1.. of A: the rows j + 1.. of wt combined.
    T* y = wt + (j + 1) * m + j;
    const T tv = make_reflector(y[0], y + m, n - j - 2, m, beta);
    w.e[j] = beta;
    w.tau_v[j] = tv;
    T* v = w.vs.data() + j * nv + j;
    v[0] = 1;
    for (int64_t i = 1; i < n - j - 1; ++i) v[i] = y[i * m];
    if (tv != T(0)) reflect_rows(wt + (j + 1) * m + (j + 1), m, v, tv, n - j - 1, m - j - 1, w.dots);
  }
}

// The singular values of the upper bidiagonal (d, e) into d (signed until converged, then made
// nonnegative) by Golub-Kahan QR steps, each step's rotations applied to rows of ut (length m) and
// vt (length n) where they are not null. 0, or 1 when a value took more than kMaxQrIterations.
template <typename T>
int32_t bidiagonal_qr(T* d, T* e, int64_t n, T* ut, int64_t m, T* vt) {
  const T eps = std::numeric_limits<T>::epsilon();
  // rv[i] couples columns i - 1 and i (rv[0] = 0), EISPACK's layout.
  std::vector<T> rv(n, T(0)), rot(4 * n);
  T *cv = rot.data(), *sv = cv + n, *cu = sv + n, *su = cu + n;  // one sweep's rotations, for V and U
  for (int64_t i = 1; i < n; ++i) rv[i] = e[i - 1];
  T anorm = 0;
  for (int64_t i = 0; i < n; ++i) anorm = std::max(anorm, std::abs(d[i]) + std::abs(rv[i]));
  const T tol = eps * anorm;
  for (int64_t k = n - 1; k >= 0; --k) {
    for (int iteration = 0;; ++iteration) {
      // Split at the first l (from k down) whose rv[l] is negligible; if d[l - 1] is negligible
      // instead, rv[l] is chased out by rotations from the left.
      int64_t l = k;
      bool cancel = true;
      for (; l >= 0; --l) {
        if (l == 0 || std::abs(rv[l]) <= tol) {
          cancel = false;
          break;
        }
        if (std::abs(d[l - 1]) <= tol) break;
      }
      if (cancel) {
        const int64_t nm = l - 1;
        T c = 0, s = 1;
        for (int64_t i = l; i <= k; ++i) {
          const T f = s * rv[i];
          rv[i] = c * rv[i];
          if (std::abs(f) <= tol) break;
          const T g = d[i];
          const T h = pythag(f, g);
          d[i] = h;
          c = g / h;
          s = -f / h;
          if (ut != nullptr) rotate_rows(ut + nm * m, ut + i * m, m, c, s);
        }
      }
      const T z = d[k];
      if (l == k) {
        if (z < T(0)) {
          d[k] = -z;
          if (vt != nullptr)
            for (int64_t c = 0; c < n; ++c) vt[k * n + c] = -vt[k * n + c];
        }
        break;
      }
      if (iteration == kMaxQrIterations) return 1;
      // The shift: the eigenvalue of the trailing 2 x 2 of BᵀB nearer its last diagonal entry.
      T x = d[l];
      const int64_t nm = k - 1;
      T y = d[nm], g = rv[nm], h = rv[k];
      T f = ((y - z) * (y + z) + (g - h) * (g + h)) / (T(2) * h * y);
      g = pythag(f, T(1));
      f = ((x - z) * (x + z) + h * ((y / (f + std::copysign(g, f))) - h)) / x;
      T c = 1, s = 1;
      for (int64_t j = l; j <= nm; ++j) {
        const int64_t i = j + 1;
        g = rv[i];
        y = d[i];
        h = s * g;
        g = c * g;
        T zz = pythag(f, h);
        rv[j] = zz;
        c = f / zz;
        s = h / zz;
        f = x * c + g * s;
        g = g * c - x * s;
        h = y * s;
        y *= c;
        cv[j] = c;
        sv[j] = s;
        zz = pythag(f, h);
        d[j] = zz;
        if (zz != T(0)) {  // otherwise any rotation will do: keep the last
          c = f / zz;
          s = h / zz;
        }
        f = c * g + s * y;
        x = c * y - s * g;
        cu[j] = c;
        su[j] = s;
      }
      if (vt != nullptr) rotate_chain(vt, n, l, nm, cv, sv);
      if (ut != nullptr) rotate_chain(ut, m, l, nm, cu, su);
      rv[l] = 0;
      rv[k] = f;
      d[k] = x;
    }
  }
  return 0;
}

// The SVD of the tall A (m x n, m >= n) given as wt = Aᵀ (overwritten): s [n] descending and,
// when ut is not null, ut [ucols, m] = the first ucols columns of U as rows and vt [n, n] = Vᵀ.
template <typename T>
int32_t svd_tall(T* wt, int64_t m, int64_t n, T* s, T* ut, int64_t ucols, T* vt, SvdWork<T>& w) {
  T amax = 0;
  for (int64_t i = 0; i < m * n; ++i) amax = std::max(amax, std::abs(wt[i]));
  const T scale = range_scale(amax);
  if (scale != T(1))
    for (int64_t i = 0; i < m * n; ++i) wt[i] *= scale;
  bidiagonalize(wt, m, n, w);
  const bool want = ut != nullptr;
  if (want) {
    w.ub.resize(m * ucols);
    accumulate_reflectors(w.us.data(), w.tau_u.data(), m, n, w.ub.data(), ucols);  // U_B [m, ucols]
    for (int64_t c = 0; c < ucols; ++c)
      for (int64_t r = 0; r < m; ++r) ut[c * m + r] = w.ub[r * ucols + c];
    // V_B = diag(1, G_0 ... G_{n-2}), written as its transpose.
    const int64_t nv = n - 1;
    std::fill(vt, vt + n * n, T(0));
    vt[0] = 1;
    if (nv > 0) {
      w.vsub.resize(nv * nv);
      accumulate_reflectors(w.vs.data(), w.tau_v.data(), nv, nv, w.vsub.data(), nv);
      for (int64_t i = 1; i < n; ++i)
        for (int64_t r = 1; r < n; ++r) vt[i * n + r] = w.vsub[(r - 1) * nv + (i - 1)];
    }
  }
  T* d = w.d.data();
  const int32_t info = bidiagonal_qr(d, w.e.data(), n, want ? ut : nullptr, m, want ? vt : nullptr);
  // Descending, by selection: each swap moves a row of Uᵀ and of Vᵀ.
  for (int64_t i = 0; i + 1 < n; ++i) {
    int64_t k = i;
    for (int64_t j = i + 1; j < n; ++j)
      if (d[j] > d[k]) k = j;
    if (k == i) continue;
    std::swap(d[i], d[k]);
    if (want) {
      std::swap_ranges(ut + i * m, ut + (i + 1) * m, ut + k * m);
      std::swap_ranges(vt + i * n, vt + (i + 1) * n, vt + k * n);
    }
  }
  for (int64_t i = 0; i < n; ++i) s[i] = d[i] / scale;
  return info;
}

template <typename T>
int32_t svd_one(const T* a, T* u, T* s, T* vh, int64_t m, int64_t n, bool full) {
  thread_local SvdWork<T> w;
  thread_local std::vector<T> wt, ut, vt;
  const bool want = u != nullptr;
  if (m >= n) {
    wt.resize(m * n);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) wt[c * m + r] = a[r * n + c];
    const int64_t ucols = full ? m : n;
    if (want) ut.resize(ucols * m);
    // vh is [n, n] either way when m >= n: Vᵀ is written there directly.
    const int32_t info = svd_tall(wt.data(), m, n, s, want ? ut.data() : nullptr, ucols, vh, w);
    if (want)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < ucols; ++c) u[r * ucols + c] = ut[c * m + r];
    return info;
  }
  // A wide: Aᵀ = U' S V'ᵀ, so A = V' S U'ᵀ: U = V' (m x m), Vh = U'ᵀ, which svd_tall writes as its
  // rows directly; Aᵀ's transpose is A itself.
  wt.assign(a, a + m * n);
  const int64_t vrows = full ? n : m;
  if (want) vt.resize(m * m);
  const int32_t info = svd_tall(wt.data(), n, m, s, want ? vh : nullptr, vrows, want ? vt.data() : nullptr, w);
  if (want)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < m; ++c) u[r * m + c] = vt[c * m + r];
  return info;
}

}  // namespace

void svd(DType dtype, const void* a, void* u, void* s, void* vh, int32_t* info, int64_t batch, int64_t m, int64_t n,
         bool full) {
  dispatch(dtype, "svd", [&](auto tag) {
    using T = decltype(tag);
    const int64_t k = std::min(m, n), ucols = full ? m : k, vrows = full ? n : k;
    per_matrix(batch, [&](int64_t b) {
      info[b] = svd_one(static_cast<const T*>(a) + b * m * n, u ? static_cast<T*>(u) + b * m * ucols : nullptr,
                        static_cast<T*>(s) + b * k, vh ? static_cast<T*>(vh) + b * vrows * n : nullptr, m, n, full);
    });
  });
}

}  // namespace colony::kernels::cpu
