// linalg::lu_factor, lu_factor_ex, lu, lu_solve, cholesky_solve, cholesky_inverse, lstsq,
// matrix_exp and vander (autograd/linalg.h) against torch's values and gradients
// (linalg_solvers_golden.py writes them), float64 gradchecks, and torch's errors.
#include <cmath>

#include "autograd/linalg.h"
#include "tests/autograd/gradcheck.h"
#include "tests/autograd/linalg_solvers_golden.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using linalg_solvers_golden::GoldenTensor;
using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::matches_values;
using testing::throws_with;
using In = const std::vector<Tensor>&;
namespace G = linalg_solvers_golden;

Tensor T(const GoldenTensor& g, DType dtype = kFloat64) {
  return raw::to(raw::from_vector(g.values, Shape(g.shape.begin(), g.shape.end())), kCPU, dtype);
}
Tensor Piv(const GoldenTensor& g) { return raw::to(T(g), kCPU, kInt32); }
Tensor leaf(const GoldenTensor& g) { return T(g).requires_grad_(); }
Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }
Tensor eye_like(const Tensor& a) { return raw::expand(raw::eye(a.size(-1), -1, TensorOptions(a.dtype())), a.sizes()); }
Tensor well_conditioned(const Tensor& x) { return add(x, mul(eye_like(x), static_cast<double>(x.size(-1)))); }
// A lower factor with a diagonal far from zero, for gradchecks through cholesky_solve/inverse.
Tensor factor(const Tensor& x) { return add(tril(x), mul(eye_like(x), 3.0)); }

TEST(LinalgSolvers, LuFactorMatchesTorch) {
  Tensor a = leaf(G::kLuFactorA);
  auto [lu, piv] = linalg::lu_factor(a);
  EXPECT_EQ(piv.dtype(), kInt32);
  EXPECT_TRUE(matches_values(lu, G::kLuFactorLU.values, 1e-12));
  EXPECT_TRUE(matches_values(piv, G::kLuFactorPiv.values));
  sum(mul(lu, T(G::kLuFactorW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kLuFactorGrad.values, 1e-10));
  // Past one panel of the blocked kernel: torch's pivots and factors.
  auto [big, big_piv] = linalg::lu_factor(T(G::kLuBigA));
  EXPECT_TRUE(matches_values(big_piv, G::kLuBigPiv.values));
  EXPECT_TRUE(matches_values(big, G::kLuBigLU.values, 1e-10));
  EXPECT_TRUE(gradcheck([](In in) { return std::get<0>(linalg::lu_factor(well_conditioned(in[0]))); }, {input({2, 3, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return std::get<0>(linalg::lu_factor(in[0])); }, {input({3, 5})}));
  EXPECT_TRUE(gradcheck([](In in) { return std::get<0>(linalg::lu_factor(in[0])); }, {input({5, 3})}));
  // float32
  auto [lu32, piv32] = linalg::lu_factor(T(G::kF32A, kFloat32));
  EXPECT_EQ(lu32.dtype(), kFloat32);
  EXPECT_TRUE(matches_values(lu32, G::kF32LU.values, 1e-5));
  EXPECT_TRUE(matches_values(piv32, G::kF32Piv.values));
}

TEST(LinalgSolvers, LuMatchesTorch) {
  const struct {
    const GoldenTensor &a, &p, &l, &u, &w1, &w2, &grad;
  } cases[] = {{G::kLuSquareA, G::kLuSquareP, G::kLuSquareL, G::kLuSquareU, G::kLuSquareW1, G::kLuSquareW2, G::kLuSquareGrad},
               {G::kLuWideA, G::kLuWideP, G::kLuWideL, G::kLuWideU, G::kLuWideW1, G::kLuWideW2, G::kLuWideGrad},
               {G::kLuTallA, G::kLuTallP, G::kLuTallL, G::kLuTallU, G::kLuTallW1, G::kLuTallW2, G::kLuTallGrad}};
  for (const auto& c : cases) {
    Tensor a = leaf(c.a);
    auto [p, l, u] = linalg::lu(a);
    EXPECT_TRUE(matches_values(p, c.p.values));
    EXPECT_TRUE(matches_values(l, c.l.values, 1e-12));
    EXPECT_TRUE(matches_values(u, c.u.values, 1e-12));
    add(sum(mul(l, T(c.w1))), sum(mul(u, T(c.w2)))).backward();
    EXPECT_TRUE(matches_values(a.grad(), c.grad.values, 1e-10)) << shape_str(a.sizes());
  }
  Tensor a = leaf(G::kLuWideA);
  sum(mul(std::get<0>(linalg::lu_factor(a)), T(G::kLuFactorWideW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kLuFactorWideGrad.values, 1e-10));
  a = leaf(G::kLuTallA);
  sum(mul(std::get<0>(linalg::lu_factor(a)), T(G::kLuFactorTallW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kLuFactorTallGrad.values, 1e-10));
  for (Shape s : {Shape{2, 4, 4}, Shape{3, 5}, Shape{5, 3}}) {
    EXPECT_TRUE(gradcheck([](In in) { auto [p, l, u] = linalg::lu(in[0]); return add(sum(l), mul(sum(mul(u, u)), 0.5)); },
                          {input(s)}))
        << shape_str(s);
  }
}

TEST(LinalgSolvers, LuSolveMatchesTorch) {
  const Tensor piv = Piv(G::kLuSolvePiv);
  const struct {
    bool left, adjoint;
    const GoldenTensor &x, &glu, &gb;
  } cases[] = {{true, false, G::kLuSolveLeftX, G::kLuSolveLeftGradLU, G::kLuSolveLeftGradB},
               {true, true, G::kLuSolveLeftAdjX, G::kLuSolveLeftAdjGradLU, G::kLuSolveLeftAdjGradB},
               {false, false, G::kLuSolveRightX, G::kLuSolveRightGradLU, G::kLuSolveRightGradB},
               {false, true, G::kLuSolveRightAdjX, G::kLuSolveRightAdjGradLU, G::kLuSolveRightAdjGradB}};
  for (const auto& c : cases) {
    Tensor lu = leaf(G::kLuSolveLU), b = leaf(G::kLuSolveB);
    Tensor x = linalg::lu_solve(lu, piv, b, c.left, c.adjoint);
    EXPECT_TRUE(matches_values(x, c.x.values, 1e-11)) << c.left << c.adjoint;
    sum(mul(x, T(G::kLuSolveW))).backward();
    EXPECT_TRUE(matches_values(lu.grad(), c.glu.values, 1e-9)) << c.left << c.adjoint;
    EXPECT_TRUE(matches_values(b.grad(), c.gb.values, 1e-10)) << c.left << c.adjoint;
    EXPECT_TRUE(gradcheck(
        [&](In in) { return linalg::lu_solve(add(T(G::kLuSolveLU), in[0]), piv, in[1], c.left, c.adjoint); },
        {input({2, 3, 3}, -0.1, 0.1, 1), input({2, 3, 3}, -1, 1, 2)}));
  }
  auto [lu32, piv32] = linalg::lu_factor(T(G::kF32A, kFloat32));
  EXPECT_TRUE(matches_values(linalg::lu_solve(lu32, piv32, T(G::kF32B, kFloat32)), G::kF32LuSolve.values, 1e-5));
}

// pivot = false against Doolittle's elimination in torch ops (the golden script; torch's CPU refuses
// pivot = false), on matrices where partial pivoting would have swapped rows.
TEST(LinalgSolvers, LuWithoutPivotingIsTheElimination) {
  const struct {
    const GoldenTensor &a, &lu, &w, &grad, &w1, &w2, &lu_grad;
  } cases[] = {{G::kNoPivSquareA, G::kNoPivSquareLU, G::kNoPivSquareW, G::kNoPivSquareGrad, G::kNoPivSquareW1,
                G::kNoPivSquareW2, G::kNoPivSquareLuGrad},
               {G::kNoPivWideA, G::kNoPivWideLU, G::kNoPivWideW, G::kNoPivWideGrad, G::kNoPivWideW1, G::kNoPivWideW2,
                G::kNoPivWideLuGrad},
               {G::kNoPivTallA, G::kNoPivTallLU, G::kNoPivTallW, G::kNoPivTallGrad, G::kNoPivTallW1, G::kNoPivTallW2,
                G::kNoPivTallLuGrad}};
  for (const auto& c : cases) {
    Tensor a = leaf(c.a);
    const int64_t k = std::min(a.size(-2), a.size(-1));
    auto [lu, piv] = linalg::lu_factor(a, /*pivot=*/false);
    EXPECT_TRUE(matches_values(lu, c.lu.values, 1e-12)) << shape_str(a.sizes());
    EXPECT_FALSE(raw::allclose(lu, std::get<0>(linalg::lu_factor(T(c.a))), 1e-6, 1e-6));  // pivoting would swap
    EXPECT_EQ(piv.dtype(), kInt32);
    EXPECT_TRUE(raw::equal(piv, raw::expand(raw::arange(1.0, k + 1.0, 1.0, TensorOptions(kInt32)), piv.sizes())));
    sum(mul(lu, T(c.w))).backward();
    EXPECT_TRUE(matches_values(a.grad(), c.grad.values, 1e-10)) << shape_str(a.sizes());
    Tensor b = leaf(c.a);
    auto [p, l, u] = linalg::lu(b, /*pivot=*/false);
    EXPECT_EQ(p.sizes(), Shape{0});
    EXPECT_EQ(p.dtype(), kFloat64);
    EXPECT_TRUE(all_close(matmul(l, u), T(c.a), 1e-12, 1e-12));
    add(sum(mul(l, T(c.w1))), sum(mul(u, T(c.w2)))).backward();
    EXPECT_TRUE(matches_values(b.grad(), c.lu_grad.values, 1e-10)) << shape_str(b.sizes());
  }
  // Where partial pivoting swaps nothing, both are torch's pivoted factorization.
  auto [dominant, dpiv] = linalg::lu_factor(T(G::kNoPivDominantA), /*pivot=*/false);
  EXPECT_TRUE(matches_values(dominant, G::kNoPivDominantLU.values, 1e-14));
  auto [lu32, piv32] = linalg::lu_factor(T(G::kNoPivDominantA, kFloat32), /*pivot=*/false);
  EXPECT_TRUE(matches_values(lu32, G::kNoPivDominantLU.values, 1e-5));
  // Square inputs made diagonally heavy, so no leading minor is near zero.
  auto lead = [](const Tensor& x) { return x.size(-1) == x.size(-2) ? well_conditioned(x) : x; };
  for (Shape s : {Shape{2, 4, 4}, Shape{3, 5}, Shape{5, 3}}) {
    EXPECT_TRUE(gradcheck([&](In in) { return std::get<0>(linalg::lu_factor(lead(in[0]), false)); }, {input(s)}))
        << shape_str(s);
    EXPECT_TRUE(gradcheck(
        [&](In in) {
          auto [p, l, u] = linalg::lu(lead(in[0]), false);
          return add(sum(l), mul(sum(mul(u, u)), 0.5));
        },
        {input(s)}))
        << shape_str(s);
  }
  // A zero leading minor: no unpivoted LU exists. info names the first zero of U's diagonal, and
  // lu_factor throws torch's words for it.
  Tensor swap = raw::tensor({{0.0, 1.0}, {1.0, 0.0}}, kFloat64);
  auto [zlu, zpiv, zinfo] = linalg::lu_factor_ex(swap, /*pivot=*/false);
  EXPECT_TRUE(matches_values(zinfo, {1}));
  EXPECT_TRUE(matches_values(std::get<2>(linalg::lu_factor_ex(swap)), {0}));  // pivoted: fine
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { linalg::lu_factor(swap, /*pivot=*/false); },
                                              "torch.linalg.lu_factor: U[1,1] is zero"));
}

TEST(LinalgSolvers, LuErrorsAreTorchs) {
  Tensor singular = raw::tensor({{1.0, 2.0, 3.0}, {2.0, 4.0, 6.0}, {1.0, 0.0, 1.0}}, kFloat64);
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { linalg::lu_factor(singular); },
      "torch.linalg.lu_factor: U[3,3] is zero and using it on lu_solve would result in a division by zero. If you "
      "still want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"));
  Tensor batch = raw::stack({raw::eye(3, -1, kFloat64), singular});
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { linalg::lu_factor(batch); },
                                              "torch.linalg.lu_factor: (Batch element 1): U[3,3] is zero"));
  auto [lu, piv, info] = linalg::lu_factor_ex(batch);
  EXPECT_TRUE(matches_values(info, {0, 3}));
  auto [lu1, piv1] = linalg::lu_factor(raw::eye(3, -1, kFloat64));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { linalg::lu_solve(lu1, piv1, raw::ones({3, 2}, kFloat32)); },
      "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type Double and B of type Float instead"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { linalg::lu_solve(lu1, raw::to(piv1, kCPU, kInt64), raw::ones({3, 2}, kFloat64)); },
                                                 "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { linalg::lu_solve(lu1, piv1, raw::ones({4, 2}, kFloat64)); },
      "linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { linalg::lu_solve(lu1, piv1, raw::ones({3}, kFloat64)); },
                                                 "linalg.lu_solve: The input tensor B must have at least 2 dimensions."));
}

TEST(LinalgSolvers, CholeskySolveAndInverseMatchTorch) {
  for (bool upper : {false, true}) {
    const GoldenTensor& f = upper ? G::kCholUpperF : G::kCholLowerF;
    Tensor l = leaf(f), b = leaf(G::kCholSolveB);
    Tensor x = linalg::cholesky_solve(b, l, upper);
    EXPECT_TRUE(matches_values(x, (upper ? G::kCholSolveUpperX : G::kCholSolveLowerX).values, 1e-12));
    sum(mul(x, T(G::kCholSolveW))).backward();
    EXPECT_TRUE(matches_values(l.grad(), (upper ? G::kCholSolveUpperGradF : G::kCholSolveLowerGradF).values, 1e-11));
    EXPECT_TRUE(matches_values(b.grad(), (upper ? G::kCholSolveUpperGradB : G::kCholSolveLowerGradB).values, 1e-11));
    l = leaf(f);
    Tensor inv = linalg::cholesky_inverse(l, upper);
    EXPECT_TRUE(matches_values(inv, (upper ? G::kCholInvUpperOut : G::kCholInvLowerOut).values, 1e-12));
    sum(mul(inv, T(G::kCholInvW))).backward();
    EXPECT_TRUE(matches_values(l.grad(), (upper ? G::kCholInvUpperGrad : G::kCholInvLowerGrad).values, 1e-11));
    auto tri = [upper](const Tensor& x) { return upper ? mT(factor(mT(x))) : factor(x); };
    EXPECT_TRUE(gradcheck([&](In in) { return linalg::cholesky_solve(in[1], tri(in[0]), upper); },
                          {input({2, 3, 3}, -1, 1, 3), input({3, 2}, -1, 1, 4)}));
    EXPECT_TRUE(gradcheck([&](In in) { return linalg::cholesky_inverse(tri(in[0]), upper); }, {input({2, 3, 3})}));
  }
  const Tensor l32 = linalg::cholesky(T(G::kF32Spd, kFloat32));
  EXPECT_TRUE(matches_values(linalg::cholesky_solve(T(G::kF32B, kFloat32), l32), G::kF32CholSolve.values, 1e-5));
  EXPECT_TRUE(matches_values(linalg::cholesky_inverse(l32), G::kF32CholInv.values, 1e-5));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [] { linalg::cholesky_solve(raw::ones({3, 2}, kFloat64), raw::ones({4, 4}, kFloat64)); },
      "Incompatible matrix sizes for cholesky_solve: each A matrix is 4 by 4 but each b matrix is 3 by 2"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [] { linalg::cholesky_solve(raw::ones({3, 2}, kFloat32), raw::ones({3, 3}, kFloat64)); },
      "Expected b and A to have the same dtype, but found b of type Float and A of type Double instead."));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::cholesky_solve(raw::ones({3}), raw::ones({3, 3})); },
                                                 "b should have at least 2 dimensions, but has 1 dimensions instead"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::cholesky_solve(raw::ones({3, 2}), raw::ones({3})); },
                                                 "u should have at least 2 dimensions, but has 1 dimensions instead"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [] { linalg::cholesky_inverse(raw::ones({3, 4})); },
      "cholesky_inverse: A must be batches of square matrices, but they are 3 by 4 matrices"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::cholesky_inverse(raw::ones({3})); },
                                                 "cholesky_inverse: The input tensor A must have at least 2 dimensions."));
}

TEST(LinalgSolvers, LstsqMatchesTorch) {
  Tensor a = leaf(G::kLstsqA), b = leaf(G::kLstsqB);
  auto [x, residuals, rank, sv] = linalg::lstsq(a, b);
  EXPECT_TRUE(matches_values(x, G::kLstsqX.values, 1e-12));
  EXPECT_EQ(rank.dtype(), kInt64);
  EXPECT_EQ(rank.dim(), 0);
  EXPECT_TRUE(matches_values(rank, G::kLstsqRank.values));
  EXPECT_EQ(residuals.numel(), 0);  // gelsy
  EXPECT_EQ(sv.numel(), 0);
  sum(mul(x, T(G::kLstsqW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kLstsqGradA.values, 1e-11));
  EXPECT_TRUE(matches_values(b.grad(), G::kLstsqGradB.values, 1e-11));
  auto [xd, rd, rankd, svd] = linalg::lstsq(T(G::kLstsqA), T(G::kLstsqB), std::nullopt, "gelsd");
  EXPECT_TRUE(matches_values(rd, G::kLstsqGelsdResiduals.values, 1e-11));
  EXPECT_TRUE(matches_values(svd, G::kLstsqGelsdS.values, 1e-12));
  auto [xg, rg, rankg, svg] = linalg::lstsq(T(G::kLstsqA), T(G::kLstsqB), std::nullopt, "gels");
  EXPECT_TRUE(matches_values(rg, G::kLstsqGelsResiduals.values, 1e-11));
  EXPECT_EQ(rankg.numel(), 0);
  // Wide: the minimum-norm solution.
  a = leaf(G::kLstsqWideA), b = leaf(G::kLstsqWideB);
  Tensor xw = std::get<0>(linalg::lstsq(a, b));
  EXPECT_TRUE(matches_values(xw, G::kLstsqWideX.values, 1e-12));
  sum(mul(xw, T(G::kLstsqWideW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kLstsqWideGradA.values, 1e-11));
  EXPECT_TRUE(matches_values(b.grad(), G::kLstsqWideGradB.values, 1e-11));
  // Rank-deficient, and a vector B.
  auto [xr, rr, rankr, svr] = linalg::lstsq(T(G::kLstsqDefA), T(G::kLstsqB));
  EXPECT_TRUE(matches_values(xr, G::kLstsqDefX.values, 1e-10));
  EXPECT_TRUE(matches_values(rankr, G::kLstsqDefRank.values));
  EXPECT_TRUE(matches_values(std::get<0>(linalg::lstsq(T(G::kLstsqA), T(G::kLstsqBv))), G::kLstsqXv.values, 1e-12));
  EXPECT_TRUE(matches_values(std::get<0>(linalg::lstsq(T(G::kF32LstsqA, kFloat32), T(G::kF32LstsqB, kFloat32))),
                             G::kF32LstsqX.values, 1e-5));
  for (Shape s : {Shape{5, 3}, Shape{3, 5}}) {
    EXPECT_TRUE(gradcheck([](In in) { return std::get<0>(linalg::lstsq(in[0], in[1])); },
                          {input(s, -1, 1, 5), input({s[0], 2}, -1, 1, 6)}))
        << shape_str(s);
  }
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::lstsq(raw::ones({3, 2}), raw::ones({4, 2})); },
                                                 "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [] { linalg::lstsq(raw::ones({3, 2}), raw::ones({3, 2}, kFloat64)); },
      "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype Float and other's "
      "dtype Double"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [] { linalg::lstsq(raw::ones({3, 2}), raw::ones({3, 2}), std::nullopt, "foo"); },
      "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::lstsq(raw::ones({3}), raw::ones({3})); },
                                                 "torch.linalg.lstsq: input must have at least 2 dimensions."));
}

TEST(LinalgSolvers, MatrixExpAndVanderMatchTorch) {
  Tensor a = leaf(G::kExpA);
  Tensor y = linalg::matrix_exp(a);
  EXPECT_TRUE(matches_values(y, G::kExpOut.values, 1e-12));
  sum(mul(y, T(G::kExpW))).backward();
  EXPECT_TRUE(matches_values(a.grad(), G::kExpGrad.values, 1e-10));
  EXPECT_TRUE(matches_values(linalg::matrix_exp(T(G::kExpMidA)), G::kExpMidOut.values, 1e-13));
  EXPECT_TRUE(matches_values(linalg::matrix_exp(mul(T(G::kF32A, kFloat32), 0.3)), G::kF32Exp.values, 1e-5));
  EXPECT_EQ(linalg::matrix_exp(raw::zeros({2, 0, 0}, kFloat64)).sizes(), Shape({2, 0, 0}));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::matrix_exp(in[0]); }, {input({2, 3, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::matrix_exp(mul(in[0], 5.0)); }, {input({3, 3})}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::matrix_exp(raw::ones({3, 4})); },
                                                 "linalg.matrix_exp: A must be batches of square matrices, but they are 3 by 4 matrices"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::matrix_exp(raw::ones({3, 3}, kInt64)); },
                                                 "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Long"));

  Tensor x = leaf(G::kVanderX);
  Tensor v = linalg::vander(x, 4);
  EXPECT_TRUE(matches_values(v, G::kVanderOut.values, 1e-14));
  sum(mul(v, T(G::kVanderW))).backward();
  EXPECT_TRUE(matches_values(x.grad(), G::kVanderGrad.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::vander(T(G::kVanderX)), G::kVanderDefault.values, 1e-14));
  EXPECT_TRUE(matches_values(linalg::vander(raw::tensor({1.0, 2.0, 3.0}, kInt64), 4), {1, 1, 1, 1, 1, 2, 4, 8, 1, 3, 9, 27}));
  EXPECT_TRUE(gradcheck([](In in) { return linalg::vander(in[0], 5); }, {input({2, 3})}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::vander(raw::ones({3}), 1); }, "N must be greater than 1."));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { linalg::vander(raw::ones({})); }, "N must be greater than 1."));
}

TEST(LinalgSolvers, CudaInputsMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device cuda = Device::cuda(0);
  auto dev = [&](const GoldenTensor& g) { return raw::to(T(g), cuda, kFloat64); };
  Tensor a = dev(G::kLuFactorA).requires_grad_();
  auto [lu, piv] = linalg::lu_factor(a);
  EXPECT_EQ(lu.device(), cuda);
  EXPECT_TRUE(matches_values(lu, G::kLuFactorLU.values, 1e-12));
  sum(mul(lu, dev(G::kLuFactorW))).backward();
  EXPECT_EQ(a.grad().device(), cuda);
  EXPECT_TRUE(matches_values(a.grad(), G::kLuFactorGrad.values, 1e-10));
  auto [p, l, u] = linalg::lu(dev(G::kLuWideA));
  EXPECT_TRUE(matches_values(u, G::kLuWideU.values, 1e-12));
  // pivot = false, as torch's CUDA has it.
  Tensor np = dev(G::kNoPivSquareA).requires_grad_();
  auto [nplu, nppiv] = linalg::lu_factor(np, /*pivot=*/false);
  EXPECT_EQ(nppiv.device(), cuda);
  EXPECT_TRUE(matches_values(nplu, G::kNoPivSquareLU.values, 1e-12));
  EXPECT_TRUE(matches_values(nppiv, {1, 2, 3, 4, 1, 2, 3, 4}));
  sum(mul(nplu, dev(G::kNoPivSquareW))).backward();
  EXPECT_TRUE(matches_values(np.grad(), G::kNoPivSquareGrad.values, 1e-10));
  auto [npp, npl, npu] = linalg::lu(dev(G::kNoPivWideA), /*pivot=*/false);
  EXPECT_EQ(npp.sizes(), Shape{0});
  EXPECT_EQ(npp.device(), cuda);
  EXPECT_TRUE(all_close(matmul(npl, npu), dev(G::kNoPivWideA), 1e-12, 1e-12));
  Tensor lus = dev(G::kLuSolveLU).requires_grad_();
  Tensor x = linalg::lu_solve(lus, raw::to(Piv(G::kLuSolvePiv), cuda, kInt32), dev(G::kLuSolveB), true, true);
  EXPECT_EQ(x.device(), cuda);
  EXPECT_TRUE(matches_values(x, G::kLuSolveLeftAdjX.values, 1e-11));
  sum(mul(x, dev(G::kLuSolveW))).backward();
  EXPECT_TRUE(matches_values(lus.grad(), G::kLuSolveLeftAdjGradLU.values, 1e-9));
  EXPECT_TRUE(matches_values(linalg::cholesky_solve(dev(G::kCholSolveB), dev(G::kCholLowerF)), G::kCholSolveLowerX.values, 1e-12));
  EXPECT_TRUE(matches_values(linalg::cholesky_inverse(dev(G::kCholUpperF), true), G::kCholInvUpperOut.values, 1e-12));
  EXPECT_TRUE(matches_values(std::get<0>(linalg::lstsq(dev(G::kLstsqA), dev(G::kLstsqB))), G::kLstsqX.values, 1e-12));
  Tensor e = dev(G::kExpA).requires_grad_();
  Tensor y = linalg::matrix_exp(e);
  EXPECT_EQ(y.device(), cuda);
  EXPECT_TRUE(matches_values(y, G::kExpOut.values, 1e-12));
  sum(mul(y, dev(G::kExpW))).backward();
  EXPECT_TRUE(matches_values(e.grad(), G::kExpGrad.values, 1e-10));
  EXPECT_TRUE(matches_values(linalg::vander(dev(G::kVanderX), 4), G::kVanderOut.values, 1e-14));
}

}  // namespace
}  // namespace colony
