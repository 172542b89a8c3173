"""Writes tests/nn/misc_modules_golden.h, torch's values for tests/nn/misc_modules_test.cc:

    /tmp/torch2/bin/python tests/nn/misc_modules_golden.py > tests/nn/misc_modules_golden.h   # torch 2.15.0

F.glu, nn.Softmax2d, F.bilinear, F.upsample_nearest / F.upsample_bilinear, nn.CrossMapLRN2d and
nn.AdaptiveLogSoftmaxWithLoss (output, loss, log_prob, predict, with the weights as inputs so that
every weight's gradient is compared), in float64 and float32; outputs and the gradients of every
floating input of sum(out * grad_output) (tests/golden_cases.py).

CrossMapLRN2d: the values are torch's (its autograd.Function); its gradients are autograd's through
cross_map_lrn2d_reference below, a line-by-line transcription of torch's forward with out-of-place
ops, checked here to give torch's values. torch's own backward is not the gradient of its forward
(torch.autograd.gradcheck fails it), so Colony gives the exact gradient and this is what it is
compared with.
"""
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules._functions import CrossMapLRN2d as TorchCrossMapLRN2d

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, fixed, r, t  # noqa: E402

warnings.filterwarnings("ignore")


def cross_map_lrn2d_reference(x, size, alpha, beta, k):
    channels = x.size(1)
    sq = x * x
    pre_pad = int((size - 1) / 2 + 1)
    pre_pad_crop = min(pre_pad, channels)
    scales = [sum(sq[:, c] for c in range(pre_pad_crop))]
    for c in range(1, channels):
        s = scales[c - 1]
        if c < channels - pre_pad + 1:
            s = s + sq[:, c + pre_pad - 1]
        if c > pre_pad:
            s = s - sq[:, c - pre_pad]
        scales.append(s)
    scale = torch.stack(scales, 1) * (alpha / size) + k
    return torch.pow(scale, -beta) * x


def cross_map_lrn2d(x, size, alpha, beta, k):
    want = TorchCrossMapLRN2d.apply(x.detach(), size, alpha, beta, k)
    got = cross_map_lrn2d_reference(x, size, alpha, beta, k)
    assert torch.allclose(got.detach(), want, rtol=1e-6 if x.dtype == torch.float32 else 1e-13, atol=0), (size, x.shape)
    return got


# AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=[4, 8], div_value=2): head [6, 8] (4 classes, 2 clusters),
# tail.0 [4, 8] then [4, 4], tail.1 [2, 8] then [4, 2].
ASM_SHAPES = [(6, 8), (4, 8), (4, 4), (2, 8), (4, 2)]


def asm_module(head_bias, weights):
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [4, 8], div_value=2.0, head_bias=head_bias).to(weights[0].dtype)
    params = {"head.weight": weights[0], "tail.0.0.weight": weights[1], "tail.0.1.weight": weights[2],
              "tail.1.0.weight": weights[3], "tail.1.1.weight": weights[4]}
    if head_bias:
        params["head.bias"] = weights[5]
    return m, params


def asm(what, head_bias):
    def fn(x, target, *weights):
        m, params = asm_module(head_bias, weights)
        # The module with the given tensors as its parameters (gradients flow to them).
        with torch.nn.utils.stateless._reparametrize_module(m, params):
            if what in ("output", "loss"):
                return getattr(m(x, target), what)
            return getattr(m, what)(x)
    return fn


def asm_weights(dtype, head_bias):
    ws = [r(*s, seed=20 + i, dtype=dtype, lo=-1, hi=1) for i, s in enumerate(ASM_SHAPES)]
    if head_bias:
        ws.append(r(6, seed=30, dtype=dtype, lo=-1, hi=1))
    return ws


def cases():
    out = []
    for dtype, suffix in ((torch.float64, ""), (torch.float32, " f32")):
        def R(*shape, seed=0, lo=-2.0, hi=2.0):
            return r(*shape, seed=seed, dtype=dtype, lo=lo, hi=hi)
        out += [
            ("glu" + suffix, lambda x: F.glu(x), [R(3, 4, seed=1)]),
            ("glu(dim=0)" + suffix, lambda x: F.glu(x, 0), [R(4, 3, 2, seed=2)]),
            ("glu(dim=1)" + suffix, lambda x: F.glu(x, 1), [R(2, 6, 2, seed=3)]),
            ("softmax2d 4d" + suffix, lambda x: nn.Softmax2d()(x), [R(2, 3, 2, 2, seed=4)]),
            ("softmax2d 3d" + suffix, lambda x: nn.Softmax2d()(x), [R(3, 2, 4, seed=5)]),
            ("bilinear" + suffix, lambda a, b, w, c: F.bilinear(a, b, w, c),
             [R(5, 3, seed=6), R(5, 4, seed=7), R(2, 3, 4, seed=8), R(2, seed=9)]),
            ("bilinear no bias" + suffix, lambda a, b, w: F.bilinear(a, b, w),
             [R(5, 3, seed=10), R(5, 4, seed=11), R(2, 3, 4, seed=12)]),
            ("bilinear batch dims" + suffix, lambda a, b, w, c: F.bilinear(a, b, w, c),
             [R(2, 3, 2, seed=13), R(2, 3, 3, seed=14), R(4, 2, 3, seed=15), R(4, seed=16)]),
            ("bilinear 1-d" + suffix, lambda a, b, w, c: F.bilinear(a, b, w, c),
             [R(3, seed=17), R(2, seed=18), R(2, 3, 2, seed=19), R(2, seed=20)]),
            ("upsample_nearest scale 2" + suffix, lambda x: F.upsample_nearest(x, scale_factor=2), [R(1, 2, 2, 3, seed=21)]),
            ("upsample_nearest size" + suffix, lambda x: F.upsample_nearest(x, size=(5, 4)), [R(1, 2, 2, 3, seed=22)]),
            ("upsample_bilinear scale 2" + suffix, lambda x: F.upsample_bilinear(x, scale_factor=2), [R(1, 2, 2, 3, seed=23)]),
            ("upsample_bilinear size" + suffix, lambda x: F.upsample_bilinear(x, size=(5, 4)), [R(2, 1, 3, 3, seed=24)]),
        ]
        for size, channels in ((3, 7), (4, 7), (5, 7), (5, 2), (1, 3)):
            out.append((f"cross_map_lrn2d size {size} C {channels}" + suffix,
                        lambda x, size=size: cross_map_lrn2d(x, size, 0.5, 0.75, 1.0), [R(2, channels, 2, 3, seed=25 + size)]))
        out.append(("cross_map_lrn2d alpha beta k" + suffix,
                    lambda x: cross_map_lrn2d(x, 3, 2.0, 0.5, 2.0), [R(1, 5, 2, 2, seed=31)]))
        x = R(7, 8, seed=40)
        target = fixed(t([0, 5, 11, 3, 8, 6, 9], torch.int64))
        for head_bias in (False, True):
            hb = " head_bias" if head_bias else ""
            for what in ("output", "loss", "log_prob", "predict"):
                inputs = [x, target] if what in ("output", "loss") else [x]
                fn = asm(what, head_bias)
                if what in ("log_prob", "predict"):
                    fn = (lambda f: lambda x, *w: f(x, None, *w))(fn)
                out.append((f"asm {what}{hb}" + suffix, fn, inputs + asm_weights(dtype, head_bias)))
        # Only shortlist targets (no cluster runs), and one unbatched example.
        out.append(("asm output shortlist only" + suffix, asm("output", False),
                    [x, fixed(t([0, 1, 2, 3, 3, 2, 1], torch.int64))] + asm_weights(dtype, False)))
        out.append(("asm output unbatched" + suffix, asm("output", False),
                    [R(8, seed=41), fixed(t(9, torch.int64))] + asm_weights(dtype, False)))
    return out


if __name__ == "__main__":
    emit("tests/nn/misc_modules_golden.py", "colony::misc_modules_golden", cases())
