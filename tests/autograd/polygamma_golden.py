# Writes polygamma_golden.h: torch's polygamma(n, x) for n = 0..4 (float64, float32; gradients,
# which are polygamma(n + 1, x)) over positive and negative x, the poles (0, -1, -2), +-inf and NaN,
# an int64 input (computed in float32) and the in-place member polygamma_, through the shared case
# emitter (tests/golden_cases.py).
#   /tmp/torch2/bin/python tests/autograd/polygamma_golden.py > tests/autograd/polygamma_golden.h
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden_cases import emit, fixed, t  # noqa: E402

INF = float("inf")
NAN = float("nan")
X = [0.25, 0.5, 1.0, 1.5, 2.75, 7.0, 9.5, 30.0, 1e4, -0.5, -1.25, -2.75]
POLES = [0.0, -1.0, -2.0, INF, -INF, NAN]


def inplace(n):
    def fn(x):
        y = x * 1
        y.polygamma_(n)
        return y
    return fn


def cases():
    out = []
    for dt in (torch.float64, torch.float32):
        for n in range(5):
            out.append((f"polygamma{n}", lambda x, n=n: torch.polygamma(n, x), [t(X, dt)]))
            out.append((f"polygamma{n}", lambda x, n=n: torch.polygamma(n, x), [fixed(t(POLES, dt))]))
        out.append(("polygamma_2", inplace(2), [t(X, dt, (3, 4))]))
        out.append(("polygamma_3", inplace(3), [t(X, dt, (3, 4))]))
    out.append(("polygamma1", lambda x: torch.polygamma(1, x), [fixed(t([1, 2, 5, -3], torch.int64))]))
    out.append(("polygamma3", lambda x: torch.polygamma(3, x), [fixed(t([1, 2, 5, -3], torch.int64))]))
    return out


emit("tests/autograd/polygamma_golden.py", "colony::testing::polygamma_golden", cases())
