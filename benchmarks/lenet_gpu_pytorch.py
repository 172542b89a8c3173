#!/usr/bin/env python3
"""PyTorch reference for benchmarks/lenet_gpu: LeNet training on one GPU, eager and CUDA graphs.

Same network as examples/lenet_cifar10/lenet.h, SGD lr 0.001 momentum 0.9, cross-entropy, 8 random
CIFAR-shaped batches already in device memory, cycled; only the training step is timed (the clock
stops after torch.cuda.synchronize()). Graph mode captures one whole step (forward, backward,
optimizer) with torch.cuda.graphs and replays it after copying the next batch into the captured
input, as PyTorch's documentation shows. Kernel launches per step are counted with torch.profiler
(eager only) when it works on the machine.

Run on a machine with a GPU and PyTorch:  python3 benchmarks/lenet_gpu_pytorch.py
One line per (mode, batch size):
  pytorch-eager batch=32 images_per_s=... step_ms=... launches_per_step=...
Prints 'skipped' and exits 0 without a GPU.
"""
import argparse
import time

import torch
import torch.nn.functional as F

from lenet_pytorch import LeNet  # the CPU reference's network (same folder)


def setup(batch):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = LeNet().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    data = [torch.randn(batch, 3, 32, 32, device=dev) for _ in range(8)]
    target = [torch.randint(0, 10, (batch,), device=dev) for _ in range(8)]
    return model, opt, data, target


def eager_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    opt.step()


def count_launches(model, opt, data, target, steps=5):
    """Kernels per eager step, from torch.profiler's CUDA activity; None if the profiler fails."""
    try:
        from torch.profiler import ProfilerActivity, profile

        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(steps):
                eager_step(model, opt, data[i % 8], target[i % 8])
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        return len(kernels) / steps
    except Exception as e:  # profiling is a bonus; the timings stand without it
        print(f"lenet_gpu_pytorch: profiler unavailable ({type(e).__name__}: {e})", flush=True)
        return None


def bench_eager(batch, steps, warmup):
    model, opt, data, target = setup(batch)
    for i in range(warmup):
        eager_step(model, opt, data[i % 8], target[i % 8])
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        eager_step(model, opt, data[i % 8], target[i % 8])
    torch.cuda.synchronize()
    s = time.perf_counter() - start
    return batch * steps / s, 1e3 * s / steps, count_launches(model, opt, data, target)


def bench_graph(batch, steps, warmup):
    model, opt, data, target = setup(batch)
    static_x = data[0].clone()
    static_y = target[0].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as capture requires
        for i in range(max(warmup, 3)):
            eager_step(model, opt, static_x, static_y)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        F.cross_entropy(model(static_x), static_y).backward()
        opt.step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        static_x.copy_(data[i % 8])
        static_y.copy_(target[i % 8])
        graph.replay()
    torch.cuda.synchronize()
    s = time.perf_counter() - start
    return batch * steps / s, 1e3 * s / steps, None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--batch_sizes", type=int, nargs="+", default=[32, 128, 1024])
    p.add_argument("--modes", nargs="+", default=["eager", "graph"], choices=["eager", "graph"])
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("lenet_gpu_pytorch: skipped: torch.cuda.is_available() is False")
        return
    print(f"lenet_gpu_pytorch: torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}; "
          f"cudnn.benchmark={torch.backends.cudnn.benchmark} matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32}",
          flush=True)
    for mode in a.modes:
        for b in a.batch_sizes:
            fn = bench_eager if mode == "eager" else bench_graph
            ips, ms, launches = fn(b, a.steps, a.warmup)
            extra = f" launches_per_step={launches:.1f}" if launches is not None else ""
            print(f"pytorch-{mode} batch={b} images_per_s={ips:.1f} step_ms={ms:.3f}{extra}", flush=True)


if __name__ == "__main__":
    main()
