# Writes math_extra_golden.h: torch's fmax, fmin (NaN-ignoring, ties, +-0; gradients), gcd and lcm
# (int64, int32: signs, zeros), ldexp, deg2rad, rad2deg (float64, float32, int64; gradients) and
# isposinf, isneginf, isreal, through the shared case emitter (tests/golden_cases.py).
#   /tmp/torch2/bin/python tests/autograd/math_extra_golden.py > tests/autograd/math_extra_golden.h
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden_cases import emit, fixed, t  # noqa: E402

INF = float("inf")
NAN = float("nan")
A = [1.0, NAN, 2.0, 3.0, NAN, -0.0, 0.0, 5.0, -INF, INF, -2.5]
B = [2.0, 1.0, NAN, 3.0, NAN, 0.0, -0.0, -1.0, 1.0, NAN, -7.0]
IA = [12, -12, 0, 0, 7, -9, 17, 6, -4, 1]
IB = [18, 18, 0, -5, 0, -6, 5, -4, 6, 1]
X = [0.0, -0.0, 1.0, -45.0, 90.0, 180.0, 360.5, INF, -INF, NAN]
E = [0.0, 1.0, -1.0, 3.0, -3.0, 10.0, 2.0, 0.0, 1.0, 0.0]


def cases():
    out = []
    for dt in (torch.float64, torch.float32):
        out.append(("fmax", torch.fmax, [t(A, dt), t(B, dt)]))
        out.append(("fmin", torch.fmin, [t(A, dt), t(B, dt)]))
        # Broadcast: a [2, 1] against b [3], gradients summed back.
        out.append(("fmax", torch.fmax, [t([1.0, NAN], dt, (2, 1)), t([0.5, 1.0, NAN], dt)]))
        out.append(("fmin", torch.fmin, [t([1.0, NAN], dt, (2, 1)), t([0.5, 1.0, NAN], dt)]))
        out.append(("deg2rad", torch.deg2rad, [t(X, dt)]))
        out.append(("rad2deg", torch.rad2deg, [t(X, dt)]))
        out.append(("ldexp", torch.ldexp, [t(X, dt), fixed(t(E, torch.int64))]))
        out.append(("ldexp", torch.ldexp, [t([1.5, -0.75, 3.0], dt), t([2.0, -1.5, 0.5], dt)]))
        out.append(("isposinf", torch.isposinf, [fixed(t(A, dt))]))
        out.append(("isneginf", torch.isneginf, [fixed(t(A, dt))]))
        out.append(("isreal", torch.isreal, [fixed(t(A, dt))]))
    for dt in (torch.int64, torch.int32):
        out.append(("fmax", torch.fmax, [fixed(t(IA, dt)), fixed(t(IB, dt))]))
        out.append(("fmin", torch.fmin, [fixed(t(IA, dt)), fixed(t(IB, dt))]))
        out.append(("gcd", torch.gcd, [fixed(t(IA, dt)), fixed(t(IB, dt))]))
        out.append(("lcm", torch.lcm, [fixed(t(IA, dt)), fixed(t(IB, dt))]))
        out.append(("gcd", torch.gcd, [fixed(t(IA, dt, (2, 5))), fixed(t([4, -6, 0, 9, 10], dt))]))
        out.append(("deg2rad", torch.deg2rad, [fixed(t(IA, dt))]))
        out.append(("rad2deg", torch.rad2deg, [fixed(t(IA, dt))]))
        out.append(("isposinf", torch.isposinf, [fixed(t(IA, dt))]))
        out.append(("isneginf", torch.isneginf, [fixed(t(IA, dt))]))
        out.append(("isreal", torch.isreal, [fixed(t(IA, dt))]))
    out.append(("ldexp", torch.ldexp, [fixed(t([1, 3, -5], torch.int64)), fixed(t([2, -1, 0], torch.int64))]))
    out.append(("gcd", torch.gcd, [fixed(t([-(2**63), 0], torch.int64)), fixed(t([0, 0], torch.int64))]))
    out.append(("deg2rad", torch.deg2rad, [fixed(t([True, False], torch.bool))]))
    return out


emit("tests/autograd/math_extra_golden.py", "colony::testing::math_extra_golden", cases())
