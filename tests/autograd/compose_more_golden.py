# Writes compose_more_golden.h: torch's isin, block_diag, diagflat, dist, renorm, logdet,
# nuclear_norm and unravel_index (values, and gradients of every floating input) in float64 and
# float32, through the shared case emitter (tests/golden_cases.py).
#   /tmp/torch2/bin/python tests/autograd/compose_more_golden.py > tests/autograd/compose_more_golden.h
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden_cases import emit, fixed, r, t  # noqa: E402

NAN = float("nan")


def cases():
    out = []
    for dt in (torch.float64, torch.float32):
        out.append(("isin", lambda a, b: torch.isin(a, b), [fixed(t([1.0, 2.0, 3.0, NAN, -0.0, 5.0], dt, (2, 3))),
                                                           fixed(t([2.0, NAN, 0.0, 7.0], dt))]))
        out.append(("isin_invert", lambda a, b: torch.isin(a, b, invert=True),
                    [fixed(t([1.0, 2.0, 3.0, NAN], dt)), fixed(t([2.0, NAN], dt))]))
        out.append(("isin", lambda a, b: torch.isin(a, b), [fixed(t([1, 2, 3], torch.int64)), fixed(t([2.0, 2.5], dt))]))
        out.append(("block_diag3", lambda a, b, c: torch.block_diag(a, b, c),
                    [t(0.75, dt), r(3, seed=2, dtype=dt), r(2, 2, seed=3, dtype=dt)]))
        out.append(("block_diag3", lambda a, b, c: torch.block_diag(a, b, c),
                    [r(2, 3, seed=4, dtype=dt), fixed(t([[1, 2]], torch.int64)), r(1, 1, seed=5, dtype=dt)]))
        out.append(("diagflat", lambda a: torch.diagflat(a), [r(2, 2, seed=6, dtype=dt)]))
        out.append(("diagflat_1", lambda a: torch.diagflat(a, 1), [r(3, seed=7, dtype=dt)]))
        out.append(("diagflat_m2", lambda a: torch.diagflat(a, -2), [r(2, seed=8, dtype=dt)]))
        for p, name in ((2.0, "dist_2"), (1.0, "dist_1"), (3.0, "dist_3"), (float("inf"), "dist_inf")):
            out.append((name, lambda a, b, p=p: torch.dist(a, b, p), [r(2, 3, seed=9, dtype=dt), r(3, seed=10, dtype=dt)]))
        out.append(("dist_0", lambda a, b: torch.dist(a, b, 0), [fixed(t([1.0, 2.0, 3.0], dt)), fixed(t([1.0, 0.0, 3.5], dt))]))
        out.append(("renorm_2_0_1", lambda a: torch.renorm(a, 2, 0, 1.0), [r(3, 4, seed=11, dtype=dt)]))
        out.append(("renorm_1_1_1p5", lambda a: torch.renorm(a, 1, 1, 1.5), [r(3, 4, seed=12, dtype=dt)]))
        out.append(("renorm_3_m1_0p5", lambda a: torch.renorm(a, 3, -1, 0.5), [r(2, 2, 3, seed=13, dtype=dt)]))
        out.append(("logdet", torch.logdet, [t([[2.0, 0.5, 0.1], [0.3, 1.5, 0.2], [0.0, 0.4, 1.0]], dt)]))
        out.append(("logdet", torch.logdet, [t([[[1.0, 2.0], [3.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]], dt)]))
        out.append(("nuclear_norm", lambda a: torch.nuclear_norm(a), [r(3, 4, seed=14, dtype=dt)]))
        out.append(("nuclear_norm_dims_keep", lambda a: torch.nuclear_norm(a, dim=(0, 2), keepdim=True),
                    [r(3, 2, 4, seed=15, dtype=dt)]))
    out.append(("unravel_2_3", lambda i: torch.stack(torch.unravel_index(i, (2, 3))),
                [fixed(t([0, 1, 5, 6, -1, -7, 4], torch.int64))]))
    out.append(("unravel_4_1_5", lambda i: torch.stack(torch.unravel_index(i, (4, 1, 5))),
                [fixed(t([[0, 19], [7, 12]], torch.int32))]))
    return out


emit("tests/autograd/compose_more_golden.py", "colony::testing::compose_more_golden", cases())
