"""torch.nn.functional.grid_sample, to compare with benchmarks/grid_sample_bench.

    python benchmarks/grid_sample_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as grid_sample_bench.cc: float32 on the CPU,
[8, 64, 64, 64] at affine_grid of 1.1 * rotation(0.2) shifted by (0.05, -0.03), forward under no_grad
and forward + backward of sum(out * g) reaching input and grid, their .grad set to None first,
torch.set_num_threads(T).
"""
import math
import sys

import torch
import torch.nn.functional as F

from bench_timing import print_fwd_and_both, threads_trials

CASES = [("bilinear", "zeros"), ("nearest", "zeros"), ("bicubic", "border")]


def main() -> int:
    args = threads_trials(__doc__.splitlines()[0])
    gen = torch.Generator().manual_seed(1)
    n = 8
    c, s = 1.1 * math.cos(0.2), 1.1 * math.sin(0.2)
    theta = torch.tensor([[c, -s, 0.05], [s, c, -0.03]], dtype=torch.float64).expand(n, 2, 3).float()
    x = torch.randn(n, 64, 64, 64, generator=gen).requires_grad_()
    grid = F.affine_grid(theta, [n, 64, 64, 64], align_corners=False).contiguous().requires_grad_()
    g = torch.randn(n, 64, 64, 64, generator=gen)
    for mode, padding in CASES:
        def fwd():
            with torch.no_grad():
                F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=False)

        def both():
            x.grad = None
            grid.grad = None
            (F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=False) * g).sum().backward()

        print_fwd_and_both(f"{mode}_{padding}", fwd, both, args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
