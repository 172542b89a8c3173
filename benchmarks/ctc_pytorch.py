"""torch.nn.functional.ctc_loss and embedding_bag, to compare with benchmarks/ctc_bench.

    python benchmarks/ctc_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as ctc_bench.cc: ctc_loss over log_softmax of
float32 [200, 16, 30] with padded targets [16, 50] (mean reduction), embedding_bag over a
100000 x 64 float32 table with 2048 bags of 20 ids (sum, mean; dense gradient); forward under
no_grad and forward + backward of sum(out * g) with the leaf's grad set to None first,
torch.set_num_threads(T).
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F


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
    x.requires_grad_()
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
    T, N, C, S = 200, 16, 30, 50
    targets = torch.tensor([[1 + (b * 7 + s * 13) % (C - 1) for s in range(S)] for b in range(N)])
    il = torch.tensor([T - 3 * b for b in range(N)])
    tl = torch.tensor([S - b for b in range(N)])
    lp = torch.randn(T, N, C).log_softmax(2)
    run("ctc_loss_T200_N16_C30_S50", lambda x: F.ctc_loss(x, targets, il, tl), lp, args.trials)
    rows, dim, bags, per_bag = 100000, 64, 2048, 20
    ids = torch.tensor([(b * 7919 + k * 104729) % rows for b in range(bags) for k in range(per_bag)])
    offsets = torch.arange(0, bags * per_bag, per_bag)
    for mode in ("sum", "mean"):
        run(f"embedding_bag_{mode}_100000x64_B2048_L20",
            lambda w, mode=mode: F.embedding_bag(ids, w, offsets, mode=mode), torch.randn(rows, dim), args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
