"""torch.nn.functional.pad (reflect, replicate, circular, zeros), unfold and fold, to compare with
benchmarks/pad_bench.

    python benchmarks/pad_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as pad_bench.cc: float32 [16, 64, 56, 56] on the
CPU, forward under no_grad and forward + backward of sum(out * g) with x.grad set to None first,
torch.set_num_threads(T).
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

SHAPE = (16, 64, 56, 56)
CASES = [(f"{mode}_pad{p}", lambda x, mode=mode, p=p: F.pad(x, (p, p, p, p), mode=mode))
         for mode in ("reflect", "replicate", "circular") for p in (1, 3)]
CASES += [("zeros_pad1", lambda x: F.pad(x, (1, 1, 1, 1))),
          ("unfold_k3", lambda x: F.unfold(x, 3, padding=1))]


def median_us(fn, trials):
    for _ in range(2):
        fn()
    times = []
    for _ in range(trials):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return times[len(times) // 2]


def run(name, fn, x, trials):
    with torch.no_grad():
        g = torch.randn(fn(x).shape)

    def fwd():
        with torch.no_grad():
            fn(x)

    def both():
        x.grad = None
        (fn(x) * g).sum().backward()

    print(f"{name} fwd us={median_us(fwd, trials):.1f}")
    print(f"{name} fwd+bwd us={median_us(both, trials):.1f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    for name, fn in CASES:
        run(name, fn, torch.randn(*SHAPE).requires_grad_(), args.trials)
    cols = torch.randn(16, 64 * 9, 56 * 56).requires_grad_()
    run("fold_k3", lambda c: F.fold(c, (56, 56), 3, padding=1), cols, args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
