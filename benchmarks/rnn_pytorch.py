"""torch.nn.LSTM training step on the CPU, to compare with benchmarks/rnn_bench.

    python benchmarks/rnn_pytorch.py --threads T [--trials R]

The same sizes, timing and output line as rnn_bench.cc: float32, 2 layers, input and hidden 256,
sequence 64, batch 32; zero_grad, forward, loss sum(output * g), backward, SGD step (lr 0.01).
"""
import argparse
import sys
import time

import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    if args.threads < 1 or args.trials < 1:
        parser.error("--threads and --trials must be at least 1")
    torch.set_num_threads(args.threads)
    print(f"threads={args.threads} torch={torch.__version__}")
    torch.manual_seed(1)
    lstm = torch.nn.LSTM(256, 256, num_layers=2)
    opt = torch.optim.SGD(lstm.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(64, 32, 256, generator=gen)
    g = torch.randn(64, 32, 256, generator=gen)
    times = []
    for t in range(args.trials + 2):
        start = time.perf_counter()
        opt.zero_grad()
        out, _ = lstm(x)
        (out * g).sum().backward()
        opt.step()
        us = (time.perf_counter() - start) * 1e6
        if t >= 2:
            times.append(us)
    times.sort()
    print(f"lstm_step us={times[len(times) // 2]:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
