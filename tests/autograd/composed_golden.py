"""Writes tests/autograd/composed_golden.h (through tests/golden_cases.py): torch's outputs and
input gradients for the composed shape and math ops that composed_ops_test.cc checks by case name,
calling the same op on the same inputs.

    /tmp/torch2/bin/python tests/autograd/composed_golden.py > tests/autograd/composed_golden.h
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, r, t  # noqa: E402

F64, F32, I64 = torch.float64, torch.float32, torch.int64
CASES = []


def case(name, fn, *inputs):
    CASES.append((name, fn, inputs))


M = t([[1., 4, 9, 16], [2, 3, 5, 8], [0, -1, 7, 7]])
P1 = t([[0., 0], [1, 2], [3, 1], [1, 1]])
P2 = t([[0., 0], [1, 1], [2, 5]])

# shapes
case("tile", lambda x: torch.tile(x, (2, 1, 3)), r(2, 3))
case("broadcast_to", lambda x: torch.broadcast_to(x, (4, -1, 3)), r(2, 1))
case("tensor_split_sections", lambda x: torch.cat([p.sum(1, keepdim=True) * (i + 1) for i, p in enumerate(torch.tensor_split(x, 3, 1))], 1), r(2, 7))
case("tensor_split_indices", lambda x: torch.cat([p * (i + 1) for i, p in enumerate(torch.tensor_split(x, [1, 5, 3, 9, -2]))]), r(7, seed=1))
case("hstack", lambda a, b: torch.hstack([a, b]), r(2, 3), r(2, 1, seed=1))
case("vstack", lambda a, b: torch.vstack([a, b]), r(3), r(2, 3, seed=1))
case("dstack", lambda a, b: torch.dstack([a, b]), r(3), r(3, seed=1))
case("column_stack", lambda a, b, c: torch.column_stack([a, b, c]), r(2), r(2, 2, seed=1), r(2, seed=2))
case("rot90_1", lambda x: torch.rot90(x, 1, [0, 1]), r(2, 3))
case("rot90_2", lambda x: torch.rot90(x, 2, [1, 2]), r(2, 3, 4))
case("rot90_-1", lambda x: torch.rot90(x, -1, [-1, 0]), r(2, 3))
case("rot90_5", lambda x: torch.rot90(x, 5, [1, 0]), r(3, 2))
case("take_along_dim", lambda x: torch.take_along_dim(x, torch.tensor([[0, 2, 2], [3, 1, 0]]), 1), r(2, 4))
case("take_along_dim_broadcast", lambda x: torch.take_along_dim(x, torch.tensor([[[1], [0]]]), 2), r(3, 1, 4))
case("take_along_dim_flat", lambda x: torch.take_along_dim(x, torch.tensor([5, 0, 5])), r(2, 3))
case("diag_embed", lambda x: torch.diag_embed(x), r(2, 3))
case("diag_embed_offset", lambda x: torch.diag_embed(x, 1), r(2, 3))
case("diag_embed_negative", lambda x: torch.diag_embed(x, -2, 0, 2), r(2, 3))
case("cartesian_prod", lambda a, b: torch.cartesian_prod(a, b), r(2), r(3, seed=1))
case("combinations", lambda x: torch.combinations(x, 3), r(5))
case("combinations_replacement", lambda x: torch.combinations(x, 2, with_replacement=True), r(3))
case("fliplr", lambda x: torch.fliplr(x), r(2, 3, 2))
case("flipud", lambda x: torch.flipud(x), r(3, 2))

# math
case("diff", lambda x: torch.diff(x), M)
case("diff_n2_dim0", lambda x: torch.diff(x, n=2, dim=0), M)
case("diff_prepend_append", lambda x, p, a: torch.diff(x, prepend=p, append=a), M, r(3, 1), r(3, 2, seed=1))
case("diff_too_far", lambda x: torch.diff(x, n=5), M)
case("aminmax_min", lambda x: torch.aminmax(x).min, M)
case("aminmax_dim_max", lambda x: torch.aminmax(x, dim=1, keepdim=True).max, M)
case("std_mean_std", lambda x: torch.std_mean(x, dim=1)[0], M)
case("var_mean_mean", lambda x: torch.var_mean(x, dim=0, unbiased=False)[1], M)
case("var_mean_var", lambda x: torch.var_mean(x, dim=0, unbiased=False)[0], M)
case("kron", lambda a, b: torch.kron(a, b), r(2, 3), r(2, 2, seed=1))
case("kron_ranks", lambda a, b: torch.kron(a, b), r(3), r(2, 2, seed=1))
for p in [2.0, 1.0, 0.0, math.inf, 3.0, 0.5]:
    case(f"cdist_p{p}", lambda a, b, p=p: torch.cdist(a, b, p=p), P1, P2)
case("cdist_mm", lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), P1, P2)
case("cdist_many_rows", lambda a, b: torch.cdist(a, b), r(30, 3), r(4, 3, seed=1))
case("cdist_batched", lambda a, b: torch.cdist(a, b), r(2, 3, 4), r(5, 4, seed=1))
P3 = t([[0., 0], [1, 2], [3, 1], [0, 0]])
for p in [2.0, 1.0, math.inf, 1.5]:
    case(f"pdist_p{p}", lambda x, p=p: torch.pdist(x, p=p), P3)
case("dot", lambda a, b: torch.dot(a, b), r(5), r(5, seed=1))
case("inner", lambda a, b: torch.inner(a, b), r(2, 3), r(4, 3, seed=1))
case("mv", lambda a, b: torch.mv(a, b), r(3, 4), r(4, seed=1))
case("addmm", lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=-2), r(3), r(2, 4, seed=1), r(4, 3, seed=2))
case("addmm_beta0", lambda i, a, b: torch.addmm(i, a, b, beta=0), t([math.nan, 1.0]), r(3, 4, seed=1), r(4, 2, seed=2))
case("addmv", lambda i, a, b: torch.addmv(i, a, b, alpha=3), r(3), r(3, 2, seed=1), r(2, seed=2))
case("addr", lambda i, a, b: torch.addr(i, a, b, beta=2), r(2, 3), r(2, seed=1), r(3, seed=2))
case("baddbmm", lambda i, a, b: torch.baddbmm(i, a, b, beta=0.25, alpha=1.5), r(1, 3), r(2, 2, 4, seed=1), r(2, 4, 3, seed=2))
case("addbmm", lambda i, a, b: torch.addbmm(i, a, b), r(2, 3), r(4, 2, 5, seed=1), r(4, 5, 3, seed=2))
case("signbit", lambda x: torch.signbit(x), t([-0.0, 0.0, -1.0, 2.0, math.nan, -math.nan, -math.inf]))
case("heaviside", lambda x, v: torch.heaviside(x.detach(), v.detach()), t([-1.0, 0.0, 2.0, 0.0]), t([0.5, 0.25, 3.0, -1.0]))
case("float_power", lambda a, b: torch.float_power(a, b), t([2.0, 3.0, 0.5], F32), t([3.0, -0.5, 2.0], F32))
case("trapezoid", lambda y: torch.trapezoid(y), M)
case("trapezoid_dx", lambda y: torch.trapezoid(y, dx=0.5, dim=0), M)
case("trapezoid_x", lambda y, x: torch.trapezoid(y, x), M, t([0.0, 1.0, 3.0, 3.5]))
case("trapezoid_x_nd", lambda y, x: torch.trapezoid(y, x, dim=0), M, r(3, 4))
case("cumulative_trapezoid", lambda y: torch.cumulative_trapezoid(y, dx=2.0), M)
case("cumulative_trapezoid_x", lambda y, x: torch.cumulative_trapezoid(y, x), M, t([0.0, 1.0, 3.0, 3.5]))
case("cov", lambda x: torch.cov(x), M)
case("cov_weights", lambda x: torch.cov(x, correction=2, fweights=torch.tensor([1, 2, 1, 3]), aweights=torch.tensor([0.5, 1.0, 1.0, 2.0], dtype=F64)), M)
case("cov_correction0_fweights", lambda x: torch.cov(x, correction=0, fweights=torch.tensor([1, 2, 1, 3])), M)
case("cov_vector", lambda x: torch.cov(x), t([1.0, 2.0, 4.0, 7.0]))
case("corrcoef", lambda x: torch.corrcoef(x), M)
case("isclose", lambda a, b: torch.isclose(a, b), t([1.0, 2.0, math.inf, math.nan, -math.inf, 1e-9]), t([1.00001, 2.1, math.inf, math.nan, math.inf, 0.0]))
case("isclose_equal_nan", lambda a, b: torch.isclose(a, b, rtol=0.1, atol=0, equal_nan=True), t([1.0, 2.0, math.inf, math.nan, -math.inf, 1e-9]), t([1.00001, 2.1, math.inf, math.nan, math.inf, 0.0]))
case("isclose_int", lambda a, b: torch.isclose(a, b, rtol=0.3), t([1, 2, 10], I64), t([1, 3, 8], I64))
case("logspace", lambda: torch.logspace(-1, 2, 5, dtype=F64))
case("logspace_base2_f32", lambda: torch.logspace(0, 3, 4, base=2.0))

emit("tests/autograd/composed_golden.py", "colony::testing::composed_golden", CASES)
