# Writes float_bits_golden.h: torch's nextafter (float64, float32: toward larger, smaller, equal, +-0,
# the subnormals, +-inf, NaN; gradients), frexp (its mantissa and its int32 exponent as two cases:
# normals, subnormals, +-0, +-inf, NaN; the mantissa's gradient) and bitwise_left_shift /
# bitwise_right_shift (int64, int32: negative values, shifts by 0, the width and beyond, negative
# counts), and the rounding forms round(x, decimals) (float64, float32, float16: ties, negative
# decimals, +-0, inf, NaN) and div(a, b, rounding_mode) ("trunc", "floor"; float and int64, a number
# divisor; zero gradients), through the shared case emitter (tests/golden_cases.py).
#   /tmp/torch2/bin/python tests/autograd/float_bits_golden.py > tests/autograd/float_bits_golden.h
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden_cases import emit, fixed, t  # noqa: E402

INF = float("inf")
NAN = float("nan")
A = [1.0, 1.0, 1.0, 0.0, -0.0, 0.0, -1.5, 1e-310, INF, -INF, NAN, 2.0, 3.0e38]
B = [2.0, 0.0, 1.0, 1.0, -1.0, -0.0, -2.0, 0.0, 0.0, INF, 1.0, NAN, INF]
X = [0.0, -0.0, 1.0, 8.0, 0.3, -5.5, 1e-40, 1e-310, 3.0e38, INF, -INF, NAN, 0.75, -1.0]
SA = [1, -8, 5, 3, -3, 7, -1, 123456789, -123456789, 1]
SB = [1, 2, 63, 64, -1, 70, 0, 5, 31, 31]


def mantissa(x):
    return torch.frexp(x).mantissa


def exponent(x):
    return torch.frexp(x).exponent


R = [1.2345, -2.5, 1234.5678, 0.125, -0.0, 0.05, 2.675, -15.0, INF, NAN]
DA = [7.0, -7.0, 7.5, -7.5, 0.0, 1.0, -0.5, 3.0]
DB = [2.0, 2.0, -2.0, 2.0, -3.0, 0.0, 0.25, 1.5]
IDA = [7, -7, 7, -7, 0, 9, -9]
IDB = [2, 2, -2, -2, 3, 3, 4]


def cases():
    out = []
    for dt in (torch.float64, torch.float32, torch.float16):
        for d in (1, 2, -1):
            out.append((f"round_decimals_{d}", lambda x, d=d: torch.round(x, decimals=d), [t(R, dt)]))
    for dt in (torch.float64, torch.float32):
        out.append(("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"), [t(DA, dt), t(DB, dt)]))
        out.append(("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), [t(DA, dt), t(DB, dt)]))
        out.append(("div_floor_by_0.3", lambda a: torch.div(a, 0.3, rounding_mode="floor"), [t(DA, dt)]))
    out.append(("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
                [fixed(t(IDA, torch.int64)), fixed(t(IDB, torch.int64))]))
    out.append(("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"),
                [fixed(t(IDA, torch.int64)), fixed(t(IDB, torch.int64))]))
    out.append(("div_trunc_by_-2", lambda a: torch.div(a, -2, rounding_mode="trunc"), [fixed(t(IDA, torch.int32))]))
    for dt in (torch.float64, torch.float32):
        out.append(("nextafter", torch.nextafter, [t(A, dt), t(B, dt)]))
        # Broadcast: a [2, 1] against b [3], the gradient summed back.
        out.append(("nextafter", torch.nextafter, [t([1.0, -2.0], dt, (2, 1)), t([0.0, 5.0, 1.0], dt)]))
        out.append(("frexp_mantissa", mantissa, [t(X, dt)]))
        out.append(("frexp_exponent", exponent, [fixed(t(X, dt))]))
    for dt in (torch.int64, torch.int32):
        out.append(("bitwise_left_shift", torch.bitwise_left_shift, [fixed(t(SA, dt)), fixed(t(SB, dt))]))
        out.append(("bitwise_right_shift", torch.bitwise_right_shift, [fixed(t(SA, dt)), fixed(t(SB, dt))]))
        out.append(("left_shift_by_2", lambda a: a << 2, [fixed(t(SA, dt))]))
        out.append(("right_shift_by_3", lambda a: a >> 3, [fixed(t(SA, dt))]))
    return out


emit("tests/autograd/float_bits_golden.py", "colony::testing::float_bits_golden", cases())
