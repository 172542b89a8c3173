"""torch.nn.functional.max_pool2d, avg_pool2d and adaptive_avg_pool2d, to compare with
benchmarks/pool2d_bench.

    python benchmarks/pool2d_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as pool2d_bench.cc: float32 [32, 64, 56, 56] on the
CPU, forward under no_grad and forward + backward of sum(out * g) with x.grad set to None first,
torch.set_num_threads(T).
"""
import sys

import torch
import torch.nn.functional as F

from bench_timing import run_leaf, threads_trials

SHAPE = (32, 64, 56, 56)
CASES = [("max_k2", lambda x: F.max_pool2d(x, 2)),
         ("max_k3s2p1", lambda x: F.max_pool2d(x, 3, 2, 1)),
         ("avg_k2", lambda x: F.avg_pool2d(x, 2)),
         ("adaptive_avg_1", lambda x: F.adaptive_avg_pool2d(x, 1))]


def main() -> int:
    args = threads_trials(__doc__.splitlines()[0])
    torch.manual_seed(1)
    for name, fn in CASES:
        run_leaf(name, fn, torch.randn(*SHAPE).requires_grad_(), args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
