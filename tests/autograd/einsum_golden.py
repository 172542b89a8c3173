"""Writes tests/autograd/einsum_golden.h: torch.einsum and torch.tensordot results for the cases
einsum_test.cc runs. Operand k of a case, element i (row-major), holds
    float64: sin(0.37 i + 1.1 k + 0.2)
    int64:   (7 i + 5 k) % 11 - 5
(einsum_test.cc builds the same values), so the header only lists equations, shapes and results.

    /tmp/torch2/bin/python tests/autograd/einsum_golden.py > tests/autograd/einsum_golden.h
"""
import math

import torch

# (equation, operand shapes, dtype): every form einsum_test.cc checks against torch.
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)], "f"),                 # matrix product
    ("ij,jk", [(2, 3), (3, 4)], "f"),                     # implicit output: ik
    ("kj,ji", [(4, 3), (3, 2)], "f"),                     # implicit output sorted: ik, not ki
    ("Bi,iA", [(2, 3), (3, 4)], "f"),                     # upper case; implicit AB (upper before lower)
    ("aB,Bc->ca", [(2, 3), (3, 4)], "f"),
    (" i j , j k -> i k ", [(2, 3), (3, 4)], "f"),        # spaces ignored
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)], "f"),  # attention scores
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], "f"),        # batched matrix product
    ("bi,bj->bij", [(2, 3), (2, 4)], "f"),                # batched outer product (no sum)
    ("ij->ji", [(3, 4)], "f"),                            # single operand: transpose
    ("ij->", [(3, 4)], "f"),                              # single operand: sum of all
    ("ijk->kj", [(2, 3, 4)], "f"),                        # single operand: sum out one, permute
    ("ii->i", [(3, 3)], "f"),                             # diagonal
    ("ii", [(3, 3)], "f"),                                # trace
    ("iij->ji", [(3, 3, 2)], "f"),                        # diagonal next to a free dim
    ("iji->ij", [(3, 2, 3)], "f"),                        # diagonal of non-adjacent dims
    ("iii->i", [(3, 3, 3)], "f"),                         # a letter three times
    ("ii,ij->j", [(3, 3), (3, 2)], "f"),                  # diagonal inside a contraction
    ("i,j->ij", [(3,), (4,)], "f"),                       # outer product
    ("i,j", [(3,), (4,)], "f"),                           # implicit outer product
    ("i,i->", [(5,), (5,)], "f"),                         # dot product
    ("i,i->i", [(5,), (5,)], "f"),                        # elementwise product
    ("ij,kj->", [(2, 3), (4, 3)], "f"),                   # everything summed
    ("ij,jk->k", [(2, 3), (3, 4)], "f"),                  # i only in the first operand: summed before the product
    ("ij,ij->ij", [(2, 1), (1, 3)], "f"),                 # size-1 dims broadcast between operands
    ("ij,jk->ik", [(2, 1), (4, 3)], "f"),                 # a contracted size-1 dim broadcasts
    (",ij->ij", [(), (2, 3)], "f"),                       # a 0-d operand
    ("->", [()], "f"),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)], "f"),     # ellipses of different widths (1 and 0 dims)
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)], "f"),  # ellipsis dims broadcast: [2, 1] with [5]
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)], "f"),         # implicit output with ellipsis: ...ik
    ("...ii->...i", [(2, 3, 3)], "f"),                    # diagonal under an ellipsis
    ("i...->...", [(3, 2, 4)], "f"),                      # ellipsis last, a letter summed
    ("...,...->...", [(2, 3), (3,)], "f"),                # ellipsis only: broadcast product
    ("b...d,b...d->b...", [(2, 3, 4), (2, 1, 4)], "f"),   # ellipsis in the middle, broadcast
    ("...ij->j", [(2, 3, 4)], "f"),                       # ellipsis summed out
    ("...ij->i...j", [(2, 3, 4, 5)], "f"),                # ellipsis in the middle of the output
    ("i...j,j...k->...ik", [(2, 3, 4), (4, 3, 5)], "f"),  # ellipsis between letters in both
    ("ij...,jk...->ik...", [(2, 3, 1), (3, 4, 5)], "f"),  # trailing ellipses broadcast: [1] with [5]
    ("ii,i->i", [(3, 3), (1,)], "f"),                     # a size-1 dim broadcasts against a diagonal
    ("...->...", [()], "f"),                              # an ellipsis over no dims
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)], "f"),  # bilinear form: 3 operands
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "f"),      # chain of 3
    ("ab,bc,cd,da->", [(2, 3), (3, 4), (4, 2), (2, 2)], "f"),  # trace of a product of 4
    ("bse,bsd->bed", [(2, 3, 4), (2, 3, 5)], "f"),        # mixture-of-experts dispatch
    ("bsd,sd->bsd", [(2, 3, 4), (3, 4)], "f"),            # rotary-style elementwise scaling
    ("ij,jk->ik", [(2, 0), (0, 3)], "f"),                 # empty contraction: zeros
    ("ij,jk->ik", [(2, 3), (3, 4)], "i"),                 # integer dtype
    ("ii", [(3, 3)], "i"),
    ("i,i->", [(4,), (4,)], "i"),
    ("bij,bjk,bk->bi", [(2, 2, 3), (2, 3, 4), (2, 4)], "i"),
]

# (a shape, b shape, dims: an int or (dims_a, dims_b)).
TENSORDOT_CASES = [
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3, 4), (4, 3, 5), ([-1], [-3])),
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (3, 4), 1),
    ((2, 3), (4, 5), 0),                                  # outer product
    ((2, 1, 4), (3, 4, 5), ([1, 2], [0, 1])),             # a size-1 contracted dim broadcasts (in a)
    ((2, 3, 4), (4, 1, 5), ([2, 1], [0, 1])),             # ... and in b
    ((), (), 0),
]


def operand(shape, k, kind):
    n = math.prod(shape)
    if kind == "i":
        return torch.tensor([(7 * i + 5 * k) % 11 - 5 for i in range(n)], dtype=torch.int64).reshape(shape)
    return torch.tensor([math.sin(0.37 * i + 1.1 * k + 0.2) for i in range(n)], dtype=torch.float64).reshape(shape)


def shape_list(shape):
    return "{" + ", ".join(str(s) for s in shape) + "}"


def values(t):
    return "{" + ", ".join(repr(float(x)) for x in t.reshape(-1).tolist()) + "}"


def main():
    print("// Generated by tests/autograd/einsum_golden.py (torch " + torch.__version__ + "); do not edit.")
    print("// torch.einsum and torch.tensordot on the closed-form operands that script describes.")
    print("#pragma once\n")
    print("#include <cstdint>\n#include <vector>\n")
    print('#include "tensor/shape.h"\n')
    print("namespace colony::testing::einsum_golden {\n")
    print("struct EinsumCase {")
    print("  const char* equation;")
    print("  std::vector<Shape> shapes;  // the operands'")
    print("  bool integer;               // int64 operands and result, else float64")
    print("  Shape out_shape;")
    print("  std::vector<double> out;")
    print("};\n")
    print("inline const std::vector<EinsumCase> kEinsumCases = {")
    for eq, shapes, kind in EINSUM_CASES:
        ops = [operand(s, k, kind) for k, s in enumerate(shapes)]
        out = torch.einsum(eq, *ops)
        assert out.dtype == (torch.int64 if kind == "i" else torch.float64)
        shapes_text = "{" + ", ".join(shape_list(s) for s in shapes) + "}"
        print(f'    {{"{eq}", {shapes_text}, {"true" if kind == "i" else "false"}, {shape_list(out.shape)},')
        print(f"     {values(out)}}},")
    print("};\n")
    print("struct TensordotCase {")
    print("  Shape a, b;")
    print("  int64_t dims;  // -1: dims_a and dims_b instead")
    print("  std::vector<int64_t> dims_a, dims_b;")
    print("  Shape out_shape;")
    print("  std::vector<double> out;")
    print("};\n")
    print("inline const std::vector<TensordotCase> kTensordotCases = {")
    for sa, sb, dims in TENSORDOT_CASES:
        a, b = operand(sa, 0, "f"), operand(sb, 1, "f")
        out = torch.tensordot(a, b, dims=dims)
        if isinstance(dims, int):
            dims_text = f"{dims}, {{}}, {{}}"
        else:
            dims_text = f"-1, {shape_list(dims[0])}, {shape_list(dims[1])}"
        print(f"    {{{shape_list(sa)}, {shape_list(sb)}, {dims_text}, {shape_list(out.shape)},")
        print(f"     {values(out)}}},")
    print("};\n")
    print("}  // namespace colony::testing::einsum_golden")


if __name__ == "__main__":
    main()
