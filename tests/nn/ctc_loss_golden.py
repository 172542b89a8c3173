"""Writes tests/nn/ctc_loss_golden.h (through tests/golden_cases.py): torch's CTC losses and their
gradients with respect to log_probs, which ctc_loss_test.cc checks by case name, calling
F::ctc_loss on the same inputs (targets and lengths as int64 tensors).

    /tmp/torch2/bin/python tests/nn/ctc_loss_golden.py > tests/nn/ctc_loss_golden.h
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


def lp(T, N, C, seed=0, dtype=torch.float64):
    """log_softmax of uniform logits: a leaf of log-probabilities."""
    return r(T, N, C, seed=seed, lo=-3, hi=3).log_softmax(-1).to(dtype)


def ctc(**kw):
    return lambda x, tg, il, tl: F.ctc_loss(x, tg, il, tl, **kw)


# Padded targets [N, S]: a repeated label (1, 1 needs a blank between), all-repeated, length 0 (the
# all-blank path), lengths shorter than S, input lengths shorter than T.
PADDED = fixed(t([[1, 1, 2, 0], [3, 3, 3, 4], [2, 0, 0, 0], [4, 1, 3, 2]], dtype=I64))
IN_LEN = fixed(t([8, 7, 5, 8], dtype=I64))
TG_LEN = fixed(t([3, 3, 0, 4], dtype=I64))
for dtype, suffix in [(torch.float64, "f64"), (torch.float32, "f32")]:
    for red in ["mean", "sum", "none"]:
        case(f"padded_{red}_{suffix}", ctc(reduction=red), lp(8, 4, 5, dtype=dtype), PADDED, IN_LEN, TG_LEN)
    # The same targets concatenated (1-D, sum(target_lengths) labels).
    case(f"concatenated_mean_{suffix}", ctc(), lp(8, 4, 5, seed=1, dtype=dtype),
         fixed(t([1, 1, 2, 3, 3, 3, 4, 1, 3, 2], dtype=I64)), IN_LEN, TG_LEN)
# Another blank; a target that contains every label.
case("blank_last_sum_f64", ctc(blank=4, reduction="sum"), lp(6, 2, 5, seed=2),
     fixed(t([[0, 1, 2], [3, 3, 0]], dtype=I64)), fixed(t([6, 6], dtype=I64)), fixed(t([3, 2], dtype=I64)))
# Every target empty: the loss is -sum_t log p_t(blank).
case("blank_only_none_f64", ctc(reduction="none"), lp(5, 3, 4, seed=3),
     fixed(t([[1], [2], [3]], dtype=I64)), fixed(t([5, 3, 1], dtype=I64)), fixed(t([0, 0, 0], dtype=I64)))
# Inputs too short for their targets (1, 1 needs 3 steps; 2 labels need 2): inf, with NaN gradients
# unless zero_infinity; an input length of 0 (loss 0 for an empty target, inf otherwise).
SHORT_TG = fixed(t([[1, 1], [2, 3], [1, 2], [0, 0]], dtype=I64))
SHORT_IN = fixed(t([2, 1, 0, 0], dtype=I64))
SHORT_LEN = fixed(t([2, 2, 1, 0], dtype=I64))
case("too_short_none_f64", ctc(reduction="none"), lp(4, 4, 4, seed=4), SHORT_TG, SHORT_IN, SHORT_LEN)
case("too_short_zero_infinity_none_f64", ctc(reduction="none", zero_infinity=True), lp(4, 4, 4, seed=4), SHORT_TG,
     SHORT_IN, SHORT_LEN)
case("too_short_zero_infinity_mean_f64", ctc(zero_infinity=True), lp(4, 4, 4, seed=5), SHORT_TG,
     fixed(t([2, 4, 0, 3], dtype=I64)), SHORT_LEN)
case("too_short_zero_infinity_sum_f32", ctc(reduction="sum", zero_infinity=True), lp(4, 4, 4, seed=6, dtype=torch.float32),
     SHORT_TG, fixed(t([2, 4, 0, 3], dtype=I64)), SHORT_LEN)
# Unbatched log_probs [T, C] with a 1-D target and 0-d lengths; none gives a 0-d loss.
for red in ["mean", "none"]:
    case(f"unbatched_{red}_f64", ctc(reduction=red), r(7, 6, seed=7, lo=-3, hi=3).log_softmax(-1),
         fixed(t([5, 2, 2, 1], dtype=I64)), fixed(t(7, dtype=I64)), fixed(t(4, dtype=I64)))
# Longer sequences with unnormalized inputs (the gradient's exp(y) term is not a softmax then).
case("long_unnormalized_mean_f64", ctc(), r(30, 3, 7, seed=8), fixed(torch.randint(1, 7, (3, 12), generator=torch.Generator().manual_seed(9))),
     fixed(t([30, 25, 28], dtype=I64)), fixed(t([12, 9, 10], dtype=I64)))

emit("tests/nn/ctc_loss_golden.py", "colony::testing::ctc_loss_golden", CASES)
