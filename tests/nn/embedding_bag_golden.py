"""Writes tests/nn/embedding_bag_golden.h (through tests/golden_cases.py): torch's F.embedding_bag
outputs and the gradients of the weight and per_sample_weights, which embedding_bag_test.cc checks
by case name, calling F::embedding_bag on the same inputs (indices and offsets as int64 tensors).

    /tmp/torch2/bin/python tests/nn/embedding_bag_golden.py > tests/nn/embedding_bag_golden.h
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from golden_cases import emit, fixed, r, t  # noqa: E402

I64 = torch.int64
CASES = []


def case(name, fn, *inputs):
    CASES.append((name, fn, inputs))


# 1-D indices with offsets: an empty bag (offsets 2, 2), repeated rows within and across bags.
IDX = fixed(t([1, 2, 0, 3, 3, 1, 4, 1], dtype=I64))
OFF = fixed(t([0, 2, 2, 5], dtype=I64))
for dtype, suffix in [(torch.float64, "f64"), (torch.float32, "f32")]:
    W = r(5, 3, seed=1, dtype=dtype)
    for mode in ["sum", "mean", "max"]:
        case(f"offsets_{mode}_{suffix}", lambda w, i, o, mode=mode: F.embedding_bag(i, w, o, mode=mode), W, IDX, OFF)
        # padding_idx 3 left out of its bags (bag 1 of the 2-D case holds padding only).
        case(f"padding_{mode}_{suffix}", lambda w, i, o, mode=mode: F.embedding_bag(i, w, o, mode=mode, padding_idx=3),
             W, IDX, OFF)
        # 2-D input: fixed-length bags, no offsets; padding_idx from the end.
        case(f"fixed_bags_{mode}_{suffix}", lambda w, i, mode=mode: F.embedding_bag(i, w, mode=mode, padding_idx=-2),
             W, fixed(t([[1, 2, 0], [3, 3, 3], [4, 1, 1], [0, 0, 2]], dtype=I64)))
    # include_last_offset: the last offset is the end of the last bag (here the input's end).
    for mode in ["sum", "mean", "max"]:
        case(f"last_offset_{mode}_{suffix}",
             lambda w, i, o, mode=mode: F.embedding_bag(i, w, o, mode=mode, include_last_offset=True), W, IDX,
             fixed(t([0, 3, 3, 8], dtype=I64)))
    # per_sample_weights (sum only): gradients for the weight and the per-sample weights.
    case(f"weighted_sum_{suffix}", lambda w, i, o, s: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
         W, IDX, OFF, r(8, seed=2, dtype=dtype))
    case(f"weighted_padding_sum_{suffix}",
         lambda w, i, s: F.embedding_bag(i, w, mode="sum", per_sample_weights=s, padding_idx=0),
         W, fixed(t([[1, 0, 2], [0, 0, 0]], dtype=I64)), r(2, 3, seed=3, dtype=dtype))
# Ties in max (the first index keeps the gradient), all bags empty but the last.
case("max_ties_f64", lambda w, i, o: F.embedding_bag(i, w, o, mode="max"),
     t([[1.0, 5.0], [2.0, 2.0], [0.0, 7.0], [2.0, 7.0]]), fixed(t([0, 1, 2, 3, 1], dtype=I64)), fixed(t([0, 0, 0], dtype=I64)))
# A wider table, int32 indices and offsets.
case("wide_mean_f64", lambda w, i, o: F.embedding_bag(i, w, o, mode="mean"), r(30, 17, seed=4),
     fixed(torch.randint(0, 30, (40,), generator=torch.Generator().manual_seed(5)).to(torch.int32)),
     fixed(t([0, 7, 7, 19, 33], dtype=torch.int32)))

emit("tests/nn/embedding_bag_golden.py", "colony::testing::embedding_bag_golden", CASES)
