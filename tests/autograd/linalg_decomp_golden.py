"""Writes linalg_decomp_golden.h: torch.linalg's values and gradients for linalg_decomp_test.cc.

Run: /tmp/torch2/bin/python tests/autograd/linalg_decomp_golden.py > tests/autograd/linalg_decomp_golden.h
Inputs come from torch.manual_seed(0) and are written out too, so the test needs no generator of its
own. Gradients are of L = sum(out_i * W_i) with the weights written beside them; for eigh and svd
only sign-invariant outputs enter L (eigenvalues, V*V, U*U, U diag(S) Vh).
"""
import torch

from linalg_golden_common import D, emit, leaf, spd, write_header  # noqa: F401

torch.manual_seed(0)


def sym(*shape):
    x = torch.randn(*shape, dtype=D)
    return (x + x.mT) / 2


# inv, batched 2x3x3
A = torch.randn(2, 3, 3, dtype=D)
W = torch.randn(2, 3, 3, dtype=D)
a = leaf(A); y = torch.linalg.inv(a); (y * W).sum().backward()
emit("kInvA", A); emit("kInvW", W); emit("kInvOut", y); emit("kInvGrad", a.grad)

# det / slogdet, batched 3x4x4 with a singular (rank 3) and a negative-determinant matrix
A = torch.randn(3, 4, 4, dtype=D)
A[1, 3] = A[1, 0] + 2 * A[1, 2]
A[2] = A[2][[1, 0, 2, 3]]
Wd = torch.randn(3, dtype=D)
a = leaf(A); d = torch.linalg.det(a); (d * Wd).sum().backward()
emit("kDetA", A); emit("kDetW", Wd); emit("kDetOut", d); emit("kDetGrad", a.grad)
sign, logabs = torch.linalg.slogdet(A)
emit("kSlogdetSign", sign); emit("kSlogdetLogabs", logabs)
A2 = torch.randn(2, 4, 4, dtype=D)
a = leaf(A2); s, l = torch.linalg.slogdet(a); (l * Wd[:2]).sum().backward()
emit("kSlogdetA", A2); emit("kSlogdetGrad", a.grad)

# solve: matrices with broadcast batch, vectors, left=False
A = torch.randn(2, 3, 3, dtype=D)
B = torch.randn(3, 2, dtype=D)
W = torch.randn(2, 3, 2, dtype=D)
a, b = leaf(A), leaf(B); x = torch.linalg.solve(a, b); (x * W).sum().backward()
emit("kSolveA", A); emit("kSolveB", B); emit("kSolveW", W); emit("kSolveOut", x)
emit("kSolveGradA", a.grad); emit("kSolveGradB", b.grad)
Bv = torch.randn(2, 3, dtype=D)
emit("kSolveBv", Bv); emit("kSolveOutV", torch.linalg.solve(A, Bv))
Br = torch.randn(2, 4, 3, dtype=D)
emit("kSolveBr", Br); emit("kSolveOutRight", torch.linalg.solve(A, Br, left=False))

# cholesky, batched SPD 2x4x4, lower and upper, with the gradient
A = spd(2, 4, 4)
W = torch.randn(2, 4, 4, dtype=D)
a = leaf(A); L = torch.linalg.cholesky(a); (L * W).sum().backward()
emit("kCholA", A); emit("kCholW", W); emit("kCholL", L); emit("kCholGrad", a.grad)
a = leaf(A); U = torch.linalg.cholesky(a, upper=True); (U * W).sum().backward()
emit("kCholU", U); emit("kCholGradUpper", a.grad)

# qr: tall 5x3 and wide 3x5, reduced and complete (R's signs are LAPACK's)
for tag, shape in (("Tall", (5, 3)), ("Wide", (3, 5))):
    A = torch.randn(*shape, dtype=D)
    emit(f"kQr{tag}A", A)
    for mode in ("reduced", "complete"):
        a = leaf(A); q, r = torch.linalg.qr(a, mode=mode)
        M = f"kQr{tag}{mode.capitalize()}"
        emit(M + "Q", q); emit(M + "R", r)
        if mode == "reduced" or shape[0] <= shape[1]:
            Wq = torch.randn(q.shape, dtype=D); Wr = torch.randn(r.shape, dtype=D)
            ((q * Wq).sum() + (r * Wr).sum()).backward()
            emit(M + "Wq", Wq); emit(M + "Wr", Wr); emit(M + "Grad", a.grad)

# eigh, batched symmetric 2x4x4: eigenvalues, and the gradient of sum(L*W1) + sum(V*V*W2)
A = sym(2, 4, 4)
W1 = torch.randn(2, 4, dtype=D); W2 = torch.randn(2, 4, 4, dtype=D)
a = leaf(A); L, V = torch.linalg.eigh(a); ((L * W1).sum() + (V * V * W2).sum()).backward()
emit("kEighA", A); emit("kEighW1", W1); emit("kEighW2", W2); emit("kEighL", L); emit("kEighGrad", a.grad)
emit("kEighLUpper", torch.linalg.eigvalsh(A.triu() + A.triu(1).mT, UPLO="U"))

# svd: tall 5x3, wide 3x4: S, and the gradient of sum(S*W1) + sum(U*U*W2) + sum(Vh*Vh*W3)
for tag, shape in (("Tall", (5, 3)), ("Wide", (3, 4))):
    A = torch.randn(*shape, dtype=D)
    k = min(shape)
    W1 = torch.randn(k, dtype=D); W2 = torch.randn(shape[0], k, dtype=D); W3 = torch.randn(k, shape[1], dtype=D)
    a = leaf(A); U, S, Vh = torch.linalg.svd(a, full_matrices=False)
    ((S * W1).sum() + (U * U * W2).sum() + (Vh * Vh * W3).sum()).backward()
    emit(f"kSvd{tag}A", A); emit(f"kSvd{tag}W1", W1); emit(f"kSvd{tag}W2", W2); emit(f"kSvd{tag}W3", W3)
    emit(f"kSvd{tag}S", S); emit(f"kSvd{tag}Grad", a.grad)

# compositions
A = torch.randn(4, 3, dtype=D)
emit("kPinvA", A); emit("kPinvOut", torch.linalg.pinv(A))
R = torch.randn(5, 2, dtype=D) @ torch.randn(2, 4, dtype=D)
emit("kRankA", R); emit("kRankOut", torch.linalg.matrix_rank(R).to(D))
N = torch.randn(2, 3, 4, dtype=D)
emit("kNormA", N)
for name, ord in (("Fro", "fro"), ("Nuc", "nuc"), ("One", 1), ("MinusOne", -1), ("Inf", float("inf")),
                  ("MinusInf", float("-inf")), ("Two", 2), ("MinusTwo", -2)):
    emit(f"kMatrixNorm{name}", torch.linalg.matrix_norm(N, ord=ord))
emit("kVectorNorm3", torch.linalg.vector_norm(N, ord=3, dim=(0, 2)))
X = torch.randn(2, 3, dtype=D); Y = torch.randn(2, 3, dtype=D)
emit("kCrossX", X); emit("kCrossY", Y); emit("kCrossOut", torch.linalg.cross(X, Y))
P = torch.randn(3, 3, dtype=D) / 2
emit("kPowerA", P); emit("kPower5", torch.linalg.matrix_power(P, 5)); emit("kPowerMinus3", torch.linalg.matrix_power(P, -3))
M1 = torch.randn(2, 5, dtype=D); M2 = torch.randn(5, 3, dtype=D); M3 = torch.randn(3, 4, dtype=D); v = torch.randn(4, dtype=D)
emit("kDot1", M1); emit("kDot2", M2); emit("kDot3", M3); emit("kDotV", v)
emit("kMultiDot", torch.linalg.multi_dot([M1, M2, M3, v]))

# float32: inv, cholesky, svdvals, eigvalsh, det computed in float32 by torch
F = torch.randn(2, 3, 3, dtype=D)
emit("kF32A", F)
F32 = F.float()
emit("kF32Inv", torch.linalg.inv(F32)); emit("kF32Det", torch.linalg.det(F32))
emit("kF32Svdvals", torch.linalg.svdvals(F32))
S32 = spd(2, 3, 3)
emit("kF32Spd", S32); emit("kF32Chol", torch.linalg.cholesky(S32.float()))
emit("kF32Eigvalsh", torch.linalg.eigvalsh(S32.float()))

write_header("linalg_decomp_golden.py", "colony::linalg_golden")
