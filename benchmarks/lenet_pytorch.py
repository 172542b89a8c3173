#!/usr/bin/env python3
"""PyTorch reference for the LeNet-CIFAR10 training benchmark (examples/lenet_cifar10 --benchmark).

Same network, optimizer (SGD lr 0.001 momentum 0.9), loss and batch sizes; random CIFAR-shaped
batches already in memory, so both sides time the training step only (forward, backward, step).
Run with Debian's python3-torch:  /usr/bin/python3 benchmarks/lenet_pytorch.py
Prints one line per (batch size, threads): images_per_s=<number>.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def time_steps(model, opt, data, target, steps, warmup):
    """Seconds that `steps` training steps take after `warmup` untimed ones, cycling the batches."""
    for i in range(warmup + steps):
        if i == warmup:
            start = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(data[i % len(data)]), target[i % len(target)])
        loss.backward()
        opt.step()
    return time.perf_counter() - start


def bench(batch, threads, steps, warmup):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = LeNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    data = torch.randn(16, batch, 3, 32, 32)
    target = torch.randint(0, 10, (16, batch))
    return batch * steps / time_steps(model, opt, data, target, steps, warmup)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--batch_sizes", type=int, nargs="+", default=[32, 128])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    a = p.parse_args()
    for b in a.batch_sizes:
        for t in a.threads:
            print(f"pytorch batch={b} threads={t} images_per_s={bench(b, t, a.steps, a.warmup):.1f}", flush=True)


if __name__ == "__main__":
    main()
