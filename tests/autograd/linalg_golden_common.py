"""What linalg_decomp_golden.py and linalg_solvers_golden.py share: the float64 dtype, the list of
emitted tensors, the emitter, leaves, symmetric positive definite inputs, and the header's frame.
Imported from the directory of the script that runs (Python puts it on sys.path)."""
import torch

D = torch.float64
out = []


def emit(name, t):
    t = t.detach().to(torch.float64).contiguous()
    vals = ", ".join(repr(float(v)) for v in t.flatten().tolist())
    shape = ", ".join(str(s) for s in t.shape)
    out.append(f"inline const GoldenTensor {name}{{{{{shape}}}, {{{vals}}}}};")


def leaf(t):
    return t.clone().requires_grad_(True)


def spd(*shape):
    x = torch.randn(*shape, dtype=D)
    return x @ x.mT + shape[-1] * torch.eye(shape[-1], dtype=D)


def write_header(script, namespace):
    """Prints the header: every emitted tensor as a GoldenTensor in `namespace`."""
    print(f"// Written by {script} (torch " + torch.__version__ + "); do not edit.")
    print(f"#pragma once\n\n#include <cstdint>\n#include <vector>\n\nnamespace {namespace} {{\n")
    print("struct GoldenTensor {\n  std::vector<int64_t> shape;\n  std::vector<double> values;\n};\n")
    print("\n".join(out))
    print(f"\n}}  // namespace {namespace}")
