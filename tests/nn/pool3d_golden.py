"""Writes tests/nn/pool3d_golden.h (through tests/golden_cases.py): torch's outputs and input
gradients of the 3-D pools (max with indices, average with every option, adaptive average and
max, max unpooling), F.lp_pool1d/2d/3d and F.fractional_max_pool2d/3d with fixed _random_samples,
in float64 and float32. A case named *_idx returns the indices instead of the output. pool3d_test.cc
runs the same calls by case name.

    /tmp/torch2/bin/python tests/nn/pool3d_golden.py > tests/nn/pool3d_golden.h
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, fixed, r  # noqa: E402

CASES = []


def q(*shape, seed, step=16, lo=-2.0):
    """r() on a grid of 1/step (exact in float32; step 2 makes ties)."""
    return torch.round(r(*shape, seed=seed, lo=lo) * step) / step


def case(name, fn, shape, step=16, lo=-2.0, samples=None):
    for dtype, suffix in [(torch.float64, ""), (torch.float32, "_f32")]:
        inputs = [q(*shape, seed=len(CASES), step=step, lo=lo).to(dtype)]
        if samples is not None:
            inputs.append(fixed(samples.to(dtype)))
        CASES.append((name + suffix, fn, inputs))


def with_idx(name, fn, shape, step=16, samples=None):
    """The output case and the indices case (fn returns (output, indices))."""
    case(name, lambda *a: fn(*a)[0], shape, step, samples=samples)
    case(name + "_idx", lambda *a: fn(*a)[1], shape, step, samples=samples)


# Max pooling (pool3d_test.cc's kMax has the same arguments).
with_idx("max_k2", lambda x: F.max_pool3d(x, 2, return_indices=True), [1, 2, 4, 4, 6])
with_idx("max_k3s2p1", lambda x: F.max_pool3d(x, 3, 2, 1, return_indices=True), [1, 2, 5, 6, 5])
with_idx("max_dil_ceil", lambda x: F.max_pool3d(x, (2, 3, 2), (2, 1, 2), (1, 0, 1), dilation=(1, 2, 1),
                                                 ceil_mode=True, return_indices=True), [1, 2, 5, 7, 6])
with_idx("max_ties", lambda x: F.max_pool3d(x, 2, 1, return_indices=True), [1, 2, 4, 4, 4], step=2)
with_idx("max_unbatched", lambda x: F.max_pool3d(x, (1, 2, 2), (1, 2, 1), return_indices=True), [2, 3, 4, 5])

# Average pooling.
case("avg_k2", lambda x: F.avg_pool3d(x, 2), [1, 2, 4, 4, 6])
case("avg_k3s2p1", lambda x: F.avg_pool3d(x, 3, 2, 1), [1, 2, 5, 6, 5])
case("avg_k3s2p1_exclude_pad", lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False), [1, 2, 5, 6, 5])
case("avg_ceil", lambda x: F.avg_pool3d(x, (2, 3, 2), (2, 2, 3), (1, 1, 0), ceil_mode=True), [1, 2, 5, 6, 7])
case("avg_ceil_exclude_pad", lambda x: F.avg_pool3d(x, (2, 3, 2), (2, 2, 3), (1, 1, 0), ceil_mode=True,
                                                     count_include_pad=False), [1, 2, 5, 6, 7])
case("avg_divisor", lambda x: F.avg_pool3d(x, 2, 1, 1, divisor_override=3), [1, 2, 3, 4, 3])
case("avg_unbatched", lambda x: F.avg_pool3d(x, (1, 2, 3), (1, 1, 2)), [2, 3, 4, 5])

# Adaptive pooling.
case("aavg", lambda x: F.adaptive_avg_pool3d(x, (3, 2, 4)), [1, 2, 5, 4, 6])
case("aavg_none", lambda x: F.adaptive_avg_pool3d(x, (None, 3, None)), [1, 2, 3, 5, 4])
case("aavg_up", lambda x: F.adaptive_avg_pool3d(x, (4, 5, 3)), [1, 2, 3, 2, 3])
case("aavg_unbatched", lambda x: F.adaptive_avg_pool3d(x, 2), [3, 5, 4, 3])
with_idx("amax", lambda x: F.adaptive_max_pool3d(x, (3, 2, 4), return_indices=True), [1, 2, 5, 4, 6])
with_idx("amax_none", lambda x: F.adaptive_max_pool3d(x, (2, None, 3), return_indices=True), [1, 2, 4, 3, 5])
with_idx("amax_up", lambda x: F.adaptive_max_pool3d(x, (4, 5, 3), return_indices=True), [1, 2, 3, 2, 3])
with_idx("amax_ties_unbatched", lambda x: F.adaptive_max_pool3d(x, 2, return_indices=True), [2, 5, 4, 4], step=2)


def unpool(x, **kw):
    y, i = F.max_pool3d(x, 2, return_indices=True)
    return F.max_unpool3d(y, i, 2, **kw)


case("unpool", lambda x: unpool(x), [1, 2, 4, 4, 6])
case("unpool_size", lambda x: unpool(x, output_size=[5, 5, 7]), [1, 2, 5, 5, 7])
case("unpool_size5_unbatched", lambda x: unpool(x, output_size=[1, 2, 4, 5, 5]), [2, 4, 4, 4])
case("unpool_stride", lambda x: F.max_unpool3d(*F.max_pool3d(x, 3, 2, 1, return_indices=True), 3, 2, 1),
     [1, 1, 5, 5, 5])

# Power-average pooling (positive inputs where p is not an integer).
case("lp1d_p2", lambda x: F.lp_pool1d(x, 2, 3, 2), [2, 3, 9])
case("lp1d_p3_ceil", lambda x: F.lp_pool1d(x, 3, 2, ceil_mode=True), [2, 2, 7])
case("lp2d_p1_5", lambda x: F.lp_pool2d(x, 1.5, (2, 3), 1), [1, 2, 5, 6], lo=0.25)
case("lp2d_p2_ceil", lambda x: F.lp_pool2d(x, 2, 2, ceil_mode=True), [2, 2, 5, 5])
case("lp2d_inf", lambda x: F.lp_pool2d(x, float("inf"), 2), [1, 2, 4, 6])
case("lp3d_p2", lambda x: F.lp_pool3d(x, 2, 2), [1, 2, 4, 4, 6])
case("lp3d_p1_5_stride", lambda x: F.lp_pool3d(x, 1.5, (2, 2, 3), (1, 2, 2)), [1, 2, 3, 5, 6], lo=0.25)
case("lp3d_ninf_unbatched", lambda x: F.lp_pool3d(x, -float("inf"), 2), [2, 4, 4, 4])

# Fractional max pooling with fixed samples ([N, C, 2] or [N, C, 3] in [0, 1)).
S2 = torch.tensor([[[0.1, 0.7], [0.93, 0.3]], [[0.5, 0.0], [0.42, 0.99]]], dtype=torch.float64)
S3 = torch.tensor([[[0.1, 0.7, 0.35], [0.93, 0.3, 0.61]], [[0.5, 0.0, 0.77], [0.42, 0.99, 0.2]]], dtype=torch.float64)
with_idx("frac2d", lambda x, s: F.fractional_max_pool2d(x, 2, output_size=(4, 5), _random_samples=s,
                                                        return_indices=True), [2, 1, 9, 11], samples=S2[:, 1:])
with_idx("frac2d_ratio", lambda x, s: F.fractional_max_pool2d(x, (3, 2), output_ratio=(0.5, 0.7), _random_samples=s,
                                                              return_indices=True), [1, 2, 10, 9], samples=S2)
with_idx("frac2d_tight_unbatched", lambda x, s: F.fractional_max_pool2d(x, 2, output_size=(6, 1), _random_samples=s,
                                                                        return_indices=True), [2, 7, 5],
         samples=S2[:1])
with_idx("frac3d", lambda x, s: F.fractional_max_pool3d(x, 2, output_size=(3, 4, 2), _random_samples=s,
                                                        return_indices=True), [2, 1, 6, 8, 7], samples=S3[:, :1])
with_idx("frac3d_ratio_unbatched", lambda x, s: F.fractional_max_pool3d(x, (2, 1, 3), output_ratio=(0.5, 0.6, 0.4),
                                                                        _random_samples=s, return_indices=True),
         [2, 6, 5, 9], samples=S3[1:])

emit("tests/nn/pool3d_golden.py", "colony::testing::pool3d_golden", CASES)
