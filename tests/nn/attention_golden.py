"""Golden values of tests/nn/attention_test.cc: torch.nn.MultiheadAttention with the weights and
inputs the test builds (the same closed-form values), printed as C++ initializer lists.

    python tests/nn/attention_golden.py > /tmp/golden.txt   # then paste into the test
"""
import math

import torch

E, H, L, S, N = 8, 2, 3, 4, 2


def filled(shape, f):
    n = math.prod(shape)
    return torch.tensor([f(i) for i in range(n)], dtype=torch.float64).reshape(shape)


def make():
    m = torch.nn.MultiheadAttention(E, H, dtype=torch.float64)
    with torch.no_grad():
        m.in_proj_weight.copy_(filled((3 * E, E), lambda i: 0.3 * math.cos(0.37 * i)))
        m.in_proj_bias.copy_(filled((3 * E,), lambda i: 0.01 * i))
        m.out_proj.weight.copy_(filled((E, E), lambda i: 0.2 * math.sin(0.71 * i)))
        m.out_proj.bias.copy_(filled((E,), lambda i: -0.02 * i))
    return m.eval()


def inputs():
    q = filled((L, N, E), lambda i: math.sin(0.1 * i + 0.3))
    k = filled((S, N, E), lambda i: math.cos(0.13 * i))
    v = filled((S, N, E), lambda i: math.sin(0.17 * i + 1.0))
    return q, k, v


KDIM, VDIM = 5, 6


def make_extended():
    """kdim/vdim differ from E (separate projections), add_bias_kv and add_zero_attn."""
    m = torch.nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM, add_bias_kv=True, add_zero_attn=True,
                                    dtype=torch.float64)
    with torch.no_grad():
        m.q_proj_weight.copy_(filled((E, E), lambda i: 0.3 * math.cos(0.37 * i)))
        m.k_proj_weight.copy_(filled((E, KDIM), lambda i: 0.25 * math.sin(0.29 * i + 0.5)))
        m.v_proj_weight.copy_(filled((E, VDIM), lambda i: 0.35 * math.cos(0.23 * i + 0.1)))
        m.in_proj_bias.copy_(filled((3 * E,), lambda i: 0.01 * i))
        m.bias_k.copy_(filled((1, 1, E), lambda i: 0.4 * math.sin(0.9 * i)))
        m.bias_v.copy_(filled((1, 1, E), lambda i: -0.3 * math.cos(0.8 * i)))
        m.out_proj.weight.copy_(filled((E, E), lambda i: 0.2 * math.sin(0.71 * i)))
        m.out_proj.bias.copy_(filled((E,), lambda i: -0.02 * i))
    return m.eval()


def extended_inputs():
    q = filled((L, N, E), lambda i: math.sin(0.1 * i + 0.3))
    k = filled((S, N, KDIM), lambda i: math.cos(0.13 * i))
    v = filled((S, N, VDIM), lambda i: math.sin(0.17 * i + 1.0))
    return q, k, v


def show(name, t):
    vals = ", ".join(f"{x:.12g}" for x in t.detach().reshape(-1).tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def main():
    m = make()
    q, k, v = inputs()
    # 1. Self-attention, averaged weights.
    out, w = m(q, q, q)
    show("kSelfOut", out)
    show("kSelfWeights", w)
    # 2. Cross-attention with a key padding mask and a bool attn_mask, per-head weights.
    kpm = torch.tensor([[False, False, False, True], [False, True, False, False]])
    am = torch.tensor([[False, True, False, False], [False, False, False, False], [True, False, False, False]])
    out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am, average_attn_weights=False)
    show("kCrossOut", out)
    show("kCrossWeights", w)
    # 3. The fused path (need_weights=False) with a float attn_mask.
    fm = filled((L, S), lambda i: -0.5 * (i % 3))
    out, w = m(q, k, v, need_weights=False, attn_mask=fm)
    assert w is None
    show("kFusedOut", out)
    # 4. kdim/vdim, add_bias_kv, add_zero_attn: masks and per-head weights, the fused path with a
    # float mask, the causal hint, and the gradients of a weighted sum of the masked output.
    m = make_extended()
    print("// state_dict keys: " + " ".join(m.state_dict().keys()))
    q, k, v = extended_inputs()
    out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am, average_attn_weights=False)
    show("kExtendedOut", out)
    show("kExtendedWeights", w)
    out, w = m(q, k, v, need_weights=False, attn_mask=fm)
    show("kExtendedFusedOut", out)
    causal = torch.ones(L, S, dtype=torch.bool).triu(1)
    out, w = m(q, k, v, need_weights=False, attn_mask=causal, is_causal=True)
    show("kExtendedCausalOut", out)
    q.requires_grad_(True)
    k.requires_grad_(True)
    v.requires_grad_(True)
    out, _ = m(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=False)
    (out * filled(out.shape, lambda i: math.cos(0.3 * i))).sum().backward()
    show("kExtendedGradQuery", q.grad)
    show("kExtendedGradKey", k.grad)
    show("kExtendedGradValue", v.grad)
    show("kExtendedGradKProj", m.k_proj_weight.grad)
    show("kExtendedGradBiasK", m.bias_k.grad)
    show("kExtendedGradBiasV", m.bias_v.grad)


if __name__ == "__main__":
    main()
