"""Writes tests/nn/fold_golden.h (through tests/golden_cases.py): torch's outputs and input gradients
of F.unfold (im2col), F.fold (col2im) and Tensor.unfold (the sliding-window view), in float64 and
float32: odd sizes, dilation, padding, stride larger than the kernel, unbatched inputs, overlapping
and gapped windows. fold_test.cc checks them by case name with the same arguments.

    /tmp/torch2/bin/python tests/nn/fold_golden.py > tests/nn/fold_golden.h
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, r  # noqa: E402

CASES = []


def q(*shape, seed):
    """r() on a grid of 1/16 (exact in float32 too, so the header stays short)."""
    return torch.round(r(*shape, seed=seed) * 16) / 16


def case(name, fn, shape):
    for dtype, suffix in [(torch.float64, ""), (torch.float32, "_f32")]:
        CASES.append((name + suffix, fn, [q(*shape, seed=len(CASES)).to(dtype)]))


# (name, input shape, kernel_size, dilation, padding, stride): F.unfold, and F.fold of columns of
# the shape unfold gives back to the same image size.
WINDOWS = [
    ("k23", [2, 3, 5, 6], (2, 3), 1, 0, 1),
    ("k3_pad1", [1, 2, 5, 4], 3, 1, 1, 1),
    ("dilation", [1, 2, 7, 6], (3, 2), (2, 3), 0, 1),
    ("dilation_pad_stride", [2, 1, 7, 8], (2, 3), (2, 1), (1, 2), (2, 3)),
    ("stride_gt_kernel", [1, 2, 7, 9], 2, 1, 1, 3),
    ("stride_gt_kernel_k1", [1, 2, 5, 7], (1, 2), 1, 0, (3, 4)),
    ("unbatched", [3, 5, 4], 3, 1, (1, 0), (1, 2)),
    ("big_pad", [1, 1, 3, 2], 2, 2, 3, 2),
]
for name, shape, k, d, p, s in WINDOWS:
    case("unfold_" + name, lambda x, k=k, d=d, p=p, s=s: F.unfold(x, k, dilation=d, padding=p, stride=s), shape)
    cols = F.unfold(torch.zeros(shape), k, dilation=d, padding=p, stride=s)
    out = tuple(shape[-2:])
    case("fold_" + name, lambda c, out=out, k=k, d=d, p=p, s=s: F.fold(c, out, k, dilation=d, padding=p, stride=s),
         list(cols.shape))

# (name, input shape, dim, size, step): Tensor.unfold.
VIEWS = [
    ("view_overlap", [3, 7], 1, 3, 1),
    ("view_step2", [2, 10, 2], 1, 4, 2),
    ("view_gaps", [9, 2], 0, 2, 3),
    ("view_negative_dim", [2, 3, 6], -1, 6, 1),
]
for name, shape, dim, size, step in VIEWS:
    case(name, lambda x, dim=dim, size=size, step=step: x.unfold(dim, size, step), shape)

emit("tests/nn/fold_golden.py", "colony::testing::fold_golden", CASES)
