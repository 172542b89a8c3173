"""torch.nn.functional.interpolate, to compare with benchmarks/interpolate_bench.

    python benchmarks/interpolate_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as interpolate_bench.cc: float32 on the CPU, forward under no_grad and forward + backward of sum(out * g) with x.grad set to None
first, torch.set_num_threads(T).
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

CASES = [
    ("nearest_x2", dict(scale_factor=2.0)),
    ("bilinear_x2", dict(scale_factor=2.0, mode="bilinear")),
    ("bicubic_x2", dict(scale_factor=2.0, mode="bicubic")),
    ("bilinear_aa_half", dict(scale_factor=0.5, mode="bilinear", antialias=True)),
    ("image128_bilinear_x2", dict(scale_factor=2.0, mode="bilinear"), (4, 3, 128, 128)),
    ("image256_bilinear_x2", dict(scale_factor=2.0, mode="bilinear"), (2, 3, 256, 256)),
    ("image512_bilinear_x2", dict(scale_factor=2.0, mode="bilinear"), (1, 3, 512, 512)),
    ("image512_bicubic_half", dict(scale_factor=0.5, mode="bicubic"), (1, 3, 512, 512)),
]


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(1)
    for name, kw, *shape in CASES:
        x = torch.randn(*(shape[0] if shape else (8, 64, 32, 32)), generator=gen).requires_grad_()
        g = torch.randn(F.interpolate(x, **kw).shape, generator=gen)

        def fwd():
            with torch.no_grad():
                F.interpolate(x, **kw)

        def both():
            x.grad = None
            (F.interpolate(x, **kw) * g).sum().backward()

        print(f"{name} fwd us={median_us(fwd, args.trials):.1f}")
        print(f"{name} fwd+bwd us={median_us(both, args.trials):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
