"""torch.median, nanmedian and kthvalue along a dim in PyTorch, to compare with benchmarks/select_bench.

    python benchmarks/select_pytorch.py --threads T [--trials R]

The same data, timing and output lines as select_bench.cc: float32 values spread pseudo-randomly
over [0, 1) (i * 2654435761 mod 2^32, over 2^32). torch.set_num_threads(T).
"""
import argparse
import time

import torch


def spread(rows, cols):
    i = torch.arange(rows * cols, dtype=torch.int64)
    return ((i * 2654435761) % (1 << 32)).double().div(4294967296.0).float().reshape(rows, cols)


def run(op, rows, cols, dim, trials, f):
    x = spread(rows, cols)
    times = []
    for t in range(trials + 2):
        start = time.perf_counter()
        f(x)
        us = (time.perf_counter() - start) * 1e6
        if t >= 2:
            times.append(us)
    times.sort()
    print(f"{op} {rows}x{cols} dim={dim} us={times[len(times) // 2]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    if args.threads < 1 or args.trials < 1:
        parser.error("--threads and --trials must be at least 1")
    torch.set_num_threads(args.threads)
    print(f"threads={args.threads} torch={torch.__version__}")
    run("median", 1024, 4096, 1, args.trials, lambda x: torch.median(x, 1))
    run("median", 1024, 4096, 0, args.trials, lambda x: torch.median(x, 0))
    run("nanmedian", 1024, 4096, 1, args.trials, lambda x: torch.nanmedian(x, 1))
    run("kthvalue_k256", 4096, 1024, 1, args.trials, lambda x: torch.kthvalue(x, 256, 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
