"""What the PyTorch twins of Colony's kernel benchmarks share, as bench_args.h and bench_timing.h
are on the C++ side: --threads and --trials (refused below 1, as parse_threads_trials refuses them),
the median of timed calls, and a case's two output lines, forward and forward + backward.

A twin imports it from its own folder (`from bench_timing import ...`): Python puts the script's
folder first on the path. COLONY_BENCH_CPU_TIME=1 times the calls by the calling thread's CPU time,
as bench_timing.h does (with --threads 1 only: torch then runs the ops on that thread).
"""
import argparse
import os
import time

import torch


def threads_trials(description, threads=2, trials=10):
    """--threads and --trials from the command line, each at least 1; sets torch's thread count."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=threads)
    parser.add_argument("--trials", type=int, default=trials)
    args = parser.parse_args()
    if args.threads < 1 or args.trials < 1:
        parser.error("--threads and --trials must be at least 1")
    torch.set_num_threads(args.threads)
    return args


CLOCK = time.thread_time if os.environ.get("COLONY_BENCH_CPU_TIME") == "1" else time.perf_counter


def median_us(fn, trials, warmup=2):
    """The median time of `trials` calls of fn, in microseconds, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(trials):
        start = CLOCK()
        fn()
        times.append((CLOCK() - start) * 1e6)
    times.sort()
    return times[len(times) // 2]


def print_fwd_and_both(name, fwd, both, trials):
    """The lines "<name> fwd us=<median>" and "<name> fwd+bwd us=<median>", as the C++ twins print."""
    print(f"{name} fwd us={median_us(fwd, trials):.1f}")
    print(f"{name} fwd+bwd us={median_us(both, trials):.1f}", flush=True)


def run_leaf(name, fn, x, trials):
    """fn(x) under no_grad, and forward + backward of sum(fn(x) * g) into the leaf x (made one, its
    .grad cleared before each call), g drawn from torch's global generator."""
    x.requires_grad_()
    with torch.no_grad():
        g = torch.randn(fn(x).shape)

    def fwd():
        with torch.no_grad():
            fn(x)

    def both():
        x.grad = None
        (fn(x) * g).sum().backward()

    print_fwd_and_both(name, fwd, both, trials)
