# Writes double_backward_conv_golden.h: torch's WGAN-GP gradient penalty of small CNN critics and its
# gradients toward every critic parameter (second derivatives through conv2d, leaky_relu, the
# pools and linear), in float64 and float32, through the shared case emitter (tests/golden_cases.py).
#   /tmp/torch2/bin/python tests/autograd/double_backward_conv_golden.py > tests/autograd/double_backward_conv_golden.h
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from golden_cases import emit, fixed, r  # noqa: E402


def penalty(critic):
    """mean((|dD/dx|_2 - 1)^2) per sample, the gradient of D(x).sum() taken with create_graph."""
    def fn(x, *params):
        xs = x.detach().requires_grad_(True)
        d = critic(xs, *params)
        (g,) = torch.autograd.grad(d.sum(), xs, create_graph=True)
        return ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
    return fn


def conv_avgpool_critic(x, w1, b1, w2, b2, w3, b3):
    h = F.leaky_relu(F.conv2d(x, w1, b1, padding=1))
    h = F.conv2d(h, w2, b2, stride=2, padding=1)
    h = F.avg_pool2d(h, 3)
    return F.linear(h.flatten(1), w3, b3)


def conv_maxpool_critic(x, w1, b1, w2, w3, b3):
    h = F.leaky_relu(F.conv2d(x, w1, b1, padding=2, dilation=2))
    h = F.max_pool2d(h, 2)
    h = F.leaky_relu(F.conv2d(h, w2, groups=3))
    h = F.adaptive_avg_pool2d(h, (1, 1))
    return F.linear(h.flatten(1), w3, b3)


def cases():
    out = []
    for dt in (torch.float64, torch.float32):
        out.append(("conv_avgpool_gp", penalty(conv_avgpool_critic),
                    [fixed(r(2, 2, 6, 6, seed=1, dtype=dt)), r(3, 2, 3, 3, seed=2, dtype=dt, lo=-0.5, hi=0.5),
                     r(3, seed=3, dtype=dt, lo=-0.5, hi=0.5), r(4, 3, 3, 3, seed=4, dtype=dt, lo=-0.5, hi=0.5),
                     r(4, seed=5, dtype=dt, lo=-0.5, hi=0.5), r(1, 4, seed=6, dtype=dt), r(1, seed=7, dtype=dt)]))
        out.append(("conv_maxpool_gp", penalty(conv_maxpool_critic),
                    [fixed(r(2, 1, 8, 8, seed=11, dtype=dt)), r(3, 1, 3, 3, seed=12, dtype=dt),
                     r(3, seed=13, dtype=dt, lo=-0.5, hi=0.5), r(6, 1, 3, 3, seed=14, dtype=dt, lo=-0.5, hi=0.5),
                     r(1, 6, seed=15, dtype=dt), r(1, seed=16, dtype=dt)]))
    return out


emit("tests/autograd/double_backward_conv_golden.py", "colony::testing::double_backward_conv_golden", cases())
