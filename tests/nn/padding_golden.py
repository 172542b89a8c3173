"""Writes tests/nn/padding_golden.h (through tests/golden_cases.py): torch's outputs and input
gradients of F.pad in its four modes (1-, 2- and 3-D padding, batched and unbatched inputs, negative
pads that crop) and of the padding modules, in float64 and float32, which padding_test.cc checks by
case name, calling the same F::pad or module on the same inputs.

    /tmp/torch2/bin/python tests/nn/padding_golden.py > tests/nn/padding_golden.h
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, r  # noqa: E402

CASES = []


def q(*shape, seed):
    """r() on a grid of 1/16 (exact in float32 too, so the header stays short)."""
    return torch.round(r(*shape, seed=seed) * 16) / 16


def case(name, fn, *inputs, f32=True):
    """float64, and float32 too (name_f32) unless f32 is False."""
    for dtype, suffix in [(torch.float64, ""), (torch.float32, "_f32")][: 2 if f32 else 1]:
        CASES.append((name + suffix, fn, [x.to(dtype) for x in inputs]))


# (name, input shape, pad, mode, value): Colony's test calls F::pad with the same arguments.
PADS = [
    ("reflect3d", [2, 1, 3, 4, 3], (1, 2, 2, 1, 1, 2), "reflect", 0.0),
    ("replicate3d", [1, 2, 2, 3, 3], (2, 1, 0, 2, 1, 1), "replicate", 0.0),
    ("circular3d", [1, 2, 3, 2, 3], (1, 2, 2, 1, 2, 0), "circular", 0.0),
    ("reflect3d_unbatched", [1, 3, 4, 3], (2, 1, 3, 0, 1, 2), "reflect", 0.0),
    ("replicate3d_unbatched", [2, 2, 3, 2], (1, 1, 1, 1, 1, 1), "replicate", 0.0),
    ("circular3d_unbatched", [1, 2, 3, 3], (3, 3, 3, 2, 2, 0), "circular", 0.0),
    ("reflect2d", [2, 2, 5, 4], (1, 2, 4, 3), "reflect", 0.0),
    ("reflect2d_unbatched", [2, 5, 6], (5, 0, 0, 4), "reflect", 0.0),
    ("replicate2d_unbatched", [2, 3, 4], (3, 7, 2, 0), "replicate", 0.0),
    ("circular2d", [1, 2, 5, 6], (6, 1, 2, 5), "circular", 0.0),
    ("reflect1d", [2, 3, 7], (3, 6), "reflect", 0.0),
    ("replicate1d_unbatched", [3, 7], (4, 2), "replicate", 0.0),
    ("circular1d", [2, 3, 7], (7, 3), "circular", 0.0),
    # negative amounts crop, in every mode
    ("reflect_negative", [2, 2, 6], (-2, 3), "reflect", 0.0),
    ("reflect2d_negative", [1, 2, 5, 6], (2, -3, -1, 4), "reflect", 0.0),
    ("replicate_negative", [1, 2, 5, 6], (-1, 4, 3, -2), "replicate", 0.0),
    ("replicate3d_negative", [1, 1, 4, 5, 6], (-5, 2, 1, -1, -3, 0), "replicate", 0.0),
    ("circular_negative", [1, 2, 5, 6], (2, -1, -1, 3), "circular", 0.0),
    ("circular3d_negative", [1, 1, 4, 5, 6], (-2, 3, 1, -1, -1, -1), "circular", 0.0),
    ("constant_negative", [1, 2, 5, 6], (-1, 2, -2, 1), "constant", 1.5),
    ("constant4d", [2, 2, 3, 2], (1, 0, 2, 1, 0, 1, 1, 1), "constant", -0.5),
]
for name, shape, pad, mode, value in PADS:
    case(name, lambda x, pad=pad, mode=mode, value=value: F.pad(x, pad, mode=mode, value=value if mode == "constant" else None),
         q(*shape, seed=len(CASES)), f32="negative" not in name)

# (name, module, input shape): the test builds the same module.
MODULES = [
    ("ZeroPad1d", nn.ZeroPad1d(2), [2, 5]),
    ("ZeroPad2d", nn.ZeroPad2d((1, 2, 0, 3)), [1, 2, 3, 4]),
    ("ZeroPad3d", nn.ZeroPad3d(1), [1, 2, 3, 2]),
    ("ConstantPad1d", nn.ConstantPad1d((3, -1), 2.5), [2, 3, 5]),
    ("ConstantPad2d", nn.ConstantPad2d(1, -1.0), [2, 3, 4]),
    ("ConstantPad3d", nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 0.5), [1, 2, 2, 3, 4]),
    ("ReflectionPad1d", nn.ReflectionPad1d((2, 3)), [2, 5]),
    ("ReflectionPad2d", nn.ReflectionPad2d((1, 2, 2, 0)), [1, 2, 4, 5]),
    ("ReflectionPad3d", nn.ReflectionPad3d(1), [1, 2, 3, 3]),
    ("ReplicationPad1d", nn.ReplicationPad1d(3), [1, 2, 4]),
    ("ReplicationPad2d", nn.ReplicationPad2d((0, 2, 3, 1)), [2, 3, 4]),
    ("ReplicationPad3d", nn.ReplicationPad3d((1, 2, 0, 1, 2, 1)), [1, 1, 2, 3, 4]),
    ("CircularPad1d", nn.CircularPad1d((4, 2)), [2, 3, 5]),
    ("CircularPad2d", nn.CircularPad2d(2), [2, 3, 4]),
    ("CircularPad3d", nn.CircularPad3d((1, 0, 2, 1, 1, 2)), [1, 1, 3, 3, 2]),
]
for name, module, shape in MODULES:
    case("module_" + name, lambda x, m=module: m(x), q(*shape, seed=len(CASES)), f32=False)

emit("tests/nn/padding_golden.py", "colony::testing::padding_golden", CASES)
