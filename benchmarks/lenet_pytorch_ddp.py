#!/usr/bin/env python3
"""PyTorch DDP reference for data-parallel LeNet-CIFAR10 (colonyrun ... lenet_cifar10 --benchmark).

The scaling question of the data-parallel benchmark asked of PyTorch on the same machine: one
process with one thread against N processes with one thread each, PyTorch's
DistributedDataParallel over Gloo on 127.0.0.1, batch 32 per rank, the network, optimizer and
loss of lenet_pytorch.py, random CIFAR-shaped batches already in memory (so the step alone is
timed). Lines alternate single / N ranks, since this VM's speed drifts within a minute.

Run with Debian's python3-torch:  /usr/bin/python3 benchmarks/lenet_pytorch_ddp.py --lines 5
Prints per line: single=<images/s> ranks=<aggregate images/s> efficiency=<ranks / (N x single)>.
"""
import argparse
import os
import socket
import statistics

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

from lenet_pytorch import LeNet, time_steps


def train(rank, world, port, batch, steps, warmup, out):
    torch.set_num_threads(1)
    if world > 1:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = LeNet()
    if world > 1:
        model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    g = torch.Generator().manual_seed(rank)
    data = torch.randn(16, batch, 3, 32, 32, generator=g)
    target = torch.randint(0, 10, (16, batch), generator=g)
    seconds = time_steps(model, opt, data, target, steps, warmup)
    if world > 1:
        # The job's throughput: every rank's images over the slowest rank's time, as colonyrun's.
        t = torch.tensor([seconds])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        seconds = t.item()
        dist.destroy_process_group()
    if rank == 0:
        out.put(world * batch * steps / seconds)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(world, batch, steps, warmup):
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=train, args=(r, world, port, batch, steps, warmup, out)) for r in range(world)]
    for p in procs:
        p.start()
    result = out.get()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"a rank exited with code {p.exitcode}")
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--lines", type=int, default=5)
    a = p.parse_args()
    effs = []
    for _ in range(a.lines):
        single = run(1, a.batch_size, a.steps, a.warmup)
        ranks = run(a.nproc, a.batch_size, a.steps, a.warmup)
        effs.append(100 * ranks / (a.nproc * single))
        print(f"pytorch_ddp nproc={a.nproc} batch={a.batch_size} single={single:.1f} ranks={ranks:.1f} "
              f"efficiency={effs[-1]:.1f}%", flush=True)
    print(f"median efficiency={statistics.median(effs):.1f}%")


if __name__ == "__main__":
    main()
