"""torch.nn.functional.scaled_dot_product_attention on the shapes of benchmarks/sdpa_bench.cc.

    python benchmarks/sdpa_pytorch.py [--threads T] [--trials R] [--dtype f32|bf16]

Causal float32 (or bfloat16 q, k, v, as autocast hands them) on the CPU with
torch.set_num_threads(T): forward alone (no_grad) and forward + backward (out.backward(g), the
inputs' .grad cleared first so that no trial times an accumulation), 3 warm-up calls, then R
trials; prints the same lines as sdpa_bench.
"""
import argparse
import time

import torch
import torch.nn.functional as F

SHAPES = [(12, 4, 64, 32), (64, 6, 256, 64)]


def time_calls(fn, trials):
    for _ in range(3):
        fn()
    times = []
    for _ in range(trials):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[0], times[len(times) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    args = parser.parse_args()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    if args.threads < 1 or args.trials < 1:
        parser.error("--threads and --trials must be at least 1")
    torch.set_num_threads(args.threads)
    for b, h, t, d in SHAPES:
        gen = torch.Generator().manual_seed(1)
        q, k, v = (torch.randn(b, h, t, d, generator=gen).to(dtype).requires_grad_() for _ in range(3))
        g = torch.randn(b, h, t, d, generator=gen).to(dtype)

        def fwd():
            with torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=True)

        def both():
            q.grad = k.grad = v.grad = None
            F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(g)

        name = f"B{b}_H{h}_T{t}_D{d}"
        for label, fn in (("fwd", fwd), ("fwd+bwd", both)):
            best, median = time_calls(fn, args.trials)
            print(f"shape={name} pass={label} best_ms={best:.3f} median_ms={median:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
