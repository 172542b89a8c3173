# Writes window_golden.h: torch's window functions (hann, hamming, blackman, bartlett, kaiser) in
# float64 and float32, symmetric and periodic, at the lengths with their own branches (0, 1, 2, even,
# odd), and torch.i0 / torch.special.i1 with their gradients in float64 and float32 (and an int64
# input, computed in float32), through the shared case emitter (tests/golden_cases.py).
#   /tmp/torch2/bin/python tests/autograd/window_golden.py > tests/autograd/window_golden.h
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden_cases import emit, fixed, t  # noqa: E402

SUFFIX = {torch.float64: "f64", torch.float32: "f32"}


def window_cases():
    """Each window case's one input is fixed([window_length, periodic, param1, param2]) in float64;
    the name says the function and the dtype (window_test.cc builds the call from both)."""
    cases = []
    for dtype in (torch.float64, torch.float32):
        for n in (0, 1, 2, 5, 8, 13):
            for periodic in (False, True):
                def hann(p, n=n, periodic=periodic, dtype=dtype):
                    return torch.hann_window(n, periodic, dtype=dtype)

                def hamming(p, n=n, periodic=periodic, dtype=dtype, a=0.54, b=0.46):
                    return torch.hamming_window(n, periodic, a, b, dtype=dtype)

                def hamming_ab(p, n=n, periodic=periodic, dtype=dtype):
                    return torch.hamming_window(n, periodic, 0.6, 0.3, dtype=dtype)

                def blackman(p, n=n, periodic=periodic, dtype=dtype):
                    return torch.blackman_window(n, periodic, dtype=dtype)

                def bartlett(p, n=n, periodic=periodic, dtype=dtype):
                    return torch.bartlett_window(n, periodic, dtype=dtype)

                def kaiser(p, n=n, periodic=periodic, dtype=dtype):
                    return torch.kaiser_window(n, periodic, 12.0, dtype=dtype)

                def kaiser_beta(p, n=n, periodic=periodic, dtype=dtype):
                    return torch.kaiser_window(n, periodic, 3.5, dtype=dtype)

                s = SUFFIX[dtype]
                p = float(periodic)
                cases += [
                    (f"hann_window_{s}", hann, [fixed(t([n, p, 0, 0]))]),
                    (f"hamming_window_{s}", hamming, [fixed(t([n, p, 0.54, 0.46]))]),
                    (f"hamming_window_{s}", hamming_ab, [fixed(t([n, p, 0.6, 0.3]))]),
                    (f"blackman_window_{s}", blackman, [fixed(t([n, p, 0, 0]))]),
                    (f"bartlett_window_{s}", bartlett, [fixed(t([n, p, 0, 0]))]),
                    (f"kaiser_window_{s}", kaiser, [fixed(t([n, p, 12.0, 0]))]),
                    (f"kaiser_window_{s}", kaiser_beta, [fixed(t([n, p, 3.5, 0]))]),
                ]
    # The defaults: periodic, the default dtype (float32), kaiser's beta 12.
    for name in ("hann", "hamming", "blackman", "bartlett", "kaiser"):
        fn = getattr(torch, name + "_window")
        cases.append((f"{name}_window_default", lambda p, fn=fn: fn(10), [fixed(t([10, 1, 0, 0]))]))
    return cases


BESSEL_X = [0.0, -0.0, 1e-10, 0.5, -0.5, 1.0, -1.0, 2.5, -3.75, 7.9, 8.0, 8.1, -8.0, 12.0, -20.0, 50.0, 85.0,
            -85.0, 700.0, 720.0, float("inf"), float("-inf"), float("nan")]
BESSEL_GRAD_X = [0.0, 1e-10, 0.3, -0.7, 1.0, 2.5, -4.0, 7.5, 8.5, -12.0, 30.0]


def bessel_cases():
    cases = []
    for dtype in (torch.float64, torch.float32):
        # Values over the whole range (no gradient: it overflows with the function), then gradients
        # where they are finite.
        cases.append(("i0", torch.i0, [fixed(t(BESSEL_X, dtype))]))
        cases.append(("special_i1", torch.special.i1, [fixed(t(BESSEL_X, dtype))]))
        cases.append(("i0", torch.i0, [t(BESSEL_GRAD_X, dtype)]))
        cases.append(("special_i1", torch.special.i1, [t(BESSEL_GRAD_X, dtype)]))
    ints = fixed(t([-5, -1, 0, 1, 3, 9], torch.int64))
    cases.append(("i0", torch.i0, [ints]))
    cases.append(("special_i1", torch.special.i1, [ints]))
    return cases


emit("tests/autograd/window_golden.py", "colony::testing::window_golden", window_cases() + bessel_cases())
