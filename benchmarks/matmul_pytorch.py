"""torch.mm throughput, to compare with benchmarks/matmul_bench in alternating rounds.

    python benchmarks/matmul_pytorch.py --dtype bf16|f32 --size N --threads T [--trials R] [--form ab|abt|atb]
                                        [--m M --n N --k K] [--cpu-time]

Times A @ B for two N x N matrices, or [M, K] x [K, N] (a size not given is N), torch.randn then
cast, after 3 warm-up products, with torch.set_num_threads(T), and prints gflops=X (2 M N K flops
over the best trial) as its last line, as matmul_bench does. --cpu-time times each product in the
thread's CPU time instead, as matmul_bench --cpu-time (1 thread: torch.mm then runs on the calling
thread), so that time other processes held the core is not counted. On a CPU with AMX, PyTorch's
bfloat16 torch.mm runs oneDNN's AMX kernels.
"""
import argparse
import sys
import time

import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=["bf16", "f32"], default="f32")
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--form", choices=["ab", "abt", "atb"], default="ab",
                        help="A @ B, A @ B^T or A^T @ B (transposed views), as matmul_bench --form")
    for dim in ("m", "n", "k"):
        parser.add_argument(f"--{dim}", type=int, default=0, help="0: --size")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time each product in the thread's CPU time (needs --threads 1)")
    parser.add_argument("--trials", type=int, default=0, help="0: 100 for f32, 30 for bf16 (matmul_bench's)")
    args = parser.parse_args()
    if args.size < 1 or args.threads < 1 or min(args.trials, args.m, args.n, args.k) < 0:
        parser.error("--size and --threads must be at least 1, --trials, --m, --n and --k at least 0")
    if args.cpu_time and args.threads != 1:
        parser.error("--cpu-time times the calling thread, so it needs --threads 1")
    m, n, k = args.m or args.size, args.n or args.size, args.k or args.size
    torch.set_num_threads(args.threads)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    gen = torch.Generator().manual_seed(1)
    # Stored as the form reads them, as matmul_bench: A^T's operand is [k, m], B^T's [n, k].
    a = torch.randn(*((k, m) if args.form == "atb" else (m, k)), generator=gen).to(dtype)
    b = torch.randn(*((n, k) if args.form == "abt" else (k, n)), generator=gen).to(dtype)
    trials = args.trials or (30 if dtype == torch.bfloat16 else 100)
    if args.form == "abt":
        b = b.t()
    elif args.form == "atb":
        a = a.t()
    clock = time.thread_time if args.cpu_time else time.perf_counter
    with torch.no_grad():
        for _ in range(3):
            torch.mm(a, b)
        times = []
        for _ in range(trials):
            start = clock()
            torch.mm(a, b)
            times.append(clock() - start)
    times.sort()
    flops = 2.0 * m * n * k
    print(f"torch {torch.__version__} mm {args.form} {args.dtype} [{m},{k}]x[{k},{n}] threads={args.threads} "
          f"trials={trials} best {times[0] * 1e3:.3f} ms median {times[len(times) // 2] * 1e3:.3f} ms")
    print(f"gflops={flops / times[0] * 1e-9:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
