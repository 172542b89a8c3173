"""Golden values of tests/nn/loss_test.cc: each loss of torch.nn.functional in float64 on the
closed-form inputs the test builds the same way (wave, unit, classes below), its output and the
gradient of sum(output * wave(output.shape, 0.31, 0.2)) for each input marked `g`.

    /tmp/torch2/bin/python tests/nn/loss_golden.py > tests/nn/loss_golden.h
"""
import math

import torch
import torch.nn.functional as F

D = torch.float64


def wave(shape, a, b, s=1.0):
    n = math.prod(shape)
    return torch.tensor([s * math.sin(a * i + b) for i in range(n)], dtype=D).reshape(shape)


def unit(shape, a, b):  # in (0.05, 0.95)
    n = math.prod(shape)
    return torch.tensor([0.05 + 0.9 * (0.5 + 0.5 * math.sin(a * i + b)) for i in range(n)], dtype=D).reshape(shape)


def classes(shape, c, k):
    n = math.prod(shape)
    return torch.tensor([(i * k + 1) % c for i in range(n)], dtype=torch.int64).reshape(shape)


def probs(shape, a, b, dim):  # positive, summing to 1 over dim
    u = unit(shape, a, b)
    return u / u.sum(dim, keepdim=True)


CASES = []


def case(name, inputs, grads, fn):
    CASES.append((name, inputs, grads, fn))


# cross_entropy with a class weight (ignore_index -100 at target 2), label smoothing, 4-D input
t5 = classes([5], 4, 3)
t5[2] = -100
for red in ["mean", "sum", "none"]:
    case(f"ce_weight_{red}", [wave([5, 4], 0.7, 0.1, 2.0), t5, unit([4], 0.5, 0.3)], [0],
         lambda x, t, w, red=red: F.cross_entropy(x, t, weight=w, reduction=red))
    case(f"ce_weight_smooth_{red}", [wave([5, 4], 0.7, 0.1, 2.0), t5, unit([4], 0.5, 0.3)], [0],
         lambda x, t, w, red=red: F.cross_entropy(x, t, weight=w, reduction=red, label_smoothing=0.2))
t4d = classes([2, 2, 2], 3, 2)
t4d[1, 0, 1] = 1  # ignore_index 1 below
case("ce_weight_smooth_4d_mean", [wave([2, 3, 2, 2], 0.45, 0.2, 1.5), t4d, unit([3], 0.9, 0.1)], [0],
     lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=1, label_smoothing=0.1))
case("ce_weight_1d_sum", [wave([4], 0.7, 0.4), torch.tensor(2), unit([4], 0.5, 0.3)], [0],
     lambda x, t, w: F.cross_entropy(x, t, weight=w, reduction="sum"))
# cross_entropy with class probabilities
for red in ["mean", "sum", "none"]:
    case(f"ce_prob_{red}", [wave([3, 5], 0.6, 0.3, 2.0), probs([3, 5], 0.8, 0.5, 1)], [0, 1],
         lambda x, p, red=red: F.cross_entropy(x, p, reduction=red))
case("ce_prob_weight_smooth_mean", [wave([3, 5], 0.6, 0.3, 2.0), probs([3, 5], 0.8, 0.5, 1), unit([5], 0.3, 0.9)],
     [0, 1], lambda x, p, w: F.cross_entropy(x, p, weight=w, label_smoothing=0.15))
case("ce_prob_3d_none", [wave([2, 3, 2], 0.6, 0.3, 2.0), probs([2, 3, 2], 0.8, 0.5, 1)], [0, 1],
     lambda x, p: F.cross_entropy(x, p, reduction="none", label_smoothing=0.1))
case("ce_prob_1d_mean", [wave([4], 0.6, 0.3), probs([4], 0.8, 0.5, 0)], [0, 1],
     lambda x, p: F.cross_entropy(x, p))
# nll_loss with a weight
t6 = classes([6], 4, 3)
for red in ["mean", "none"]:
    case(f"nll_weight_{red}", [wave([6, 4], 0.35, 0.7), t6, unit([4], 0.5, 0.3)], [0],
         lambda x, t, w, red=red: F.nll_loss(x, t, weight=w, ignore_index=2, reduction=red))
# binary cross-entropy
for red in ["mean", "sum", "none"]:
    case(f"bce_{red}", [unit([3, 4], 0.7, 0.2), unit([3, 4], 1.3, 0.9)], [0, 1],
         lambda x, y, red=red: F.binary_cross_entropy(x, y, reduction=red))
case("bce_weight_sum", [unit([3, 4], 0.7, 0.2), unit([3, 4], 1.3, 0.9), unit([4], 0.4, 0.4)], [0, 1],
     lambda x, y, w: F.binary_cross_entropy(x, y, weight=w, reduction="sum"))
case("bce_edges_none", [torch.tensor([0.0, 1.0, 1.0, 0.3, 0.0], dtype=D), torch.tensor([0.0, 0.0, 1.0, 0.6, 1.0], dtype=D)],
     [0], lambda x, y: F.binary_cross_entropy(x, y, reduction="none"))
for red in ["mean", "sum", "none"]:
    case(f"bcel_{red}", [wave([3, 4], 0.9, 0.0, 4.0), unit([3, 4], 1.3, 0.9)], [0, 1],
         lambda x, y, red=red: F.binary_cross_entropy_with_logits(x, y, reduction=red))
case("bcel_pos_weight_weight_sum", [wave([3, 4], 0.9, 0.0, 4.0), unit([3, 4], 1.3, 0.9), unit([3, 1], 0.4, 0.4),
                                    unit([4], 2.1, 0.3) * 3],
     [0, 1], lambda x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw, reduction="sum"))
case("bcel_pos_weight_none", [wave([2, 3, 4], 0.9, 0.0, 30.0), unit([2, 3, 4], 1.3, 0.9), unit([4], 2.1, 0.3) * 3],
     [0, 1], lambda x, y, pw: F.binary_cross_entropy_with_logits(x, y, pos_weight=pw, reduction="none"))
# kl_div
kl_t = probs([3, 4], 0.7, 0.1, 1)
kl_t0 = kl_t.clone()
kl_t0[1, 2] = 0.0
for red in ["mean", "sum", "none", "batchmean"]:
    case(f"kl_{red}", [torch.log(probs([3, 4], 1.1, 0.6, 1)), kl_t], [0, 1],
         lambda x, t, red=red: F.kl_div(x, t, reduction=red))
case("kl_zero_target_sum", [torch.log(probs([3, 4], 1.1, 0.6, 1)), kl_t0], [0],
     lambda x, t: F.kl_div(x, t, reduction="sum"))
case("kl_log_target_batchmean", [torch.log(probs([3, 4], 1.1, 0.6, 1)), torch.log(kl_t)], [0, 1],
     lambda x, t: F.kl_div(x, t, reduction="batchmean", log_target=True))
case("kl_broadcast_none", [torch.log(probs([3, 4], 1.1, 0.6, 1)), probs([1, 4], 0.5, 0.5, 1)], [0, 1],
     lambda x, t: F.kl_div(x, t, reduction="none"))
# regression
for red in ["mean", "sum", "none"]:
    case(f"l1_{red}", [wave([3, 5], 0.7, 0.2, 2.0), wave([3, 5], 1.1, 0.5, 2.0)], [0, 1],
         lambda x, y, red=red: F.l1_loss(x, y, reduction=red))
    case(f"smooth_l1_{red}", [wave([3, 5], 0.7, 0.2, 2.0), wave([3, 5], 1.1, 0.5, 2.0)], [0, 1],
         lambda x, y, red=red: F.smooth_l1_loss(x, y, reduction=red, beta=0.8))
    case(f"huber_{red}", [wave([3, 5], 0.7, 0.2, 2.0), wave([3, 5], 1.1, 0.5, 2.0)], [0, 1],
         lambda x, y, red=red: F.huber_loss(x, y, reduction=red, delta=0.7))
case("smooth_l1_beta0_sum", [wave([3, 5], 0.7, 0.2, 2.0), wave([3, 5], 1.1, 0.5, 2.0)], [0, 1],
     lambda x, y: F.smooth_l1_loss(x, y, reduction="sum", beta=0.0))
# embeddings
case("cos_sim_dim1", [wave([3, 5], 0.7, 0.2), wave([3, 5], 1.1, 0.5)], [0, 1],
     lambda a, b: F.cosine_similarity(a, b, dim=1))
case("cos_sim_broadcast_dim0", [wave([4, 3], 0.7, 0.2), wave([1, 3], 1.1, 0.5)], [0, 1],
     lambda a, b: F.cosine_similarity(a, b, dim=0))
case("cos_sim_tiny_norm", [wave([2, 3], 0.7, 0.2) * torch.tensor([[1e-10], [1.0]], dtype=D), wave([2, 3], 1.1, 0.5)],
     [0, 1], lambda a, b: F.cosine_similarity(a, b, dim=1, eps=1e-8))
ce_t = torch.tensor([1.0, -1.0, 1.0, -1.0, 0.0], dtype=D)
for red in ["mean", "none"]:
    case(f"cos_emb_{red}", [wave([5, 3], 0.7, 0.2), wave([5, 3], 1.1, 0.5), ce_t], [0, 1],
         lambda a, b, t, red=red: F.cosine_embedding_loss(a, b, t, margin=-0.3, reduction=red))
case("cos_emb_1d_sum", [wave([3], 0.7, 0.2), wave([3], 0.3, 0.5), torch.tensor(-1.0, dtype=D)], [0, 1],
     lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=-0.5, reduction="sum"))
case("pairwise_p2", [wave([3, 4], 0.7, 0.2), wave([3, 4], 1.1, 0.5)], [0, 1],
     lambda a, b: F.pairwise_distance(a, b))
case("pairwise_p1_keepdim", [wave([3, 4], 0.7, 0.2), wave([1, 4], 1.1, 0.5)], [0, 1],
     lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True))


def fmt(t):
    return "{" + ", ".join(repr(float(v)) for v in t.detach().reshape(-1).tolist()) + "}"


print("// Generated by tests/nn/loss_golden.py (torch %s, float64); do not edit." % torch.__version__)
print("#pragma once\n\n#include <map>\n#include <string>\n#include <vector>\n")
print("namespace colony::testing {\n")
print("// name.out: the loss; name.gK: the gradient of input K (see loss_golden.py).")
print("inline const std::map<std::string, std::vector<double>>& loss_golden() {")
print("  static const std::map<std::string, std::vector<double>> values = {")
for name, inputs, grads, fn in CASES:
    xs = [x.clone().requires_grad_(i in grads) for i, x in enumerate(inputs)]
    out = fn(*xs)
    (out * wave(list(out.shape), 0.31, 0.2)).sum().backward()
    print(f'      {{"{name}.out", {fmt(out)}}},')
    for i in grads:
        print(f'      {{"{name}.g{i}", {fmt(xs[i].grad)}}},')
print("  };\n  return values;\n}\n\n}  // namespace colony::testing")
