"""torch.nn.functional.pad (reflect, replicate, circular, zeros), unfold and fold, to compare with
benchmarks/pad_bench.

    python benchmarks/pad_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as pad_bench.cc: float32 [16, 64, 56, 56] on the
CPU, forward under no_grad and forward + backward of sum(out * g) with x.grad set to None first,
torch.set_num_threads(T).
"""
import sys

import torch
import torch.nn.functional as F

from bench_timing import run_leaf, threads_trials

SHAPE = (16, 64, 56, 56)
CASES = [(f"{mode}_pad{p}", lambda x, mode=mode, p=p: F.pad(x, (p, p, p, p), mode=mode))
         for mode in ("reflect", "replicate", "circular") for p in (1, 3)]
CASES += [("zeros_pad1", lambda x: F.pad(x, (1, 1, 1, 1))),
          ("unfold_k3", lambda x: F.unfold(x, 3, padding=1))]


def main() -> int:
    args = threads_trials(__doc__.splitlines()[0])
    torch.manual_seed(1)
    for name, fn in CASES:
        run_leaf(name, fn, torch.randn(*SHAPE).requires_grad_(), args.trials)
    cols = torch.randn(16, 64 * 9, 56 * 56).requires_grad_()
    run_leaf("fold_k3", lambda c: F.fold(c, (56, 56), 3, padding=1), cols, args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
