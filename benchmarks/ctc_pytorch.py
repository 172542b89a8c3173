"""torch.nn.functional.ctc_loss and embedding_bag, to compare with benchmarks/ctc_bench.

    python benchmarks/ctc_pytorch.py --threads T [--trials R]

The same inputs, cases, timing and output lines as ctc_bench.cc: ctc_loss over log_softmax of
float32 [200, 16, 30] with padded targets [16, 50] (mean reduction), embedding_bag over a
100000 x 64 float32 table with 2048 bags of 20 ids (sum, mean; dense gradient); forward under
no_grad and forward + backward of sum(out * g) with the leaf's grad set to None first,
torch.set_num_threads(T).
"""
import sys

import torch
import torch.nn.functional as F

from bench_timing import run_leaf, threads_trials


def main() -> int:
    args = threads_trials(__doc__.splitlines()[0])
    torch.manual_seed(1)
    T, N, C, S = 200, 16, 30, 50
    targets = torch.tensor([[1 + (b * 7 + s * 13) % (C - 1) for s in range(S)] for b in range(N)])
    il = torch.tensor([T - 3 * b for b in range(N)])
    tl = torch.tensor([S - b for b in range(N)])
    lp = torch.randn(T, N, C).log_softmax(2)
    run_leaf("ctc_loss_T200_N16_C30_S50", lambda x: F.ctc_loss(x, targets, il, tl), lp, args.trials)
    rows, dim, bags, per_bag = 100000, 64, 2048, 20
    ids = torch.tensor([(b * 7919 + k * 104729) % rows for b in range(bags) for k in range(per_bag)])
    offsets = torch.arange(0, bags * per_bag, per_bag)
    for mode in ("sum", "mean"):
        run_leaf(f"embedding_bag_{mode}_100000x64_B2048_L20",
            lambda w, mode=mode: F.embedding_bag(ids, w, offsets, mode=mode), torch.randn(rows, dim), args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
