"""torch.linalg's decompositions and solvers in PyTorch, to compare with benchmarks/linalg_bench.

    python benchmarks/linalg_pytorch.py --threads T [--trials R]

The same data, timing and output lines as linalg_bench.cc: inv, solve (16 right-hand side
columns), cholesky, qr (reduced), eigh and svd (reduced) of one n x n matrix (n = 64, 256; 512 for
cholesky, eigh and svd) and of 64 8 x 8 matrices, float32 and float64; X = frac(i * golden ratio) - 0.5, X + n I for the general
matrices, X Xᵀ + n I for cholesky and eigh. torch.set_num_threads(T).
"""
import argparse
import time

import torch


def golden_matrix(batch, n, dtype):
    count = max(batch, 1) * n * n
    v = (torch.arange(count, dtype=torch.float64) * 0.6180339887498949).frac() - 0.5
    return v.reshape((batch, n, n) if batch > 0 else (n, n)).to(dtype)


def run(op, batch, n, dtype, trials):
    x = golden_matrix(batch, n, dtype)
    eye = torch.eye(n, dtype=dtype) * n
    general = (x + eye).contiguous()
    spd = (x @ x.mT + eye).contiguous()
    rhs = x[..., : min(n, 16)].contiguous()
    fn = {
        "inv": lambda: torch.linalg.inv(general),
        "solve": lambda: torch.linalg.solve(general, rhs),
        "cholesky": lambda: torch.linalg.cholesky(spd),
        "qr": lambda: torch.linalg.qr(general),
        "eigh": lambda: torch.linalg.eigh(spd),
        "svd": lambda: torch.linalg.svd(general, full_matrices=False),
    }[op]
    times = []
    with torch.no_grad():
        for t in range(trials + 2):
            start = time.perf_counter()
            fn()
            us = (time.perf_counter() - start) * 1e6
            if t >= 2:
                times.append(us)
    times.sort()
    shape = f"{batch}x{n}x{n}" if batch > 0 else f"{n}x{n}"
    name = "f32" if dtype == torch.float32 else "f64"
    print(f"linalg {op} {shape} {name} us={times[len(times) // 2]:.1f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    if args.threads < 1 or args.trials < 1:
        parser.error("--threads and --trials must be at least 1")
    torch.set_num_threads(args.threads)
    print(f"threads={args.threads} torch={torch.__version__}")
    for op in ["inv", "solve", "cholesky", "qr", "eigh", "svd"]:
        for dtype in [torch.float32, torch.float64]:
            run(op, 64, 8, dtype, args.trials)
            run(op, 0, 64, dtype, args.trials)
            run(op, 0, 256, dtype, args.trials)
            if op in ("cholesky", "eigh", "svd"):
                run(op, 0, 512, dtype, args.trials)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
