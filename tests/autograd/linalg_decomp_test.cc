// colony::linalg (autograd/linalg.h) against torch.linalg's values and gradients
// (linalg_decomp_golden.py writes them), float64 gradchecks of every op, the identities the
// decompositions promise, and torch's errors.
#include <cmath>
#include <limits>

#include "autograd/linalg.h"
#include "tests/autograd/gradcheck.h"
#include "tests/autograd/linalg_decomp_golden.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using linalg_golden::GoldenTensor;
using testing::all_close;
using testing::gradcheck;
using testing::gradcheck_multi;
using testing::input;
using testing::matches_values;
using testing::throws_with;
using testing::values;
using In = const std::vector<Tensor>&;
namespace G = linalg_golden;

Tensor T(const GoldenTensor& g, DType dtype = kFloat64) {
  return raw::to(raw::from_vector(g.values, Shape(g.shape.begin(), g.shape.end())), kCPU, dtype);
}
Tensor leaf(const GoldenTensor& g) { return T(g).requires_grad_(); }
Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }
Tensor eye_like(const Tensor& a) { return raw::expand(raw::eye(a.size(-1), -1, TensorOptions(a.dtype())), a.sizes()); }
Tensor sym(const Tensor& x) { return mul(add(x, mT(x)), 0.5); }  // the symmetric part: gradchecks of eigh/cholesky
// A matrix far from singular for gradchecks: x + n I.
Tensor well_conditioned(const Tensor& x) { return add(x, mul(eye_like(x), static_cast<double>(x.size(-1)))); }

TEST(LinalgDecomp, InvMatchesTorch) {
  Tensor a = leaf(G::kInvA);
  Tensor y = linalg::inv(a);
  EXPECT_TRUE(matches_values(y, G::kInvOut.values, 1e-12));
  sum(mul(y, T(G::kInvW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kInvGrad.values, 1e-11));
  EXPECT_TRUE(all_close(matmul(T(G::kInvA), y.detach()), eye_like(y), 1e-12, 1e-12));  // A A^-1 = I
  EXPECT_TRUE(gradcheck([](In in) { return linalg::inv(well_conditioned(in[0])); }, {input({2, 3, 3})}));
  // 1 x 1 and float32.
  EXPECT_TRUE(matches_values(linalg::inv(raw::full({1, 1}, 4.0, kFloat64)), {0.25}));
  EXPECT_TRUE(matches_values(linalg::inv(T(G::kF32A, kFloat32)), G::kF32Inv.values, 2e-5));
  EXPECT_EQ(linalg::inv(T(G::kF32A, kFloat32)).dtype(), kFloat32);
}

TEST(LinalgDecomp, InvErrorsAreTorchs) {
  Tensor singular = raw::tensor({{1.0, 2.0, 3.0}, {2.0, 4.0, 6.0}, {1.0, 0.0, 1.0}}, kFloat64);
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { linalg::inv(singular); },
      "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed because the input matrix "
      "is singular."));
  Tensor batch = raw::stack({raw::eye(3, -1, kFloat64), singular});
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { linalg::inv(batch); },
                                              "linalg.inv: (Batch element 1): The diagonal element 3 is zero"));
  auto [x, info] = linalg::inv_ex(batch);
  EXPECT_TRUE(matches_values(info, {0, 3}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { linalg::inv(raw::zeros({2, 3})); },
                                                 "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { linalg::inv(raw::zeros({3})); },
                                                 "linalg.inv: The input tensor A must have at least 2 dimensions."));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { linalg::inv(raw::eye(3, -1, kInt64)); },
      "linalg.inv: Expected a floating point or complex tensor as input. Got Long"));
}

TEST(LinalgDecomp, DetAndSlogdetMatchTorch) {
  // Batch element 1 is singular (its gradient takes the SVD's cofactor path), element 2 has a
  // negative determinant.
  Tensor a = leaf(G::kDetA);
  Tensor d = linalg::det(a);
  EXPECT_TRUE(matches_values(d, G::kDetOut.values, 1e-10));
  sum(mul(d, T(G::kDetW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kDetGrad.values, 1e-9));
  auto [sign, logabs] = linalg::slogdet(T(G::kDetA));
  // Element 1 is singular in exact arithmetic: torch's LU leaves a pivot of rounding size (sign -1,
  // log|det| -38.2), ours may leave an exact zero (sign 0, -inf); either is the singular answer.
  EXPECT_EQ(values(sign)[0], G::kSlogdetSign.values[0]);
  EXPECT_EQ(values(sign)[2], G::kSlogdetSign.values[2]);
  EXPECT_NEAR(values(logabs)[0], G::kSlogdetLogabs.values[0], 1e-12);
  EXPECT_TRUE(values(logabs)[1] < -20 || std::isinf(values(logabs)[1]));  // torch: -30.8 (rounding), we may hit -inf
  EXPECT_NEAR(values(logabs)[2], G::kSlogdetLogabs.values[2], 1e-12);
  Tensor b = leaf(G::kSlogdetA);
  Tensor l = std::get<1>(linalg::slogdet(b));
  sum(mul(l, raw::narrow(T(G::kDetW), 0, 0, 2))).backward();
  EXPECT_TRUE(matches_values(b.grad(), G::kSlogdetGrad.values, 1e-11));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::det(in[0]); }, {input({2, 3, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return std::get<1>(linalg::slogdet(well_conditioned(in[0]))); }, {input({2, 3, 3})}));
  // The singular path: a rank-2 3 x 3 matrix (rank 1 would make the cofactors themselves zero).
  EXPECT_TRUE(gradcheck([](In in) { return linalg::det(in[0]); },
                        {raw::tensor({{1.0, 2.0, 3.0}, {2.0, 4.0, 6.0}, {1.0, 0.0, 1.0}}, kFloat64).requires_grad_()}));
  EXPECT_TRUE(matches_values(linalg::det(T(G::kF32A, kFloat32)), G::kF32Det.values, 2e-5));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { linalg::det(raw::eye(2, -1, kInt64)); }, "linalg.det: Expected a floating point or complex tensor as input. Got Long"));
}

TEST(LinalgDecomp, SolveMatchesTorch) {
  Tensor a = leaf(G::kSolveA), b = leaf(G::kSolveB);
  Tensor x = linalg::solve(a, b);  // B [3, 2] broadcast over A's batch of 2
  EXPECT_TRUE(matches_values(x, G::kSolveOut.values, 1e-11));
  sum(mul(x, T(G::kSolveW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kSolveGradA.values, 1e-10));
  EXPECT_TRUE(matches_values(b.grad(), G::kSolveGradB.values, 1e-10));
  EXPECT_EQ(b.grad().sizes(), (Shape{3, 2}));
  Tensor xv = linalg::solve(T(G::kSolveA), T(G::kSolveBv));  // B [2, 3]: a batch of vectors
  EXPECT_EQ(xv.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(matches_values(xv, G::kSolveOutV.values, 1e-11));
  EXPECT_TRUE(matches_values(linalg::solve(T(G::kSolveA), T(G::kSolveBr), false), G::kSolveOutRight.values, 1e-11));
  auto f = [](bool left) {
    return [left](In in) { return linalg::solve(well_conditioned(in[0]), in[1], left); };
  };
  EXPECT_TRUE(gradcheck(f(true), {input({2, 3, 3}, -1, 1, 1), input({3, 2}, -1, 1, 2)}));
  EXPECT_TRUE(gradcheck(f(true), {input({2, 3, 3}, -1, 1, 1), input({2, 3}, -1, 1, 2)}));
  EXPECT_TRUE(gradcheck(f(false), {input({2, 3, 3}, -1, 1, 1), input({4, 3}, -1, 1, 2)}));
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { linalg::solve(raw::zeros({3, 3}, kFloat64), raw::ones({3}, kFloat64)); },
      "torch.linalg.solve: The solver failed because the input matrix is singular."));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { linalg::solve(raw::eye(3), raw::ones({4})); },
      "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { linalg::solve(raw::eye(3), raw::ones({3}, kFloat64)); },
      "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Double instead"));
}

TEST(LinalgDecomp, SolveTriangular) {
  Tensor a = raw::tensor({{2.0, 0.0, 0.0}, {1.0, 3.0, 0.0}, {-1.0, 2.0, 4.0}}, kFloat64);
  Tensor b = raw::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, kFloat64);
  EXPECT_TRUE(all_close(matmul(a, linalg::solve_triangular(a, b, false)), b, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(matmul(linalg::solve_triangular(mT(a), mT(b), true, false), mT(a)), mT(b), 1e-12, 1e-12));
  for (bool upper : {false, true}) {
    for (bool left : {false, true}) {
      for (bool unit : {false, true}) {
        EXPECT_TRUE(gradcheck(
            [=](In in) { return linalg::solve_triangular(well_conditioned(in[0]), in[1], upper, left, unit); },
            {input({2, 3, 3}, -1, 1, 3), input(left ? Shape{3, 2} : Shape{2, 3}, -1, 1, 4)}))
            << upper << left << unit;
      }
    }
  }
}

TEST(LinalgDecomp, CholeskyMatchesTorch) {
  Tensor a = leaf(G::kCholA);
  Tensor l = linalg::cholesky(a);
  EXPECT_TRUE(matches_values(l, G::kCholL.values, 1e-12));
  sum(mul(l, T(G::kCholW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kCholGrad.values, 1e-10));
  Tensor a2 = leaf(G::kCholA);
  Tensor u = linalg::cholesky(a2, true);
  EXPECT_TRUE(matches_values(u, G::kCholU.values, 1e-12));
  sum(mul(u, T(G::kCholW))).backward();
  EXPECT_TRUE(matches_values(a2.grad(), G::kCholGradUpper.values, 1e-10));
  EXPECT_TRUE(all_close(matmul(l, mT(l)).detach(), T(G::kCholA), 1e-12, 1e-12));
  auto f = [](bool upper) {
    return [upper](In in) { return linalg::cholesky(add(matmul(in[0], mT(in[0])), eye_like(in[0])), upper); };
  };
  EXPECT_TRUE(gradcheck(f(false), {input({2, 3, 3})}));
  EXPECT_TRUE(gradcheck(f(true), {input({2, 3, 3})}));
  EXPECT_TRUE(matches_values(linalg::cholesky(T(G::kF32Spd, kFloat32)), G::kF32Chol.values, 2e-6));
  Tensor indefinite = raw::tensor({{1.0, 2.0}, {2.0, 1.0}}, kFloat64);
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { linalg::cholesky(indefinite); },
      "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the "
      "leading minor of order 2 is not positive-definite)."));
  Tensor batch = raw::stack({raw::eye(2, -1, kFloat64), indefinite});
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { linalg::cholesky(batch); },
                                              "linalg.cholesky: (Batch element 1): The factorization could not"));
  EXPECT_TRUE(matches_values(std::get<1>(linalg::cholesky_ex(batch)), {0, 2}));
}

TEST(LinalgDecomp, QrMatchesTorch) {
  struct Case {
    const GoldenTensor &a, &q, &r, &wq, &wr, &grad;
    const char* mode;
  };
  const Case cases[] = {
      {G::kQrTallA, G::kQrTallReducedQ, G::kQrTallReducedR, G::kQrTallReducedWq, G::kQrTallReducedWr,
       G::kQrTallReducedGrad, "reduced"},
      {G::kQrWideA, G::kQrWideReducedQ, G::kQrWideReducedR, G::kQrWideReducedWq, G::kQrWideReducedWr,
       G::kQrWideReducedGrad, "reduced"},
      {G::kQrWideA, G::kQrWideCompleteQ, G::kQrWideCompleteR, G::kQrWideCompleteWq, G::kQrWideCompleteWr,
       G::kQrWideCompleteGrad, "complete"},
  };
  for (const Case& c : cases) {
    Tensor a = leaf(c.a);
    auto [q, r] = linalg::qr(a, c.mode);
    EXPECT_TRUE(matches_values(q, c.q.values, 1e-12)) << c.mode;
    EXPECT_TRUE(matches_values(r, c.r.values, 1e-12)) << c.mode;
    add(sum(mul(q, T(c.wq))), sum(mul(r, T(c.wr)))).backward();
    EXPECT_TRUE(matches_values(a.grad(), c.grad.values, 1e-10)) << c.mode;
    EXPECT_TRUE(all_close(matmul(q, r).detach(), T(c.a), 1e-12, 1e-12));
    EXPECT_TRUE(all_close(matmul(mT(q), q).detach(), eye_like(matmul(mT(q), q)), 1e-12, 1e-12));  // QᵀQ = I
  }
  auto [q, r] = linalg::qr(T(G::kQrTallA), "complete");
  EXPECT_TRUE(matches_values(q, G::kQrTallCompleteQ.values, 1e-12));
  EXPECT_TRUE(matches_values(r, G::kQrTallCompleteR.values, 1e-12));
  EXPECT_TRUE(matches_values(std::get<1>(linalg::qr(T(G::kQrTallA), "r")), G::kQrTallReducedR.values, 1e-12));
  for (Shape s : {Shape{2, 4, 3}, Shape{2, 3, 4}, Shape{3, 3}}) {
    EXPECT_TRUE(gradcheck_multi([](In in) { auto [q, r] = linalg::qr(in[0]); return std::vector<Tensor>{q, r}; },
                                {input(s)}))
        << shape_str(s);
  }
  Tensor x = input({4, 3});
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { sum(std::get<1>(linalg::qr(x, "r"))).backward(); },
                                              "The derivative of linalg.qr depends on Q, which is not computed when mode='r'."));
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { sum(std::get<0>(linalg::qr(x, "complete"))).backward(); },
                                              "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { linalg::qr(x, "x"); },
                                                 "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or 'complete'"));
}

TEST(LinalgDecomp, EighMatchesTorch) {
  Tensor a = leaf(G::kEighA);
  auto [l, v] = linalg::eigh(a);
  EXPECT_TRUE(matches_values(l, G::kEighL.values, 1e-12));
  add(sum(mul(l, T(G::kEighW1))), sum(mul(mul(v, v), T(G::kEighW2)))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kEighGrad.values, 1e-9));
  // V diag(L) Vᵀ = A, VᵀV = I.
  EXPECT_TRUE(all_close(matmul(mul(v, unsqueeze(l, -2)), mT(v)).detach(), T(G::kEighA), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(matmul(mT(v), v).detach(), eye_like(v), 1e-12, 1e-12));
  // UPLO "U" reads the upper triangle only: the lower one here is garbage.
  Tensor upper_only = add(raw::triu(T(G::kEighA)), raw::tril(raw::full({2, 4, 4}, 100.0, kFloat64), -1));
  EXPECT_TRUE(matches_values(linalg::eigvalsh(upper_only, "U"), G::kEighLUpper.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::eigvalsh(T(G::kF32Spd, kFloat32)), G::kF32Eigvalsh.values, 2e-6));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::eigvalsh(sym(in[0])); }, {input({2, 4, 4})}));
  EXPECT_TRUE(gradcheck_multi(
      [](In in) {
        auto [l, v] = linalg::eigh(sym(in[0]));
        return std::vector<Tensor>{l, mul(v, v), matmul(v, mT(v))};
      },
      {input({2, 4, 4})}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { linalg::eigh(raw::eye(2), "X"); },
                                                 "Expected UPLO argument to be 'L' or 'U', but got X"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { linalg::eigh(raw::zeros({2, 3})); },
                                                 "linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices"));
}

TEST(LinalgDecomp, SvdMatchesTorch) {
  struct Case {
    const GoldenTensor &a, &w1, &w2, &w3, &s, &grad;
  };
  const Case cases[] = {{G::kSvdTallA, G::kSvdTallW1, G::kSvdTallW2, G::kSvdTallW3, G::kSvdTallS, G::kSvdTallGrad},
                        {G::kSvdWideA, G::kSvdWideW1, G::kSvdWideW2, G::kSvdWideW3, G::kSvdWideS, G::kSvdWideGrad}};
  for (const Case& c : cases) {
    Tensor a = leaf(c.a);
    auto [u, s, vh] = linalg::svd(a, false);
    EXPECT_TRUE(matches_values(s, c.s.values, 1e-12));
    add(add(sum(mul(s, T(c.w1))), sum(mul(mul(u, u), T(c.w2)))), sum(mul(mul(vh, vh), T(c.w3)))).backward();
    EXPECT_TRUE(matches_values(a.grad(), c.grad.values, 1e-9));
    EXPECT_TRUE(all_close(matmul(mul(u, unsqueeze(s, -2)), vh).detach(), T(c.a), 1e-12, 1e-12));  // U S Vh = A
    auto [uf, sf, vhf] = linalg::svd(T(c.a), true);
    EXPECT_TRUE(all_close(matmul(mT(uf), uf), eye_like(uf), 1e-12, 1e-12));
    EXPECT_TRUE(all_close(matmul(vhf, mT(vhf)), eye_like(vhf), 1e-12, 1e-12));
    EXPECT_TRUE(matches_values(linalg::svdvals(T(c.a)), c.s.values, 1e-12));
  }
  // A rank-deficient matrix: its full bases are still orthonormal.
  Tensor rank1 = raw::tensor({{1.0, 2.0}, {2.0, 4.0}, {3.0, 6.0}}, kFloat64);
  auto [u, s, vh] = linalg::svd(rank1, true);
  EXPECT_TRUE(all_close(matmul(mT(u), u), eye_like(u), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(matmul(mul(raw::narrow(u, 1, 0, 2), unsqueeze(s, 0)), vh), rank1, 1e-12, 1e-12));
  EXPECT_TRUE(matches_values(linalg::svdvals(T(G::kF32A, kFloat32)), G::kF32Svdvals.values, 2e-6));
  for (Shape sh : {Shape{2, 4, 3}, Shape{3, 5}, Shape{3, 3}}) {
    EXPECT_TRUE(gradcheck([](In in) { return linalg::svdvals(in[0]); }, {input(sh)})) << shape_str(sh);
    for (bool full : {false, true}) {
      EXPECT_TRUE(gradcheck_multi(
          [full](In in) {
            auto [u, s, vh] = linalg::svd(in[0], full);
            const int64_t k = s.size(-1);
            Tensor uk = narrow(u, -1, 0, k), vk = narrow(vh, -2, 0, k);
            return std::vector<Tensor>{s, mul(uk, uk), mul(vk, vk), matmul(mul(uk, unsqueeze(s, -2)), vk)};
          },
          {input(sh)}))
          << shape_str(sh) << full;
    }
  }
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { linalg::svd(raw::eye(2, -1, kInt64)); }, "linalg.svd: Expected a floating point or complex tensor as input. Got Long"));
}

TEST(LinalgDecomp, CompositionsMatchTorch) {
  EXPECT_TRUE(matches_values(linalg::pinv(T(G::kPinvA)), G::kPinvOut.values, 1e-12));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::pinv(in[0]); }, {input({4, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::pinv(sym(well_conditioned(in[0])), std::nullopt, std::nullopt, true); },
                        {input({3, 3})}));
  EXPECT_TRUE(matches_values(linalg::matrix_rank(T(G::kRankA)), G::kRankOut.values, 0));
  EXPECT_EQ(linalg::matrix_rank(T(G::kRankA)).dtype(), kInt64);
  const Tensor n = T(G::kNormA);
  constexpr double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, "fro"), G::kMatrixNormFro.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, "nuc"), G::kMatrixNormNuc.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, 1.0), G::kMatrixNormOne.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, -1.0), G::kMatrixNormMinusOne.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, inf), G::kMatrixNormInf.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, -inf), G::kMatrixNormMinusInf.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, 2.0), G::kMatrixNormTwo.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_norm(n, -2.0), G::kMatrixNormMinusTwo.values, 1e-12));
  EXPECT_EQ(linalg::matrix_norm(n, "nuc", {-2, -1}, true).sizes(), (Shape{2, 1, 1}));
  EXPECT_TRUE(matches_values(linalg::vector_norm(n, 3.0, {0, 2}), G::kVectorNorm3.values, 1e-12));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::matrix_norm(in[0], "nuc"); }, {input({2, 3, 4})}));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::matrix_norm(in[0], 2.0); }, {input({2, 3, 4})}));
  EXPECT_TRUE(matches_values(linalg::cross(T(G::kCrossX), T(G::kCrossY)), G::kCrossOut.values, 1e-12));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::cross(in[0], in[1]); }, {input({2, 3}, -1, 1, 1), input({3}, -1, 1, 2)}));
  EXPECT_TRUE(matches_values(linalg::matrix_power(T(G::kPowerA), 5), G::kPower5.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::matrix_power(T(G::kPowerA), -3), G::kPowerMinus3.values, 1e-10));
  EXPECT_TRUE(matches_values(linalg::matrix_power(T(G::kPowerA), 0), values(raw::eye(3, -1, kFloat64))));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::matrix_power(in[0], 3); }, {input({2, 3, 3})}));
  Tensor md = linalg::multi_dot({T(G::kDot1), T(G::kDot2), T(G::kDot3), T(G::kDotV)});
  EXPECT_TRUE(matches_values(md, G::kMultiDot.values, 1e-12));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::multi_dot({in[0], in[1], in[2]}); },
                        {input({2, 5}, -1, 1, 1), input({5, 3}, -1, 1, 2), input({3}, -1, 1, 3)}));
}

// Sizes past one panel (kernels/cpu/linalg_decomp.cc blocks 32 columns), where the trailing
// updates go through GEMM: the factors must still reproduce A, float64 and float32.
TEST(LinalgDecomp, BlockedSizesReconstruct) {
  for (DType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat64 ? 1e-10 : 2e-3;
    Tensor x = raw::to(input({100, 100}, -1, 1, 11), kCPU, dtype);
    Tensor a = well_conditioned(x);
    Tensor b = raw::to(input({100, 7}, -1, 1, 12), kCPU, dtype);
    EXPECT_TRUE(all_close(matmul(a, linalg::solve(a, b)), b, tol, tol));
    EXPECT_TRUE(all_close(matmul(a, linalg::inv(a)), eye_like(a), tol, tol));
    Tensor spd = add(matmul(x, mT(x)), mul(eye_like(x), 100.0));
    Tensor l = linalg::cholesky(spd);
    EXPECT_TRUE(all_close(matmul(l, mT(l)), spd, tol * 100, tol * 100));
    EXPECT_TRUE(all_close(l, raw::tril(l), 0, 0));
    Tensor t = linalg::solve_triangular(a, b, /*upper=*/true);
    EXPECT_TRUE(all_close(matmul(raw::triu(a), t), b, tol, tol));
    // Unit lower with small off-diagonals (random ones of size 1 make it exponentially ill-conditioned).
    Tensor unit = mul(x, 0.01);
    t = linalg::solve_triangular(unit, b, /*upper=*/false, /*left=*/true, /*unitriangular=*/true);
    EXPECT_TRUE(all_close(matmul(add(raw::tril(unit, -1), eye_like(a)), t), b, tol, tol));
    for (Shape s : {Shape{100, 70}, Shape{70, 100}}) {
      Tensor g = raw::to(input(s, -1, 1, 13), kCPU, dtype);
      auto [p, lo, up] = linalg::lu(g);
      EXPECT_TRUE(all_close(matmul(p, matmul(lo, up)), g, tol, tol)) << shape_str(s);
      auto [q, r] = linalg::qr(g);
      EXPECT_TRUE(all_close(matmul(q, r), g, tol, tol)) << shape_str(s);
      EXPECT_TRUE(all_close(matmul(mT(q), q), eye_like(matmul(mT(q), q)), tol, tol)) << shape_str(s);
      EXPECT_TRUE(all_close(r, raw::triu(r), 0, 0)) << shape_str(s);
      auto [qc, rc] = linalg::qr(g, "complete");
      EXPECT_TRUE(all_close(matmul(qc, rc), g, tol, tol)) << shape_str(s);
      EXPECT_TRUE(all_close(matmul(mT(qc), qc), eye_like(qc), tol, tol)) << shape_str(s);
      // R's diagonal signs are the unblocked reflectors' (LAPACK's): the same R as a QR of the
      // columns one panel at a time would give, checked through |R| = |R of the first 32 columns|.
      auto [q32, r32] = linalg::qr(raw::narrow(g, -1, 0, 32));
      EXPECT_TRUE(all_close(raw::narrow(raw::narrow(r, -1, 0, 32), -2, 0, 32), r32, tol, tol)) << shape_str(s);
    }
  }
}

TEST(LinalgDecomp, EmptyAndOneByOne) {
  EXPECT_EQ(linalg::inv(raw::zeros({0, 3, 3})).sizes(), (Shape{0, 3, 3}));
  EXPECT_TRUE(matches_values(linalg::det(raw::zeros({2, 0, 0})), {1.0, 1.0}));
  EXPECT_TRUE(matches_values(linalg::cholesky(raw::full({1, 1}, 9.0, kFloat64)), {3.0}));
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::full({1, 1}, -2.0, kFloat64)), {-2.0}));
  EXPECT_TRUE(matches_values(linalg::svdvals(raw::full({1, 1}, -2.0, kFloat64)), {2.0}));
}

// No cuSOLVER path yet: a CUDA input is decomposed on the host and its results (and gradients)
// come back on the input's device.
TEST(LinalgDecomp, CudaInputsComputeOnTheHost_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device cuda = Device::cuda(0);
  Tensor a = raw::to(T(G::kInvA), cuda, kFloat64).requires_grad_();
  Tensor y = linalg::inv(a);
  EXPECT_EQ(y.device(), cuda);
  EXPECT_TRUE(matches_values(y, G::kInvOut.values, 1e-12));
  sum(mul(y, raw::to(T(G::kInvW), cuda, kFloat64))).backward();
  EXPECT_EQ(a.grad().device(), cuda);
  EXPECT_TRUE(matches_values(a.grad(), G::kInvGrad.values, 1e-11));
  EXPECT_TRUE(matches_values(linalg::det(raw::to(T(G::kDetA), cuda, kFloat64)), G::kDetOut.values, 1e-10));
  EXPECT_TRUE(matches_values(linalg::solve(raw::to(T(G::kSolveA), cuda, kFloat64), raw::to(T(G::kSolveB), cuda, kFloat64)),
                             G::kSolveOut.values, 1e-11));
  Tensor l = linalg::cholesky(raw::to(T(G::kCholA), cuda, kFloat64));
  EXPECT_EQ(l.device(), cuda);
  EXPECT_TRUE(matches_values(l, G::kCholL.values, 1e-12));
  EXPECT_TRUE(matches_values(std::get<1>(linalg::qr(raw::to(T(G::kQrTallA), cuda, kFloat64))), G::kQrTallReducedR.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::eigvalsh(raw::to(T(G::kEighA), cuda, kFloat64)), G::kEighL.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::svdvals(raw::to(T(G::kSvdTallA), cuda, kFloat64)), G::kSvdTallS.values, 1e-12));
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { linalg::cholesky(raw::to(raw::eye(2, -1, kFloat64), cuda, kFloat64).neg()); },
                                              "the leading minor of order 1 is not positive-definite"));
}

}  // namespace
}  // namespace colony
