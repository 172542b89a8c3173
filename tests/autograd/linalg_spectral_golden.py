"""Writes linalg_spectral_golden.h: torch.linalg's eigenvalues, singular values and their gradients
at sizes past one 32-column panel, for linalg_spectral_test.cc.

Run: /tmp/torch2/bin/python tests/autograd/linalg_spectral_golden.py > tests/autograd/linalg_spectral_golden.h
The inputs are not written out: the test builds them too, from the golden-ratio sequence
G(shape, offset)[i] = frac((i + offset) * 0.6180339887498949) - 0.5 over the flattened shape (exact
in float64 on both sides; benchmarks/linalg_bench.cc uses the same sequence). G alone is nearly of
low rank (its singular values fall to rounding size), so the inputs are M = G + 2 G(offset 11)^2,
whose eigenvalues and singular values are apart enough for the gradients to be well defined.
Gradients are of sum(out * W) with W = G of out's shape at offset 7.
"""
import torch

from linalg_golden_common import D, emit, write_header


def golden(*shape, offset=0):
    count = 1
    for s in shape:
        count *= s
    v = ((torch.arange(count, dtype=D) + offset) * 0.6180339887498949).frac() - 0.5
    return v.reshape(shape)


def mixed(*shape):
    return golden(*shape) + 2 * golden(*shape, offset=11) ** 2


def symmetric(*shape):
    x = mixed(*shape)
    return x + x.mT


# eigh: one 100 x 100 (float64 and float32) and a batch of 3 x 40 x 40 with eigvalsh's gradient.
S100 = symmetric(100, 100)
emit("kEigvalsh100", torch.linalg.eigvalsh(S100))
emit("kEigvalsh100F32", torch.linalg.eigvalsh(S100.float()))
S3 = symmetric(3, 40, 40)
a = S3.clone().requires_grad_(True)
L = torch.linalg.eigvalsh(a)
(L * golden(3, 40, offset=7)).sum().backward()
emit("kEigvalshBatch", L); emit("kEigvalshBatchGrad", a.grad)

# svd: tall 120 x 100, wide 70 x 130 (float64 and float32), and svdvals' gradient of a 50 x 40.
T = mixed(120, 100)
W = mixed(70, 130)
emit("kSvdvalsTall", torch.linalg.svdvals(T)); emit("kSvdvalsTallF32", torch.linalg.svdvals(T.float()))
emit("kSvdvalsWide", torch.linalg.svdvals(W)); emit("kSvdvalsWideF32", torch.linalg.svdvals(W.float()))
a = mixed(50, 40).requires_grad_(True)
s = torch.linalg.svdvals(a)
(s * golden(40, offset=7)).sum().backward()
emit("kSvdvals50x40", s); emit("kSvdvals50x40Grad", a.grad)

write_header("linalg_spectral_golden.py", "colony::linalg_spectral_golden")
