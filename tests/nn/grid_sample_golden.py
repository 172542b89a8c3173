"""Writes tests/nn/grid_sample_golden.h (through tests/golden_cases.py): torch's outputs and the
gradients w.r.t. input and grid of F.grid_sample, in float64 and float32: every mode x padding_mode x
align_corners on 4-D inputs (bicubic included), a sample of them on 5-D inputs (tricubic included), with grids that reach
outside [-1, 1] and hit the borders exactly (-1, 1, and the grid values that land on the first and
last pixels' centers); F.affine_grid with theta's gradient; F.channel_shuffle and
F.local_response_norm. grid_sample_test.cc checks them by case name.

    /tmp/torch2/bin/python tests/nn/grid_sample_golden.py > tests/nn/grid_sample_golden.h
"""
import os
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, r  # noqa: E402

warnings.simplefilter("ignore")
CASES = []


def q(*shape, seed, scale=1.0):
    """r() * scale on a grid of 1/16: exact in float32, and every grid value's pixel coordinate exact
    too (the sizes below make (size - 1) / 2 and size / 2 binary fractions), so torch and Colony
    agree on which side of a pixel boundary each falls."""
    return torch.round(r(*shape, seed=seed) * scale * 16) / 16


def grid_of(shape, seed):
    """Values in [-2.5, 2.5], a few pinned to the exact borders: -1 and 1, and -7/8, 7/8, -3/4, 3/4,
    which align_corners=False maps onto the first and last pixels' centers of sizes 8 and 4."""
    g = q(*shape, seed=seed, scale=1.25)
    flat = g.view(-1)
    pins = [-1.0, 1.0, -0.875, 0.875, -0.75, 0.75, 1.0, -1.0]
    for i, v in enumerate(pins):
        flat[(i * 7 + 3) % flat.numel()] = v
    return g


def case(name, fn, inputs):
    for dtype, suffix in [(torch.float64, ""), (torch.float32, "_f32")]:
        CASES.append((name + suffix, fn, [x.to(dtype) for x in inputs]))


MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]

# 4-D: input [2, 2, 4, 8], grid [2, 3, 3, 2]: every combination.
x4 = q(2, 2, 4, 8, seed=1)
g4 = grid_of([2, 3, 3, 2], seed=2)
for mode in MODES:
    for padding in PADDINGS:
        for align in (False, True):
            name = f"gs4_{mode}_{padding}_{'ac' if align else 'noac'}"
            case(name, lambda x, g, m=mode, p=padding, a=align: F.grid_sample(x, g, mode=m, padding_mode=p,
                                                                               align_corners=a), [x4, g4])

# 5-D: input [1, 2, 3, 4, 8], grid [1, 2, 2, 3, 3]: a sample.
x5 = q(1, 2, 3, 4, 8, seed=3)
g5 = grid_of([1, 2, 2, 3, 3], seed=4)
for mode, padding, align in [("bilinear", "zeros", False), ("bilinear", "border", False),
                             ("bilinear", "reflection", False), ("bilinear", "reflection", True),
                             ("nearest", "zeros", True), ("nearest", "border", False),
                             ("bicubic", "zeros", False), ("bicubic", "border", True),
                             ("bicubic", "reflection", False)]:
    name = f"gs5_{mode}_{padding}_{'ac' if align else 'noac'}"
    case(name, lambda x, g, m=mode, p=padding, a=align: F.grid_sample(x, g, mode=m, padding_mode=p,
                                                                       align_corners=a), [x5, g5])

# affine_grid: theta's gradient, both dims, both align_corners, a unit size.
th2 = q(2, 2, 3, seed=5)
th3 = q(1, 3, 4, seed=6)
for align in (False, True):
    tag = "ac" if align else "noac"
    case(f"affine2_{tag}", lambda t, a=align: F.affine_grid(t, [2, 3, 4, 5], align_corners=a), [th2])
    case(f"affine3_{tag}", lambda t, a=align: F.affine_grid(t, [1, 1, 2, 3, 4], align_corners=a), [th3])
case("affine2_unit", lambda t: F.affine_grid(t, [2, 1, 1, 3], align_corners=False), [th2])

# A spatial transformer: affine_grid into grid_sample, gradients reaching theta through the grid.
case("stn", lambda x, t: F.grid_sample(x, F.affine_grid(t, [2, 2, 3, 5], align_corners=False),
                                       align_corners=False), [x4, th2])

case("channel_shuffle", lambda x: F.channel_shuffle(x, 3), [q(2, 6, 2, 3, seed=7)])
case("channel_shuffle_3d", lambda x: F.channel_shuffle(x, 2), [q(1, 4, 5, seed=8)])
case("lrn3", lambda x: F.local_response_norm(x, 3), [q(2, 5, 4, seed=9)])
case("lrn4", lambda x: F.local_response_norm(x, 2, alpha=0.5, beta=0.6, k=2.0), [q(2, 4, 3, 2, seed=10)])
case("lrn5", lambda x: F.local_response_norm(x, 4, alpha=0.3), [q(1, 5, 2, 2, 3, seed=11)])

emit("tests/nn/grid_sample_golden.py", "colony::testing::grid_sample_golden", CASES)
