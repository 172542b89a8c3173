"""Writes linalg_solvers_golden.h: torch's values and gradients for linalg_solvers_test.cc
(linalg.lu_factor, lu, lu_solve, cholesky_solve, cholesky_inverse, lstsq, matrix_exp, vander).

Run: /tmp/torch2/bin/python tests/autograd/linalg_solvers_golden.py > tests/autograd/linalg_solvers_golden.h
Inputs come from torch.manual_seed(0) and are written out too. Gradients are of L = sum(out_i * W_i)
with the weights written beside them.
"""
import torch

from linalg_golden_common import D, emit, leaf, spd, write_header  # noqa: F401

torch.manual_seed(0)


# lu_factor, batched 3x4x4, with the gradient of the packed LU
A = torch.randn(3, 4, 4, dtype=D)
W = torch.randn(3, 4, 4, dtype=D)
a = leaf(A); LU, piv = torch.linalg.lu_factor(a); (LU * W).sum().backward()
emit("kLuFactorA", A); emit("kLuFactorW", W); emit("kLuFactorLU", LU); emit("kLuFactorPiv", piv)
emit("kLuFactorGrad", a.grad)
# 40x40: past one panel of the blocked kernel, the pivots still torch's
A = torch.randn(40, 40, dtype=D)
LU, piv = torch.linalg.lu_factor(A)
emit("kLuBigA", A); emit("kLuBigLU", LU); emit("kLuBigPiv", piv)

# lu (P, L, U): square, wide and tall, gradient of sum(L*W1) + sum(U*W2)
for tag, shape in (("Square", (4, 4)), ("Wide", (3, 5)), ("Tall", (5, 3))):
    A = torch.randn(*shape, dtype=D)
    a = leaf(A); P, L, U = torch.linalg.lu(a)
    W1 = torch.randn(L.shape, dtype=D); W2 = torch.randn(U.shape, dtype=D)
    ((L * W1).sum() + (U * W2).sum()).backward()
    emit(f"kLu{tag}A", A); emit(f"kLu{tag}P", P); emit(f"kLu{tag}L", L); emit(f"kLu{tag}U", U)
    emit(f"kLu{tag}W1", W1); emit(f"kLu{tag}W2", W2); emit(f"kLu{tag}Grad", a.grad)
    a = leaf(A); LU, piv = torch.linalg.lu_factor(a)
    if shape[0] != shape[1]:
        Wp = torch.randn(LU.shape, dtype=D); (LU * Wp).sum().backward()
        emit(f"kLuFactor{tag}W", Wp); emit(f"kLuFactor{tag}Grad", a.grad)

# lu_solve: every (left, adjoint), gradients of LU and B
A = torch.randn(2, 3, 3, dtype=D)
LU0, piv = torch.linalg.lu_factor(A)
emit("kLuSolveLU", LU0); emit("kLuSolvePiv", piv)
B = torch.randn(2, 3, 3, dtype=D)
W = torch.randn(2, 3, 3, dtype=D)
emit("kLuSolveB", B); emit("kLuSolveW", W)
for left in (True, False):
    for adjoint in (False, True):
        tag = ("Left" if left else "Right") + ("Adj" if adjoint else "")
        lu_, b = leaf(LU0), leaf(B)
        X = torch.linalg.lu_solve(lu_, piv, b, left=left, adjoint=adjoint)
        (X * W).sum().backward()
        emit(f"kLuSolve{tag}X", X); emit(f"kLuSolve{tag}GradLU", lu_.grad); emit(f"kLuSolve{tag}GradB", b.grad)

# cholesky_solve and cholesky_inverse, lower and upper
S = spd(2, 3, 3)
B = torch.randn(2, 3, 2, dtype=D)
W = torch.randn(2, 3, 2, dtype=D)
Wi = torch.randn(2, 3, 3, dtype=D)
emit("kCholSolveB", B); emit("kCholSolveW", W); emit("kCholInvW", Wi)
for upper in (False, True):
    tag = "Upper" if upper else "Lower"
    F = torch.linalg.cholesky(S, upper=upper)
    emit(f"kChol{tag}F", F)
    f, b = leaf(F), leaf(B)
    X = torch.cholesky_solve(b, f, upper=upper); (X * W).sum().backward()
    emit(f"kCholSolve{tag}X", X); emit(f"kCholSolve{tag}GradF", f.grad); emit(f"kCholSolve{tag}GradB", b.grad)
    f = leaf(F)
    Y = torch.cholesky_inverse(f, upper=upper); (Y * Wi).sum().backward()
    emit(f"kCholInv{tag}Out", Y); emit(f"kCholInv{tag}Grad", f.grad)

# lstsq: tall full-rank (gelsy and gelsd), wide (minimum norm), rank-deficient tall, a vector B
A = torch.randn(5, 3, dtype=D); B = torch.randn(5, 2, dtype=D); W = torch.randn(3, 2, dtype=D)
a, b = leaf(A), leaf(B)
r = torch.linalg.lstsq(a, b); (r.solution * W).sum().backward()
emit("kLstsqA", A); emit("kLstsqB", B); emit("kLstsqW", W); emit("kLstsqX", r.solution)
emit("kLstsqRank", r.rank); emit("kLstsqGradA", a.grad); emit("kLstsqGradB", b.grad)
r = torch.linalg.lstsq(A, B, driver="gelsd")
emit("kLstsqGelsdResiduals", r.residuals); emit("kLstsqGelsdS", r.singular_values)
emit("kLstsqGelsResiduals", torch.linalg.lstsq(A, B, driver="gels").residuals)
Aw = torch.randn(3, 5, dtype=D); Bw = torch.randn(3, 2, dtype=D); Ww = torch.randn(5, 2, dtype=D)
a, b = leaf(Aw), leaf(Bw)
r = torch.linalg.lstsq(a, b); (r.solution * Ww).sum().backward()
emit("kLstsqWideA", Aw); emit("kLstsqWideB", Bw); emit("kLstsqWideW", Ww); emit("kLstsqWideX", r.solution)
emit("kLstsqWideGradA", a.grad); emit("kLstsqWideGradB", b.grad)
Ar = torch.randn(5, 2, dtype=D) @ torch.randn(2, 3, dtype=D)
r = torch.linalg.lstsq(Ar, B)
emit("kLstsqDefA", Ar); emit("kLstsqDefX", r.solution); emit("kLstsqDefRank", r.rank)
bv = torch.randn(5, dtype=D)
emit("kLstsqBv", bv); emit("kLstsqXv", torch.linalg.lstsq(A, bv).solution)

# matrix_exp: a batch of a small-norm and a large-norm matrix (degree 3 vs scaled degree 13)
E = torch.randn(2, 3, 3, dtype=D)
E[0] *= 0.002
E[1] *= 4
W = torch.randn(2, 3, 3, dtype=D)
e = leaf(E); Y = torch.linalg.matrix_exp(e); (Y * W).sum().backward()
emit("kExpA", E); emit("kExpW", W); emit("kExpOut", Y); emit("kExpGrad", e.grad)
E1 = torch.randn(4, 4, dtype=D) * 0.5
emit("kExpMidA", E1); emit("kExpMidOut", torch.linalg.matrix_exp(E1))

# vander
x = torch.randn(2, 3, dtype=D); W = torch.randn(2, 3, 4, dtype=D)
xx = leaf(x); V = torch.linalg.vander(xx, N=4); (V * W).sum().backward()
emit("kVanderX", x); emit("kVanderW", W); emit("kVanderOut", V); emit("kVanderGrad", xx.grad)
emit("kVanderDefault", torch.linalg.vander(x))

# float32, computed by torch in float32
F = torch.randn(3, 3, dtype=D) + 3 * torch.eye(3, dtype=D)
emit("kF32A", F)
LU, piv = torch.linalg.lu_factor(F.float())
emit("kF32LU", LU); emit("kF32Piv", piv)
B = torch.randn(3, 2, dtype=D)
emit("kF32B", B); emit("kF32LuSolve", torch.linalg.lu_solve(LU, piv, B.float()))
Sf = spd(3, 3)
emit("kF32Spd", Sf)
Lf = torch.linalg.cholesky(Sf.float())
emit("kF32CholSolve", torch.cholesky_solve(B.float(), Lf)); emit("kF32CholInv", torch.cholesky_inverse(Lf))
emit("kF32Exp", torch.linalg.matrix_exp(F.float() * 0.3))
At = torch.randn(5, 3, dtype=D); Bt = torch.randn(5, 2, dtype=D)
emit("kF32LstsqA", At); emit("kF32LstsqB", Bt); emit("kF32LstsqX", torch.linalg.lstsq(At.float(), Bt.float()).solution)

# LU without pivoting (torch's CPU refuses pivot=False; its CUDA has it): Doolittle's elimination
# written in differentiable torch ops, so the values and torch autograd's gradients are the
# unpivoted factorization's. Random matrices, so pivoting would have swapped rows.
def lu_no_pivot(A):
    m, n = A.shape
    rows = [A[i] for i in range(m)]
    for j in range(min(m, n)):
        for i in range(j + 1, m):
            l = rows[i][j] / rows[j][j]
            rows[i] = torch.cat([rows[i][:j], l.reshape(1), rows[i][j + 1:] - l * rows[j][j + 1:]])
    return torch.stack(rows)


for tag, shape in (("Square", (2, 4, 4)), ("Wide", (3, 5)), ("Tall", (5, 3))):
    A = torch.randn(*shape, dtype=D)
    a = leaf(A)
    LU = torch.stack([lu_no_pivot(x) for x in a.reshape(-1, *shape[-2:])]).reshape(shape)
    W = torch.randn(shape, dtype=D)
    (LU * W).sum().backward()
    emit(f"kNoPiv{tag}A", A); emit(f"kNoPiv{tag}LU", LU); emit(f"kNoPiv{tag}W", W); emit(f"kNoPiv{tag}Grad", a.grad)
    k = min(shape[-2:])
    a = leaf(A)
    LU = torch.stack([lu_no_pivot(x) for x in a.reshape(-1, *shape[-2:])]).reshape(shape)
    L = LU[..., :k].tril(-1) + torch.eye(shape[-2], k, dtype=D)
    U = LU[..., :k, :].triu()
    W1 = torch.randn(L.shape, dtype=D); W2 = torch.randn(U.shape, dtype=D)
    ((L * W1).sum() + (U * W2).sum()).backward()
    emit(f"kNoPiv{tag}W1", W1); emit(f"kNoPiv{tag}W2", W2); emit(f"kNoPiv{tag}LuGrad", a.grad)
# Diagonally dominant: partial pivoting swaps nothing, so torch's pivoted factors are the unpivoted
# ones (a check of the Doolittle reference above against torch's own kernel).
A = torch.randn(6, 6, dtype=D) + 8 * torch.eye(6, dtype=D)
LU, piv = torch.linalg.lu_factor(A)
assert torch.equal(piv, torch.arange(1, 7, dtype=torch.int32))
assert torch.allclose(LU, lu_no_pivot(A), rtol=0, atol=1e-14)
emit("kNoPivDominantA", A); emit("kNoPivDominantLU", LU)

write_header("linalg_solvers_golden.py", "colony::linalg_solvers_golden")
