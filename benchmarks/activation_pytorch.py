"""GELU forward and backward in PyTorch's CPU kernels on contiguous float32, the twin of
activation_bench.cc: aten's gelu and gelu_backward called directly (no autograd bookkeeping).
Prints `torch gelu_fwd(<approximate>) <rows>x<cols> us=<median microseconds>` and _bwd."""
import argparse
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=1)
p.add_argument("--trials", type=int, default=15)
args = p.parse_args()
torch.set_num_threads(args.threads)
print("threads", torch.get_num_threads(), "torch", torch.__version__)


def time_us(f, inner):
    s = time.perf_counter()
    for _ in range(inner):
        f()
    return (time.perf_counter() - s) * 1e6 / inner


for approximate in ["none", "tanh"]:
    for rows, cols in [(768, 512), (16384, 1536)]:
        g = torch.Generator().manual_seed(1)
        x = torch.randn(rows, cols, generator=g)
        gy = torch.randn(rows, cols, generator=g)
        inner = max(1, 4000000 // (rows * cols))
        fwd = lambda: torch.ops.aten.gelu(x, approximate=approximate)
        bwd = lambda: torch.ops.aten.gelu_backward(gy, x, approximate=approximate)
        tf, tb = [], []
        for r in range(args.trials + 2):
            a, b = time_us(fwd, inner), time_us(bwd, inner)
            if r >= 2:
                tf.append(a)
                tb.append(b)
        tf.sort()
        tb.sort()
        print(f"torch gelu_fwd({approximate}) {rows}x{cols} us={tf[len(tf) // 2]:.1f}")
        print(f"torch gelu_bwd({approximate}) {rows}x{cols} us={tb[len(tb) // 2]:.1f}")
