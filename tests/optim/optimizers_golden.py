"""Golden trajectories of tests/optim/optimizers_golden_test.cc: torch.optim's RMSprop, Adagrad, Adamax,
NAdam, RAdam, Adadelta, Rprop and ASGD (single-tensor path, foreach=False) stepped STEPS times over three
parameters, in float64 and float32, for every option combination that changes the math; also two
parameter groups with their own options, and OneCycleLR driving the rate (and momentum or beta1).

Parameters start at wave(shape, k) and the gradient at step s is 0.5 * p + wave(shape, 10 * (s + 1) + k),
k the parameter's index; the test builds the same in Colony. The header holds, per case and dtype,
every parameter's values after each step (step-major, parameters in order).

    /tmp/torch2/bin/python tests/optim/optimizers_golden.py > tests/optim/optimizers_golden.h
"""
import math

import torch

STEPS = 8
SHAPES = [(5,), (2, 3), (4,)]

# (case, optimizer, defaults, second group's options or None, OneCycleLR kwargs or None).
# The second group, when given, holds the last parameter.
CASES = [
    ("rmsprop", "RMSprop", {}, None, None),
    ("rmsprop_alpha_wd", "RMSprop", {"lr": 0.05, "alpha": 0.9, "weight_decay": 0.1}, None, None),
    ("rmsprop_momentum", "RMSprop", {"momentum": 0.9}, None, None),
    ("rmsprop_centered", "RMSprop", {"centered": True, "eps": 1e-3}, None, None),
    ("rmsprop_all", "RMSprop", {"centered": True, "momentum": 0.5, "weight_decay": 0.2, "maximize": True}, None, None),
    ("rmsprop_groups", "RMSprop", {"lr": 0.02}, {"momentum": 0.8, "centered": True}, None),
    ("rmsprop_onecycle", "RMSprop", {}, None, {"max_lr": 0.05}),
    ("adagrad", "Adagrad", {}, None, None),
    ("adagrad_lr_decay", "Adagrad", {"lr": 0.1, "lr_decay": 0.3}, None, None),
    ("adagrad_wd_init", "Adagrad", {"weight_decay": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-3}, None, None),
    ("adagrad_maximize", "Adagrad", {"maximize": True, "lr_decay": 0.05}, None, None),
    ("adagrad_groups", "Adagrad", {"lr": 0.05}, {"lr_decay": 0.5, "weight_decay": 0.3}, None),
    ("adagrad_onecycle", "Adagrad", {}, None, {"max_lr": 0.1, "cycle_momentum": False}),
    ("adamax", "Adamax", {}, None, None),
    ("adamax_wd", "Adamax", {"weight_decay": 0.1, "eps": 1e-3}, None, None),
    ("adamax_betas_maximize", "Adamax", {"betas": (0.3, 0.5), "maximize": True}, None, None),
    ("adamax_groups", "Adamax", {"lr": 0.01}, {"betas": (0.5, 0.9)}, None),
    ("adamax_onecycle", "Adamax", {}, None, {"max_lr": 0.01}),
    ("nadam", "NAdam", {}, None, None),
    ("nadam_wd", "NAdam", {"weight_decay": 0.1}, None, None),
    ("nadam_decoupled", "NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "lr": 0.05}, None, None),
    ("nadam_momentum_decay", "NAdam", {"momentum_decay": 0.1, "betas": (0.4, 0.6), "maximize": True}, None, None),
    ("nadam_groups", "NAdam", {"lr": 0.01}, {"momentum_decay": 0.2, "weight_decay": 0.1}, None),
    ("nadam_onecycle", "NAdam", {}, None, {"max_lr": 0.01}),
    ("radam", "RAdam", {}, None, None),
    ("radam_beta2", "RAdam", {"betas": (0.3, 0.8), "lr": 0.05}, None, None),
    ("radam_wd", "RAdam", {"weight_decay": 0.1, "betas": (0.9, 0.8)}, None, None),
    ("radam_decoupled", "RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "lr": 0.05}, None, None),
    ("radam_maximize", "RAdam", {"maximize": True, "betas": (0.9, 0.7), "eps": 1e-3}, None, None),
    ("radam_groups", "RAdam", {"lr": 0.01}, {"betas": (0.8, 0.7), "weight_decay": 0.2}, None),
    ("radam_onecycle", "RAdam", {"betas": (0.9, 0.8)}, None, {"max_lr": 0.01}),
    ("adadelta", "Adadelta", {}, None, None),
    ("adadelta_rho", "Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-3}, None, None),
    ("adadelta_wd_maximize", "Adadelta", {"weight_decay": 0.1, "maximize": True}, None, None),
    ("adadelta_groups", "Adadelta", {"lr": 2.0}, {"rho": 0.7, "weight_decay": 0.1}, None),
    ("adadelta_onecycle", "Adadelta", {}, None, {"max_lr": 2.0, "cycle_momentum": False}),
    ("rprop", "Rprop", {}, None, None),
    ("rprop_etas_sizes", "Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (0.02, 0.15)}, None, None),
    ("rprop_maximize", "Rprop", {"maximize": True, "lr": 0.05}, None, None),
    ("rprop_groups", "Rprop", {"lr": 0.02}, {"etas": (0.4, 1.1), "step_sizes": (1e-3, 0.03)}, None),
    ("rprop_onecycle", "Rprop", {}, None, {"max_lr": 0.05, "cycle_momentum": False}),
    ("asgd", "ASGD", {}, None, None),
    ("asgd_t0", "ASGD", {"lr": 0.1, "lambd": 0.05, "alpha": 0.5, "t0": 3}, None, None),
    ("asgd_wd_maximize", "ASGD", {"weight_decay": 0.1, "maximize": True, "t0": 1, "lr": 0.05}, None, None),
    ("asgd_groups", "ASGD", {"lr": 0.05, "t0": 2}, {"lambd": 0.1, "weight_decay": 0.2}, None),
    ("asgd_onecycle", "ASGD", {"t0": 2}, None, {"max_lr": 0.1, "cycle_momentum": False}),
]

# The state torch keeps per parameter after the last step of these cases, every parameter's in
# turn (the tensors in the order listed, flattened): Rprop's sign memory and step sizes, ASGD's
# running average ax (the averaged model) and its next eta and mu.
STATES = {
    "rprop_etas_sizes": ["prev", "step_size"],
    "rprop_groups": ["prev", "step_size"],
    "asgd_t0": ["ax", "eta", "mu"],
    "asgd_groups": ["ax", "eta", "mu"],
}


def wave(shape, k):
    n = math.prod(shape)
    return [math.sin(0.7 * i + 1.3 * k + 0.2) for i in range(n)]


def trajectory(optimizer, defaults, group, onecycle, dtype, state_keys=None):
    torch.set_default_dtype(dtype)  # NAdam's mu_product and the step counts take the default dtype
    params = [torch.tensor(wave(s, k), dtype=dtype).reshape(s).requires_grad_() for k, s in enumerate(SHAPES)]
    cls = getattr(torch.optim, optimizer)
    if group is None:
        opt = cls(params, foreach=False, **defaults)
    else:
        opt = cls([{"params": params[:-1]}, {"params": params[-1:], **group}], foreach=False, **defaults)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, total_steps=STEPS + 2, **onecycle) if onecycle else None
    out = []
    for s in range(STEPS):
        for k, p in enumerate(params):
            p.grad = 0.5 * p.detach() + torch.tensor(wave(p.shape, 10 * (s + 1) + k), dtype=dtype).reshape(p.shape)
        opt.step()
        if sched:
            sched.step()
        for p in params:
            out += p.detach().double().flatten().tolist()
    torch.set_default_dtype(torch.float32)
    if state_keys is not None:
        return [v for p in params for key in state_keys for v in opt.state[p][key].double().flatten().tolist()]
    return out


def main():
    print(f"// Generated by tests/optim/optimizers_golden.py (torch {torch.__version__}); do not edit.")
    print("#pragma once\n\n#include <map>\n#include <string>\n#include <vector>\n\nnamespace colony::testing {\n")
    print("// \"<case>.<float64|float32>\": every parameter's values after each step (optimizers_golden.py).")
    print("inline const std::map<std::string, std::vector<double>>& optimizers_golden() {")
    print("  static const std::map<std::string, std::vector<double>> values = {")
    for name, optimizer, defaults, group, onecycle in CASES:
        for dtype, tag in ((torch.float64, "float64"), (torch.float32, "float32")):
            values = trajectory(optimizer, defaults, group, onecycle, dtype)
            print(f'      {{"{name}.{tag}", {{{", ".join(repr(v) for v in values)}}}}},')
    print("  };\n  return values;\n}\n")
    print("// \"<case>.<float64|float32>\": the STATES of optimizers_golden.py after the last step.")
    print("inline const std::map<std::string, std::vector<double>>& optimizer_states_golden() {")
    print("  static const std::map<std::string, std::vector<double>> values = {")
    for name, optimizer, defaults, group, onecycle in CASES:
        if name not in STATES:
            continue
        for dtype, tag in ((torch.float64, "float64"), (torch.float32, "float32")):
            values = trajectory(optimizer, defaults, group, onecycle, dtype, STATES[name])
            print(f'      {{"{name}.{tag}", {{{", ".join(repr(v) for v in values)}}}}},')
    print("  };\n  return values;\n}\n\n}  // namespace colony::testing")


if __name__ == "__main__":
    main()
