"""LayerNorm and RMSNorm forward + backward in PyTorch, to compare with benchmarks/norm_bench.

    python benchmarks/norm_pytorch.py --threads T [--trials R]

The same shapes, timing and output lines as norm_bench.cc: float32 on the CPU, weight and bias
requiring grad, gradients set to None before each iteration, torch.set_num_threads(T).
"""
import argparse
import sys
import time

import torch


def run(rms, rows, cols, trials):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(rows, cols, generator=gen).requires_grad_()
    g = torch.randn(rows, cols, generator=gen)
    w = torch.ones(cols, requires_grad=True)
    b = torch.zeros(cols, requires_grad=True)
    inner = max(1, 200000 // (rows * cols // 64 + 1))
    times = []
    for t in range(trials + 3):
        start = time.perf_counter()
        for _ in range(inner):
            x.grad = w.grad = b.grad = None
            if rms:
                out = torch.nn.functional.rms_norm(x, (cols,), w, 1e-5)
            else:
                out = torch.nn.functional.layer_norm(x, (cols,), w, b, 1e-5)
            out.backward(g)
        us = (time.perf_counter() - start) * 1e6 / inner
        if t >= 3:
            times.append(us)
    times.sort()
    print(f"{'rms_norm' if rms else 'layer_norm'} {rows}x{cols} us={times[len(times) // 2]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args()
    if args.threads < 1 or args.trials < 1:
        parser.error("--threads and --trials must be at least 1")
    torch.set_num_threads(args.threads)
    print(f"threads={args.threads} torch={torch.__version__}")
    for rms in (False, True):
        run(rms, 12 * 64, 128, args.trials)
        run(rms, 64 * 256, 384, args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
