"""Golden learning rates for tests/optim/lr_scheduler_test.cc, from torch.optim.lr_scheduler.

Reference only (torch is no build dependency): run with any Python that has torch and paste the
output into the test's kGolden tables.

    python3 tests/optim/lr_scheduler_golden.py
"""
import math

import torch
from torch.optim import SGD
from torch.optim.lr_scheduler import (CosineAnnealingLR, LambdaLR, LinearLR, SequentialLR, StepLR)


def optimizer(lrs):
    params = [torch.nn.Parameter(torch.zeros(1)) for _ in lrs]
    return SGD([{"params": [p], "lr": lr} for p, lr in zip(params, lrs)], lr=lrs[0])


def run(name, lrs, make, steps):
    opt = optimizer(lrs)
    sched = make(opt)
    seq = [[g["lr"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append([g["lr"] for g in opt.param_groups])
    print(f"// {name}")
    print(f"const std::vector<std::vector<double>> k{name} = {{")
    for row in seq:
        print("    {" + ", ".join(f"{v:.17g}" for v in row) + "},")
    print("};")


# nanoGPT's schedule: linear warm-up over 5 steps, cosine decay to lr / 10 over the next 10,
# then past T_max (cosine's closed form is periodic: it climbs again).
run("WarmupCosine", [6e-4, 3e-4],
    lambda o: SequentialLR(o, [LinearLR(o, start_factor=1e-3, end_factor=1.0, total_iters=5),
                               CosineAnnealingLR(o, T_max=10, eta_min=6e-5)], milestones=[5]),
    18)
# LinearLR's defaults (start_factor 1/3, total_iters 5), alone.
run("LinearDefaults", [0.1], lambda o: LinearLR(o), 7)
run("LambdaOne", [0.1, 0.01], lambda o: LambdaLR(o, lambda e: 0.95 ** e), 5)
run("LambdaPerGroup", [0.1, 0.01],
    lambda o: LambdaLR(o, [lambda e: 1.0 / (e + 1), lambda e: min(1.0, (e + 1) / 3)]), 5)
# Three phases, with a LambdaLR and a StepLR after the first handover.
run("ThreePhases", [1.0],
    lambda o: SequentialLR(o, [LinearLR(o, start_factor=0.5, total_iters=2),
                               LambdaLR(o, lambda e: 0.9 ** e),
                               StepLR(o, step_size=2, gamma=0.5)], milestones=[3, 6]),
    10)
