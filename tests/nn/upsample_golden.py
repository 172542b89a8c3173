"""Golden values of tests/nn/upsample_test.cc: torch.nn.functional.interpolate, pixel_shuffle and
pixel_unshuffle on the closed-form input the test builds the same way (wave below), in float64 (the
output and the gradient of sum(output * wave(output.shape, 0.31, 0.2))) and in float32 (the output
only: it checks the positions and weights computed in float, as torch computes them).

    /tmp/torch2/bin/python tests/nn/upsample_golden.py > tests/nn/upsample_golden.h
"""
import math

import torch
import torch.nn.functional as F


def wave(shape, a, b, dtype=torch.float64):
    n = math.prod(shape)
    return torch.tensor([2.0 * math.sin(a * i + b) for i in range(n)], dtype=torch.float64).reshape(shape).to(dtype)


# (name, input shape, what the test calls: interpolate keywords, or ("shuffle"/"unshuffle", r))
CASES = [
    ("nearest_1d_size", [1, 2, 5], dict(size=8)),
    ("nearest_1d_scale2", [1, 2, 5], dict(scale_factor=2.0)),
    ("nearest_1d_down", [1, 2, 7], dict(size=3)),
    ("nearest_1d_scale1.7", [1, 2, 5], dict(scale_factor=1.7)),
    ("nearest_1d_scale1.7_recompute", [1, 2, 5], dict(scale_factor=1.7, recompute_scale_factor=True)),
    ("nearest_2d_size", [2, 2, 5, 7], dict(size=[3, 10])),
    ("nearest_3d_scale2", [1, 1, 3, 4, 5], dict(scale_factor=2.0)),
    ("nearest-exact_2d_size", [2, 2, 5, 7], dict(size=[3, 10], mode="nearest-exact")),
    ("nearest-exact_2d_scale", [1, 2, 5, 7], dict(scale_factor=[1.5, 0.6], mode="nearest-exact")),
    ("linear_size", [2, 3, 6], dict(size=11, mode="linear")),
    ("linear_size_ac", [2, 3, 6], dict(size=11, mode="linear", align_corners=True)),
    ("linear_down", [2, 3, 6], dict(scale_factor=0.5, mode="linear")),
    ("linear_scale2.3", [2, 3, 6], dict(scale_factor=2.3, mode="linear")),
    ("linear_to1_ac", [1, 1, 6], dict(size=1, mode="linear", align_corners=True)),
    ("bilinear_size", [1, 2, 5, 6], dict(size=[9, 4], mode="bilinear")),
    ("bilinear_size_ac", [1, 2, 5, 6], dict(size=[9, 4], mode="bilinear", align_corners=True)),
    ("bilinear_scale2", [1, 2, 5, 6], dict(scale_factor=2.0, mode="bilinear")),
    ("bilinear_scale0.7", [1, 2, 5, 6], dict(scale_factor=0.7, mode="bilinear")),
    ("bilinear_aa_down", [1, 2, 9, 11], dict(size=[3, 4], mode="bilinear", antialias=True)),
    ("bilinear_aa_scale0.4", [1, 2, 9, 11], dict(scale_factor=0.4, mode="bilinear", antialias=True)),
    ("bilinear_aa_ac", [1, 2, 9, 11], dict(size=[4, 5], mode="bilinear", antialias=True, align_corners=True)),
    ("bilinear_aa_up", [1, 2, 4, 5], dict(size=[7, 9], mode="bilinear", antialias=True)),
    ("bilinear_aa_mixed", [1, 1, 8, 3], dict(size=[3, 7], mode="bilinear", antialias=True)),
    ("bicubic_size", [1, 2, 5, 6], dict(size=[9, 4], mode="bicubic")),
    ("bicubic_size_ac", [1, 2, 5, 6], dict(size=[9, 4], mode="bicubic", align_corners=True)),
    ("bicubic_scale2", [1, 2, 5, 6], dict(scale_factor=2.0, mode="bicubic")),
    ("bicubic_same", [1, 2, 5, 6], dict(size=[5, 6], mode="bicubic")),
    ("bicubic_aa_down", [1, 2, 9, 11], dict(size=[3, 4], mode="bicubic", antialias=True)),
    ("bicubic_aa_up", [1, 2, 4, 5], dict(size=[7, 9], mode="bicubic", antialias=True)),
    ("trilinear_size", [1, 2, 3, 4, 5], dict(size=[5, 3, 7], mode="trilinear")),
    ("trilinear_size_ac", [1, 2, 3, 4, 5], dict(size=[5, 3, 7], mode="trilinear", align_corners=True)),
    ("area_1d", [1, 2, 7], dict(size=3, mode="area")),
    ("area_2d", [1, 2, 7, 9], dict(size=[3, 4], mode="area")),
    ("area_2d_scale", [1, 2, 8, 6], dict(scale_factor=0.5, mode="area")),
    ("area_3d", [1, 1, 5, 6, 7], dict(size=[2, 3, 4], mode="area")),
    ("area_up", [1, 1, 3, 2], dict(size=[5, 5], mode="area")),
    ("lanczos_down", [1, 2, 9, 11], dict(size=[3, 4], mode="lanczos", antialias=True)),
    ("lanczos_scale0.6", [1, 2, 9, 11], dict(scale_factor=0.6, mode="lanczos", antialias=True)),
    ("lanczos_up", [1, 2, 4, 5], dict(size=[7, 9], mode="lanczos", antialias=True)),
    ("lanczos_mixed", [1, 1, 8, 3], dict(size=[3, 7], mode="lanczos", antialias=True)),
    ("lanczos_long", [1, 1, 3, 300], dict(size=[2, 70], mode="lanczos", antialias=True)),
    # More than kMatrixMaxInput (64) input pixels: the resample kernel under the automatic choice.
    ("linear_long", [1, 1, 300], dict(size=301, mode="linear")),
    ("bicubic_long_aa", [1, 1, 2, 300], dict(size=[3, 40], mode="bicubic", antialias=True)),
    ("pixel_shuffle", [2, 8, 3, 2], ("shuffle", 2)),
    ("pixel_shuffle_5d", [2, 1, 9, 2, 2], ("shuffle", 3)),
    ("pixel_unshuffle", [1, 3, 4, 6], ("unshuffle", 2)),
]
FLOAT32 = ["nearest_1d_scale1.7", "nearest-exact_2d_scale", "linear_scale2.3", "bilinear_scale0.7",
           "bilinear_aa_scale0.4", "bicubic_size", "bicubic_aa_down", "trilinear_size_ac", "area_2d", "linear_long",
           "lanczos_scale0.6"]


def run(x, how):
    if isinstance(how, tuple):
        return F.pixel_shuffle(x, how[1]) if how[0] == "shuffle" else F.pixel_unshuffle(x, how[1])
    return F.interpolate(x, **how)


def fmt(t):
    return "{" + ", ".join(repr(float(v)) for v in t.detach().reshape(-1).tolist()) + "}"


def main():
    print(f"// Generated by tests/nn/upsample_golden.py (torch {torch.__version__}); do not edit.")
    print("#pragma once\n\n#include <map>\n#include <string>\n#include <vector>\n")
    print("namespace colony::testing {\n")
    print("// name.out and name.grad in float64, name.out32 in float32 (see upsample_golden.py).")
    print("inline const std::map<std::string, std::vector<double>>& upsample_golden() {")
    print("  static const std::map<std::string, std::vector<double>> values = {")
    for name, shape, how in CASES:
        x = wave(shape, 0.37, 0.1).requires_grad_()
        y = run(x, how)
        (y * wave(list(y.shape), 0.31, 0.2)).sum().backward()
        print(f'      {{"{name}.shape", {{{", ".join(str(s) for s in y.shape)}}}}},')
        print(f'      {{"{name}.out", {fmt(y)}}},')
        print(f'      {{"{name}.grad", {fmt(x.grad)}}},')
        if name in FLOAT32:
            print(f'      {{"{name}.out32", {fmt(run(wave(shape, 0.37, 0.1, torch.float32), how))}}},')
    print("  };\n  return values;\n}\n\n}  // namespace colony::testing")


main()
