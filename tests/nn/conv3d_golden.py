"""Writes tests/nn/conv3d_golden.h (through tests/golden_cases.py): torch's outputs and the gradients
of every input (input, weight, bias) of F.conv3d, F.conv_transpose3d and the Conv3d /
ConvTranspose3d modules, in float64 and float32: strides, padding (sizes, "same" with even
kernels, "valid"), dilation, groups, rows wide enough for the CPU kernel's vector loops, volumes over
several of its blocks, bias on and off, output_padding, output_size, unbatched input, and Conv3d's
padding modes. conv3d_test.cc checks them by case name.

    /tmp/torch2/bin/python tests/nn/conv3d_golden.py > tests/nn/conv3d_golden.h
"""
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, r  # noqa: E402

warnings.simplefilter("ignore")
CASES = []


def case(name, fn, inputs):
    for dtype, suffix in [(torch.float64, ""), (torch.float32, "_f32")]:
        CASES.append((name + suffix, fn, [x.to(dtype) for x in inputs]))


def conv(name, x, w, b=None, **kw):
    ins = [r(*x, seed=1), r(*w, seed=2)] + ([r(b, seed=3)] if b is not None else [])
    case(name, lambda *t: F.conv3d(t[0], t[1], t[2] if len(t) > 2 else None, **kw), ins)


def convt(name, x, w, b=None, **kw):
    ins = [r(*x, seed=4), r(*w, seed=5)] + ([r(b, seed=6)] if b is not None else [])
    case(name, lambda *t: F.conv_transpose3d(t[0], t[1], t[2] if len(t) > 2 else None, **kw), ins)


def module(name, m, x, **call):
    """m's forward with its weight and bias as the case's inputs 1 and 2 (conv3d_test.cc sets them)."""
    ins = [r(*x, seed=7), r(*m.weight.shape, seed=8), r(*m.bias.shape, seed=9)]

    def fn(x, w, b):
        m.to(x.dtype)
        return functional_call(m, {"weight": w, "bias": b}, (x,), call)
    case(name, fn, ins)


conv("c3_basic", [2, 2, 3, 4, 4], [3, 2, 3, 3, 3], 3, padding=1)
conv("c3_stride_nobias", [1, 2, 5, 4, 6], [2, 2, 2, 3, 3], stride=(2, 1, 2), padding=(0, 1, 2))
conv("c3_dilation", [1, 2, 5, 4, 6], [2, 2, 2, 3, 2], 2, dilation=(2, 1, 3), padding=1)
conv("c3_groups", [1, 4, 3, 5, 4], [4, 2, 2, 3, 2], 4, groups=2, stride=(1, 2, 1))
conv("c3_depthwise", [1, 3, 3, 4, 5], [3, 1, 3, 3, 3], 3, groups=3, padding=(1, 0, 1))
conv("c3_same_even", [1, 2, 3, 5, 6], [2, 2, 2, 3, 3], 2, padding="same", dilation=(1, 2, 1))
conv("c3_valid", [1, 2, 4, 5, 6], [2, 2, 3, 3, 3], 2, padding="valid", stride=2)
conv("c3_unbatched", [2, 3, 4, 5], [2, 2, 3, 2, 3], 2, padding=(1, 1, 0))
conv("c3_pointwise", [2, 3, 2, 4, 5], [4, 3, 1, 1, 1], 4, stride=(1, 2, 3))
# Rows wide enough for conv3d.cc's vector loops: stride 1 (the input gradient's row adds), stride 2
# with a width that stops the vectors at the input row's end (32) and one that leaves tails (37).
conv("c3_wide", [1, 2, 2, 3, 35], [2, 2, 2, 3, 3], 2, padding=1)
conv("c3_wide_stride2", [1, 2, 2, 3, 32], [3, 2, 2, 2, 3], 3, stride=(1, 1, 2), padding=(1, 0, 1))
conv("c3_wide_stride2_odd", [2, 1, 2, 2, 37], [2, 1, 1, 2, 3], stride=(2, 1, 2), padding=(0, 1, 1))
# 156 output rows of 4: more than one vol2col block of conv3d.cc's ~512 columns (128 rows, then 28).
conv("c3_blocks", [1, 1, 12, 13, 4], [2, 1, 3, 3, 3], 2, padding=1)
convt("ct3_wide_stride2", [1, 2, 2, 2, 19], [2, 2, 2, 2, 3], 2, stride=(1, 1, 2), padding=(0, 1, 1))
convt("ct3_basic", [2, 3, 2, 3, 2], [3, 2, 3, 3, 3], 2, stride=2, padding=1, output_padding=1)
convt("ct3_groups_dilation", [1, 4, 2, 3, 3], [4, 1, 2, 3, 2], 2, groups=2, stride=(1, 2, 2),
      output_padding=(0, 1, 0), dilation=(1, 2, 1))
convt("ct3_nobias", [1, 2, 2, 3, 2], [2, 3, 2, 2, 2], stride=(2, 1, 3), output_padding=(1, 0, 2))
convt("ct3_unbatched", [2, 2, 3, 3], [2, 2, 3, 3, 3], 2, padding=(1, 0, 1))
module("m3_reflect", nn.Conv3d(2, 2, 3, padding=(1, 2, 1), padding_mode="reflect", stride=(1, 2, 1)), [1, 2, 3, 4, 4])
module("m3_replicate_same", nn.Conv3d(2, 2, (3, 3, 2), padding="same", padding_mode="replicate"), [1, 2, 3, 4, 4])
module("m3_circular", nn.Conv3d(2, 4, 3, padding=1, padding_mode="circular", groups=2), [1, 2, 3, 3, 4])
module("mt3_output_size", nn.ConvTranspose3d(2, 2, 3, stride=2, padding=1), [1, 2, 2, 3, 2],
       output_size=[4, 6, 3])

emit("tests/nn/conv3d_golden.py", "colony::testing::conv3d_golden", CASES)
