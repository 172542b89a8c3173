"""torch.nn.functional.interpolate, to compare with benchmarks/interpolate_bench.

    python benchmarks/interpolate_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as interpolate_bench.cc: float32 on the CPU, forward under no_grad and forward + backward of sum(out * g) with x.grad set to None
first, torch.set_num_threads(T).
"""
import sys

import torch
import torch.nn.functional as F

from bench_timing import print_fwd_and_both, threads_trials

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


def main() -> int:
    args = threads_trials(__doc__.splitlines()[0])
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

        print_fwd_and_both(name, fwd, both, args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
