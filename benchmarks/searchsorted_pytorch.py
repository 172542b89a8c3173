"""torch.searchsorted in PyTorch, to compare with benchmarks/searchsorted_bench.

    python benchmarks/searchsorted_pytorch.py --threads T [--trials R]

The same data, timing and output lines as searchsorted_bench.cc: float32 values (the fractional
parts of i times the golden ratio) into evenly spaced sorted boundaries, 1-D, left; the sorter case
searches the boundaries reversed through the positions that sort them. torch.set_num_threads(T).
"""
import argparse
import time

import torch


def run(m, n, with_sorter, trials):
    values = (torch.arange(m, dtype=torch.float64) * 0.6180339887498949).frac().float()
    boundaries = torch.linspace(0.0, 1.0, n, dtype=torch.float32)
    sorter = None
    if with_sorter:
        boundaries = boundaries.flip(0).contiguous()
        sorter = torch.arange(n - 1, -1, -1, dtype=torch.int64)
    times = []
    for t in range(trials + 2):
        start = time.perf_counter()
        torch.searchsorted(boundaries, values, sorter=sorter)
        us = (time.perf_counter() - start) * 1e6
        if t >= 2:
            times.append(us)
    times.sort()
    print(f"searchsorted {m}x{n}{' sorter' if with_sorter else ''} us={times[len(times) // 2]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    if args.threads < 1 or args.trials < 1:
        parser.error("--threads and --trials must be at least 1")
    torch.set_num_threads(args.threads)
    print(f"threads={args.threads} torch={torch.__version__}")
    run(1000000, 1000, False, args.trials)
    run(1000000, 100000, False, args.trials)
    run(1000000, 100000, True, args.trials)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
