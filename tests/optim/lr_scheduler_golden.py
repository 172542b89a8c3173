"""Golden learning rates for tests/optim/lr_scheduler_test.cc, from torch.optim.lr_scheduler.

Reference only (torch is no build dependency): run with any Python that has torch and paste the
output into the test's kGolden tables.

    python3 tests/optim/lr_scheduler_golden.py
"""
import math

import torch
from torch.optim import SGD, AdamW
from torch.optim.lr_scheduler import (ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, ExponentialLR,
                                      LambdaLR, LinearLR, OneCycleLR, PolynomialLR, ReduceLROnPlateau,
                                      SequentialLR, StepLR)


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

run("Exponential", [0.1, 0.02], lambda o: ExponentialLR(o, gamma=0.9), 6)
run("Constant", [0.1], lambda o: ConstantLR(o, factor=0.25, total_iters=3), 5)
run("Polynomial", [0.1], lambda o: PolynomialLR(o, total_iters=4, power=2.0), 6)
run("WarmRestarts", [0.1], lambda o: CosineAnnealingWarmRestarts(o, T_0=3, T_mult=1, eta_min=0.01), 8)
run("WarmRestartsMult", [0.1], lambda o: CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.0), 15)


def run_momentum(name, make_opt, make, steps, key):
    """The rates and the momentum (SGD's momentum or AdamW's betas[0]) of group 0 after each step."""
    params = [torch.nn.Parameter(torch.zeros(1)) for _ in range(2)]
    opt = make_opt(params)
    sched = make(opt)
    def row():
        m = opt.param_groups[0][key]
        return [g["lr"] for g in opt.param_groups] + [m[0] if key == "betas" else m]
    seq = [row()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(row())
    print(f"// {name}: the groups' rates, then group 0's momentum")
    print(f"const std::vector<std::vector<double>> k{name} = {{")
    for r in seq:
        print("    {" + ", ".join(f"{v:.17g}" for v in r) + "},")
    print("};")


run_momentum("OneCycleCos", lambda p: SGD([{"params": [p[0]]}, {"params": [p[1]]}], lr=0.1, momentum=0.9),
             lambda o: OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=10), 10, "momentum")
run_momentum("OneCycleLinearThreePhase", lambda p: AdamW(p, lr=1e-3, betas=(0.9, 0.95)),
             lambda o: OneCycleLR(o, max_lr=0.01, total_steps=12, pct_start=0.25, anneal_strategy="linear",
                                  three_phase=True, div_factor=10, final_div_factor=100), 12, "betas")


def run_plateau(name, lrs, kwargs, metrics):
    opt = optimizer(lrs)
    sched = ReduceLROnPlateau(opt, **kwargs)
    seq = []
    for m in metrics:
        opt.step()
        sched.step(m)
        seq.append([g["lr"] for g in opt.param_groups] + [sched.best, sched.num_bad_epochs, sched.cooldown_counter])
    print(f"// {name}: after each metric, the rates, best, num_bad_epochs, cooldown_counter")
    print(f"const std::vector<std::vector<double>> k{name} = {{")
    for r in seq:
        print("    {" + ", ".join(f"{v:.17g}" for v in r) + "},")
    print("};")


PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.9, 0.91, 0.92, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9]
run_plateau("PlateauMin", [0.1, 0.01], dict(patience=2, factor=0.5, cooldown=1, min_lr=[0.02, 0.0]), PLATEAU_METRICS)
run_plateau("PlateauMaxAbs", [0.1], dict(mode="max", patience=1, threshold=0.05, threshold_mode="abs", eps=1e-3),
            [0.1, 0.2, 0.22, 0.24, 0.3, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, float("nan"), 0.5])

# CyclicLR: per-group base and max rates with a shorter fall, SGD's momentum cycled; triangular2
# cycling AdamW's beta1; exp_range with its own momentum range; a custom scale of the step count
# without momentum.
run_momentum("CyclicTriangular", lambda p: SGD([{"params": [p[0]]}, {"params": [p[1]]}], lr=0.1, momentum=0.9),
             lambda o: CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.05], step_size_up=3, step_size_down=2),
             14, "momentum")
run_momentum("CyclicTriangular2", lambda p: AdamW(p, lr=1e-3, betas=(0.9, 0.95)),
             lambda o: CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=2, mode="triangular2"), 14, "betas")
run_momentum("CyclicExpRange", lambda p: SGD(p, lr=0.1, momentum=0.5),
             lambda o: CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=3, mode="exp_range",
                                gamma=0.9, base_momentum=0.7, max_momentum=0.95), 14, "momentum")
run("CyclicScaleFn", [0.1, 0.2],
    lambda o: CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, cycle_momentum=False,
                       scale_fn=lambda x: 0.5 ** x, scale_mode="iterations"), 12)


def run_swa(name, lrs, swa_kwargs, cosine_steps, swa_steps):
    """CosineAnnealingLR(T_max=20) for cosine_steps, then SWALR for swa_steps (torch's recipe)."""
    from torch.optim.swa_utils import SWALR
    opt = optimizer(lrs)
    cosine = CosineAnnealingLR(opt, T_max=20)
    seq = [[g["lr"] for g in opt.param_groups]]
    for _ in range(cosine_steps):
        opt.step()
        cosine.step()
        seq.append([g["lr"] for g in opt.param_groups])
    swa = SWALR(opt, **swa_kwargs)
    seq.append([g["lr"] for g in opt.param_groups])
    for _ in range(swa_steps):
        opt.step()
        swa.step()
        seq.append([g["lr"] for g in opt.param_groups])
    print(f"// {name}: CosineAnnealingLR's rates for {cosine_steps} steps, then SWALR's from its construction")
    print(f"const std::vector<std::vector<double>> k{name} = {{")
    for r in seq:
        print("    {" + ", ".join(f"{v:.17g}" for v in r) + "},")
    print("};")


run_swa("SwaCos", [0.1, 0.2], dict(swa_lr=[0.05, 0.01], anneal_epochs=3), 5, 6)
run_swa("SwaLinear", [0.1], dict(swa_lr=0.02, anneal_epochs=4, anneal_strategy="linear"), 2, 6)
run_swa("SwaNoAnneal", [0.1], dict(swa_lr=0.03, anneal_epochs=0), 3, 3)

# MultiplicativeLR: one factor, and per-group factors of the epoch.
from torch.optim.lr_scheduler import ChainedScheduler, MultiplicativeLR, MultiStepLR
run("Multiplicative", [0.1, 0.02], lambda o: MultiplicativeLR(o, lambda e: 0.9), 5)
run("MultiplicativePerGroup", [0.1, 0.02],
    lambda o: MultiplicativeLR(o, [lambda e: 1.0 - 0.05 * e, lambda e: 0.5 if e % 2 else 1.25]), 6)
# ChainedScheduler: torch's docs' pair (a warm-up factor, then decay), and three factors at once.
run("ChainedConstantExponential", [0.05, 0.01],
    lambda o: ChainedScheduler([ConstantLR(o, factor=0.1, total_iters=3), ExponentialLR(o, gamma=0.9)]), 6)
run("ChainedThree", [1.0],
    lambda o: ChainedScheduler([LinearLR(o, start_factor=0.5, total_iters=3), StepLR(o, step_size=2, gamma=0.5),
                                MultiplicativeLR(o, lambda e: 0.95)]), 7)
