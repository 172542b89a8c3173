// colony::linalg's eigh and svd past one 32-column panel (kernels/cpu/linalg_eigh.cc and
// linalg_svd.cc: tridiagonal and bidiagonal reductions, then QL / Golub-Kahan QR): eigenvalues,
// singular values and gradients against torch's (linalg_spectral_golden.py), the identities
// A = V diag(w) Vᵀ and A = U diag(s) Vh with orthonormal factors, repeated and clustered
// eigenvalues, rank-deficient matrices, float32 and float64, batches. The smaller cases, errors and
// gradchecks are linalg_decomp_test.cc's.
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/autograd.h"
#include "autograd/linalg.h"
#include "tests/autograd/linalg_spectral_golden.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::matches_values;
namespace G = linalg_spectral_golden;

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }
Tensor eye_like(const Tensor& a) { return raw::expand(raw::eye(a.size(-1), -1, TensorOptions(a.dtype())), a.sizes()); }

// G(shape)[i] = frac((i + offset) * golden ratio) - 0.5 over the flattened shape, and
// M = G + 2 G(offset 11)^2 (G alone is nearly of low rank), as the golden script builds its inputs.
std::vector<double> golden_values(int64_t count, int64_t offset) {
  std::vector<double> v(count);
  for (int64_t i = 0; i < count; ++i) {
    double whole;
    v[i] = std::modf(static_cast<double>(i + offset) * 0.6180339887498949, &whole) - 0.5;
  }
  return v;
}
Tensor golden(Shape shape, DType dtype = kFloat64, int64_t offset = 0) {
  return raw::to(raw::from_vector(golden_values(shape_numel(shape), offset), shape), kCPU, dtype);
}
Tensor mixed(Shape shape, DType dtype = kFloat64) {
  std::vector<double> v = golden_values(shape_numel(shape), 0);
  const std::vector<double> w = golden_values(shape_numel(shape), 11);
  for (size_t i = 0; i < v.size(); ++i) v[i] = v[i] + 2 * (w[i] * w[i]);
  return raw::to(raw::from_vector(v, shape), kCPU, dtype);
}
Tensor symmetric(Shape shape, DType dtype = kFloat64) {
  Tensor x = mixed(shape);
  return raw::to(raw::contiguous(add(x, mT(x))), kCPU, dtype);
}
// The Frobenius norm of one matrix of x (the largest of a batch), the scale of the backward
// errors the decompositions promise.
double norm_of(const Tensor& x) {
  const std::vector<double> v = testing::values(x);
  const size_t per = static_cast<size_t>(x.size(-1) * x.size(-2));
  double best = 0;
  for (size_t b = 0; per > 0 && b < v.size(); b += per) {
    double s = 0;
    for (size_t i = b; i < b + per; ++i) s += v[i] * v[i];
    best = std::max(best, std::sqrt(s));
  }
  return best;
}
// The identity of p's (square) shape.
Tensor eye_of(const Tensor& p) { return raw::expand(raw::eye(p.size(-1), -1, TensorOptions(p.dtype())), p.sizes()); }

// V diag(w) Vᵀ = A and VᵀV = I to tol relative to A's largest entry.
::testing::AssertionResult eigh_identities(const Tensor& a, double tol) {
  auto [w, v] = linalg::eigh(a);
  const double scale = norm_of(a);
  auto r = all_close(matmul(mul(v, unsqueeze(w, -2)), mT(v)), a, 0, tol * scale);
  if (!r) return r << " (reconstruction)";
  r = all_close(matmul(mT(v), v), eye_like(v), 0, tol);
  if (!r) return r << " (orthogonality)";
  // Ascending.
  const std::vector<double> wv = testing::values(w);
  const int64_t n = a.size(-1);
  for (size_t i = 0; i + 1 < wv.size(); ++i)
    if ((i + 1) % n != 0 && wv[i] > wv[i + 1]) return ::testing::AssertionFailure() << "eigenvalue " << i << " > the next";
  return ::testing::AssertionSuccess();
}

// U diag(S) Vh = A, UᵀU = I, Vh Vhᵀ = I (full and reduced) to tol relative to A's largest entry;
// S descending and nonnegative.
::testing::AssertionResult svd_identities(const Tensor& a, double tol) {
  const double scale = norm_of(a);
  for (bool full : {false, true}) {
    auto [u, s, vh] = linalg::svd(a, full);
    const int64_t k = s.size(-1);
    Tensor uk = narrow(u, -1, 0, k), vk = narrow(vh, -2, 0, k);
    auto r = all_close(matmul(mul(uk, unsqueeze(s, -2)), vk), a, 0, tol * scale);
    if (!r) return r << " (reconstruction, full " << full << ")";
    r = all_close(matmul(mT(u), u), eye_of(matmul(mT(u), u)), 0, tol);
    if (!r) return r << " (U orthogonal, full " << full << ")";
    r = all_close(matmul(vh, mT(vh)), eye_of(matmul(vh, mT(vh))), 0, tol);
    if (!r) return r << " (Vh orthogonal, full " << full << ")";
    const std::vector<double> sv = testing::values(s);
    for (size_t i = 0; i < sv.size(); ++i) {
      if (sv[i] < 0) return ::testing::AssertionFailure() << "singular value " << i << " negative";
      if ((i + 1) % k != 0 && i + 1 < sv.size() && sv[i] < sv[i + 1])
        return ::testing::AssertionFailure() << "singular value " << i << " < the next";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(LinalgSpectral, EighLargeMatchesTorch) {
  const Tensor a = symmetric({100, 100});
  EXPECT_TRUE(matches_values(linalg::eigvalsh(a), G::kEigvalsh100.values, 1e-12));
  EXPECT_TRUE(matches_values(std::get<0>(linalg::eigh(a)), G::kEigvalsh100.values, 1e-12));
  EXPECT_TRUE(eigh_identities(a, 1e-13));
  // float32: eigenvalues to float32's rounding of a matrix of norm ~16.
  const Tensor a32 = symmetric({100, 100}, kFloat32);
  EXPECT_TRUE(matches_values(linalg::eigvalsh(a32), G::kEigvalsh100F32.values, 2e-5));
  EXPECT_TRUE(eigh_identities(a32, 5e-6));
  EXPECT_EQ(linalg::eigvalsh(a32).dtype(), kFloat32);
  // 200 x 200, both dtypes; UPLO "U" reads the upper triangle alone.
  EXPECT_TRUE(eigh_identities(symmetric({200, 200}), 1e-13));
  EXPECT_TRUE(eigh_identities(symmetric({200, 200}, kFloat32), 1e-5));
  Tensor upper_only = add(raw::triu(a), raw::tril(raw::full({100, 100}, 100.0, kFloat64), -1));
  EXPECT_TRUE(matches_values(linalg::eigvalsh(upper_only, "U"), G::kEigvalsh100.values, 1e-12));
}

TEST(LinalgSpectral, EighBatchedMatchesTorchWithGradient) {
  Tensor a = symmetric({3, 40, 40}).requires_grad_();
  Tensor l = linalg::eigvalsh(a);
  EXPECT_TRUE(matches_values(l, G::kEigvalshBatch.values, 1e-12));
  sum(mul(l, golden({3, 40}, kFloat64, 7))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kEigvalshBatchGrad.values, 1e-10));
  EXPECT_TRUE(eigh_identities(symmetric({3, 40, 40}), 1e-13));
  // Each batch element as computed alone.
  auto [w, v] = linalg::eigh(symmetric({3, 40, 40}));
  EXPECT_TRUE(all_close(raw::select(w, 0, 1), linalg::eigvalsh(raw::select(symmetric({3, 40, 40}), 0, 1)), 0, 0));
}

TEST(LinalgSpectral, EighRepeatedAndClusteredEigenvalues) {
  // Q diag(w) Qᵀ with Q orthogonal (QR of a golden matrix) and w repeated (1 three times, 2 five
  // times), clustered (3 + 1e-9 i) and zero, n = 64.
  const int64_t n = 64;
  std::vector<double> w(n);
  for (int64_t i = 0; i < n; ++i)
    w[i] = i < 3 ? 1.0 : i < 8 ? 2.0 : i < 20 ? 3.0 + 1e-9 * static_cast<double>(i) : i < 24 ? 0.0 : static_cast<double>(i);
  const Tensor q = std::get<0>(linalg::qr(golden({n, n})));
  const Tensor wt = raw::from_vector(w, {n});
  const Tensor a = raw::contiguous(matmul(mul(q, unsqueeze(wt, 0)), mT(q)));
  const Tensor sym = raw::contiguous(mul(add(a, mT(a)), 0.5));
  std::vector<double> sorted = w;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_TRUE(matches_values(linalg::eigvalsh(sym), sorted, 1e-12 * n));
  EXPECT_TRUE(eigh_identities(sym, 1e-13));
  // Already diagonal, the identity, zero: nothing to reduce.
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::tensor({{3.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 2.0}}, kFloat64)), {1, 2, 3}, 0));
  EXPECT_TRUE(eigh_identities(raw::eye(50, 50, TensorOptions(kFloat64)), 0));
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::zeros({40, 40}, TensorOptions(kFloat64))), std::vector<double>(40, 0.0), 0));
  // A matrix of all ones: eigenvalues 0 (n - 1 times) and n.
  std::vector<double> ones_w(n, 0.0);
  ones_w[n - 1] = static_cast<double>(n);
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::full({n, n}, 1.0, kFloat64)), ones_w, 1e-12 * n));
  EXPECT_TRUE(eigh_identities(raw::full({n, n}, 1.0, kFloat64), 1e-13));
}

TEST(LinalgSpectral, SvdLargeMatchesTorch) {
  const Tensor tall = mixed({120, 100}), wide = mixed({70, 130});
  EXPECT_TRUE(matches_values(linalg::svdvals(tall), G::kSvdvalsTall.values, 1e-11));
  EXPECT_TRUE(matches_values(linalg::svdvals(wide), G::kSvdvalsWide.values, 1e-11));
  EXPECT_TRUE(matches_values(std::get<1>(linalg::svd(tall)), G::kSvdvalsTall.values, 1e-11));
  EXPECT_TRUE(svd_identities(tall, 1e-13));
  EXPECT_TRUE(svd_identities(wide, 1e-13));
  EXPECT_TRUE(svd_identities(mixed({200, 200}), 1e-13));
  const Tensor tall32 = mixed({120, 100}, kFloat32), wide32 = mixed({70, 130}, kFloat32);
  EXPECT_TRUE(matches_values(linalg::svdvals(tall32), G::kSvdvalsTallF32.values, 2e-5));
  EXPECT_TRUE(matches_values(linalg::svdvals(wide32), G::kSvdvalsWideF32.values, 2e-5));
  EXPECT_TRUE(svd_identities(tall32, 5e-6));
  EXPECT_TRUE(svd_identities(wide32, 5e-6));
  EXPECT_EQ(linalg::svdvals(tall32).dtype(), kFloat32);
}

TEST(LinalgSpectral, SvdBatchedAndGradient) {
  Tensor a = mixed({50, 40}).requires_grad_();
  Tensor s = linalg::svdvals(a);
  EXPECT_TRUE(matches_values(s, G::kSvdvals50x40.values, 1e-12));
  sum(mul(s, golden({40}, kFloat64, 7))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kSvdvals50x40Grad.values, 1e-10));
  const Tensor batch = mixed({3, 45, 60});
  EXPECT_TRUE(svd_identities(batch, 1e-13));
  EXPECT_TRUE(svd_identities(mT(batch), 1e-13));
  EXPECT_TRUE(all_close(raw::select(linalg::svdvals(batch), 0, 2), linalg::svdvals(raw::select(batch, 0, 2)), 0, 0));
}

TEST(LinalgSpectral, SvdRankDeficient) {
  // Rank 10 (100 x 10 times 10 x 80): 10 singular values, then ones of rounding size; the full
  // bases stay orthonormal.
  const Tensor a = raw::contiguous(matmul(mixed({100, 10}), mixed({10, 80})));
  const std::vector<double> s = testing::values(linalg::svdvals(a));
  EXPECT_GT(s[9], 1e-3 * s[0]);
  for (size_t i = 10; i < s.size(); ++i) EXPECT_LT(s[i], 1e-13 * s[0]) << i;
  EXPECT_TRUE(svd_identities(a, 1e-13));
  EXPECT_TRUE(svd_identities(mT(a), 1e-13));
  // Zero, and a matrix with an exactly zero column between nonzero ones.
  EXPECT_TRUE(svd_identities(raw::zeros({40, 35}, TensorOptions(kFloat64)), 0));
  Tensor holed = raw::contiguous(mixed({60, 50}));
  raw::narrow(holed, 1, 20, 1).fill_(0.0);
  EXPECT_TRUE(svd_identities(holed, 1e-13));
  EXPECT_LT(testing::values(linalg::svdvals(holed)).back(), 1e-13);
}

TEST(LinalgSpectral, SmallestShapes) {
  // 1 x 1, 2 x 2 (no reflector) and 3 x 3 (one), vectors 1 x n and n x 1: the reductions' edges.
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::full({1, 1}, -2.0, kFloat64)), {-2.0}, 0));
  EXPECT_TRUE(eigh_identities(raw::tensor({{2.0, 1.0}, {1.0, 2.0}}, kFloat64), 1e-15));
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::tensor({{2.0, 1.0}, {1.0, 2.0}}, kFloat64)), {1.0, 3.0}, 1e-15));
  EXPECT_TRUE(eigh_identities(symmetric({3, 3}), 1e-15));
  for (Shape sh : {Shape{1, 1}, Shape{1, 5}, Shape{5, 1}, Shape{2, 2}, Shape{2, 3}, Shape{3, 2}, Shape{33, 1}, Shape{1, 33}})
    EXPECT_TRUE(svd_identities(mixed(sh), 1e-14)) << shape_str(sh);
  EXPECT_TRUE(matches_values(linalg::svdvals(raw::tensor({{3.0, 4.0}}, kFloat64)), {5.0}, 1e-15));
}

TEST(LinalgSpectral, SizesAroundThePanels) {
  // The tridiagonal reduction takes 32-column panels while more than 64 columns are left, and the
  // orthogonal factors are formed in panels past 32 reflectors: sizes on each side of both.
  for (int64_t n : {31, 32, 33, 34, 63, 64, 65, 66, 97, 130}) {
    EXPECT_TRUE(eigh_identities(symmetric({n, n}), 1e-13)) << n;
    EXPECT_TRUE(eigh_identities(symmetric({n, n}, kFloat32), 1e-5)) << n;
    EXPECT_TRUE(svd_identities(mixed({n, n}), 1e-13)) << n;
    EXPECT_TRUE(svd_identities(mixed({n + 3, n}), 1e-13)) << n;
    EXPECT_TRUE(svd_identities(mixed({n, n + 5}, kFloat32), 1e-5)) << n;
  }
}

TEST(LinalgSpectral, TinyAndHugeEntries) {
  // Entries whose squares underflow or overflow (1e-25 and 1e25 in float32, 1e-200 and 1e200 in
  // float64): scaled into range first, as dsyev and dgesvd do, so the values scale with the input
  // (compared after scaling back).
  const Tensor a = symmetric({50, 50}), b = mixed({60, 50});
  const Tensor a32 = raw::to(a, kCPU, kFloat32), b32 = raw::to(b, kCPU, kFloat32);
  const std::vector<double> w = testing::values(linalg::eigvalsh(a)), s = testing::values(linalg::svdvals(b));
  const std::vector<double> w32 = testing::values(linalg::eigvalsh(a32)), s32 = testing::values(linalg::svdvals(b32));
  for (double f : {1e-200, 1e200}) {
    EXPECT_TRUE(matches_values(mul(linalg::eigvalsh(mul(a, f)), 1 / f), w, 1e-12)) << f;
    EXPECT_TRUE(matches_values(mul(linalg::svdvals(mul(b, f)), 1 / f), s, 1e-12)) << f;
  }
  for (double f : {1e-25, 1e25}) {
    EXPECT_TRUE(matches_values(mul(linalg::eigvalsh(mul(a32, f)), 1 / f), w32, 1e-5)) << f;
    EXPECT_TRUE(matches_values(mul(linalg::svdvals(mul(b32, f)), 1 / f), s32, 1e-5)) << f;
  }
}

TEST(LinalgSpectral, LargeMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device cuda = Device::cuda(0);
  const Tensor a = symmetric({100, 100}), b = mixed({120, 100});
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::to(a, cuda, kFloat64)), G::kEigvalsh100.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::svdvals(raw::to(b, cuda, kFloat64)), G::kSvdvalsTall.values, 1e-11));
  EXPECT_TRUE(svd_identities(raw::to(b, cuda, kFloat64), 1e-13));
}

}  // namespace
}  // namespace colony
