"""Writes tests/nn/loss_margin_golden.h (through tests/golden_cases.py): torch's outputs and input
gradients for the margin, ranking, triplet and likelihood losses that loss_margin_test.cc checks by
case name, calling the same F:: function on the same inputs.

    /tmp/torch2/bin/python tests/nn/loss_margin_golden.py > tests/nn/loss_margin_golden.h
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


SIGNS = fixed(t([1.0, -1.0, 1.0, 0.0, -1.0]))
for red in ["mean", "sum", "none"]:
    case(f"margin_ranking_{red}", lambda a, b, y, red=red: F.margin_ranking_loss(a, b, y, margin=0.3, reduction=red),
         r(5), r(5, seed=1), SIGNS)
    case(f"hinge_embedding_{red}", lambda x, y, red=red: F.hinge_embedding_loss(x, y, margin=0.8, reduction=red),
         r(5, lo=-1, hi=2), SIGNS)
    case(f"soft_margin_{red}", lambda x, y, red=red: F.soft_margin_loss(x, y, reduction=red), r(2, 3), fixed(t([1.0, -1, 1, -1, -1, 1], shape=(2, 3))))
    case(f"multilabel_soft_margin_{red}", lambda x, y, red=red: F.multilabel_soft_margin_loss(x, y, reduction=red),
         r(3, 4), fixed(t([1.0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0], shape=(3, 4))))
    case(f"multi_margin_{red}", lambda x, red=red: F.multi_margin_loss(x, torch.tensor([0, 3, 1]), reduction=red), r(3, 4))
    case(f"multilabel_margin_{red}",
         lambda x, red=red: F.multilabel_margin_loss(x, torch.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [2, 2, -1, -1]]), reduction=red),
         r(3, 4))
    case(f"triplet_margin_{red}", lambda a, p, n, red=red: F.triplet_margin_loss(a, p, n, reduction=red),
         r(4, 3), r(4, 3, seed=1), r(4, 3, seed=2))
    case(f"poisson_nll_{red}", lambda x, y, red=red: F.poisson_nll_loss(x, y, reduction=red), r(2, 3), r(2, 3, seed=1, lo=0, hi=4))
    case(f"gaussian_nll_{red}", lambda x, y, v, red=red: F.gaussian_nll_loss(x, y, v, reduction=red),
         r(2, 3), r(2, 3, seed=1), r(2, 3, seed=2, lo=0.1, hi=2))
case("soft_margin_weighted_labels", lambda x, y: F.soft_margin_loss(x, y), r(4), fixed(r(4, seed=3)))
case("multilabel_soft_margin_weight", lambda x, y, w: F.multilabel_soft_margin_loss(x, y, weight=w),
     r(3, 4), r(3, 4, seed=1, lo=0, hi=1), r(4, seed=2, lo=0, hi=2))
case("multilabel_soft_margin_3d", lambda x, y: F.multilabel_soft_margin_loss(x, y, reduction="none"),
     r(2, 3, 4), r(2, 3, 4, seed=1, lo=0, hi=1))
case("multi_margin_p2_weight", lambda x, w: F.multi_margin_loss(x, torch.tensor([2, 0, 2]), p=2, margin=0.7, weight=w),
     r(3, 4), fixed(r(4, seed=1, lo=0, hi=2)))
case("multi_margin_1d", lambda x: F.multi_margin_loss(x, torch.tensor(1)), r(4))
case("multilabel_margin_1d", lambda x: F.multilabel_margin_loss(x, torch.tensor([3, -1, 0, 0])), r(4))
case("multilabel_margin_repeated", lambda x: F.multilabel_margin_loss(x, torch.tensor([[1, 1, 0, -1]]), reduction="none"), r(1, 4))
case("triplet_margin_p1_swap", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5, p=1, swap=True, reduction="none"),
     r(4, 3), r(4, 3, seed=1), r(4, 3, seed=2))
case("triplet_margin_1d", lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True), r(3), r(3, seed=1), r(3, seed=2))
case("triplet_distance_cosine", lambda a, p, n: F.triplet_margin_with_distance_loss(
    a, p, n, distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), margin=0.4, swap=True, reduction="none"),
     r(4, 3), r(4, 3, seed=1), r(4, 3, seed=2))
case("triplet_distance_default", lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n),
     r(4, 3), r(4, 3, seed=1), r(4, 3, seed=2))
case("poisson_nll_full", lambda x, y: F.poisson_nll_loss(x, y, full=True, reduction="none"),
     r(2, 3), t([0.25, 0.5, 1.0, 1.5, 3.0, 7.0], shape=(2, 3)))  # no 0: torch's gradient is NaN there
case("poisson_nll_rates", lambda x, y: F.poisson_nll_loss(x, y, log_input=False, eps=1e-3), r(2, 3, lo=0, hi=3), r(2, 3, seed=1, lo=0, hi=4))
case("poisson_nll_rates_full_sum", lambda x, y: F.poisson_nll_loss(x, y, log_input=False, full=True, reduction="sum"),
     r(2, 3, lo=0.1, hi=3), t([0.75, 2.0, 1.0, 4.0, 3.0, 0.5], shape=(2, 3)))
case("gaussian_nll_homoscedastic", lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True),
     r(2, 3), r(2, 3, seed=1), r(2, seed=2, lo=0.1, hi=2))
case("gaussian_nll_one_dim_one", lambda x, y, v: F.gaussian_nll_loss(x, y, v, reduction="none"),
     r(2, 3), r(2, 3, seed=1), r(2, 1, seed=2, lo=0.1, hi=2))
case("gaussian_nll_clamped", lambda x, y, v: F.gaussian_nll_loss(x, y, v, eps=0.05, reduction="sum"),
     r(4), r(4, seed=1), t([0.01, 0.5, 0.04, 1.0]))

emit("tests/nn/loss_margin_golden.py", "colony::testing::loss_margin_golden", CASES)
