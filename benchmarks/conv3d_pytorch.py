"""torch.nn.functional.conv3d, to compare with benchmarks/conv3d_bench.

    python benchmarks/conv3d_pytorch.py --threads T [--trials R]

The same cases, timing and output lines as conv3d_bench.cc: float32 on the CPU, 32 -> 64 channels
3x3x3 padding 1 over [2, 32, 16, 32, 32], 64 -> 128 channels 3x3x3 stride 2 padding 1 over
[2, 64, 16, 32, 32] and C3D's first layer, 3 -> 64 channels 3x3x3 padding 1 over
[2, 3, 16, 112, 112], forward under no_grad and forward + backward of sum(out * g) reaching input,
weight and bias, their .grad set to None first, torch.set_num_threads(T).
"""
import sys

import torch
import torch.nn.functional as F

from bench_timing import print_fwd_and_both, threads_trials

CASES = [("c3d_32to64_s1", [2, 32, 16, 32, 32], 64, 1), ("c3d_64to128_s2", [2, 64, 16, 32, 32], 128, 2),
         ("c3d_conv1", [2, 3, 16, 112, 112], 64, 1)]


def main() -> int:
    args = threads_trials(__doc__.splitlines()[0])
    gen = torch.Generator().manual_seed(1)
    for name, shape, out_channels, stride in CASES:
        x = torch.randn(*shape, generator=gen).requires_grad_()
        w = (torch.randn(out_channels, shape[1], 3, 3, 3, generator=gen) * 0.05).requires_grad_()
        b = torch.randn(out_channels, generator=gen).requires_grad_()
        with torch.no_grad():
            g = torch.randn(F.conv3d(x, w, b, stride=stride, padding=1).shape, generator=gen)

        def fwd():
            with torch.no_grad():
                F.conv3d(x, w, b, stride=stride, padding=1)

        def both():
            x.grad = None
            w.grad = None
            b.grad = None
            (F.conv3d(x, w, b, stride=stride, padding=1) * g).sum().backward()

        print_fwd_and_both(name, fwd, both, args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
