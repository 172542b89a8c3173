"""Golden values of tests/nn/transformer_test.cc: torch.nn.TransformerEncoderLayer (eval, float64)
with every parameter filled by the closed form the test uses (parameter p of the state dict,
element i: 0.3 * cos(0.37 * i + p)), printed as C++ initializer lists.

    python tests/nn/transformer_golden.py
"""
import math

import torch

D, H, FF, S, N = 8, 2, 16, 5, 2


def fill(layer):
    with torch.no_grad():
        for p, (name, t) in enumerate(layer.state_dict().items()):
            flat = torch.tensor([0.3 * math.cos(0.37 * i + p) for i in range(t.numel())], dtype=torch.float64)
            t.copy_(flat.reshape(t.shape))
    return layer.eval()


def src():
    return torch.tensor([math.sin(0.1 * i + 0.3) for i in range(S * N * D)], dtype=torch.float64).reshape(S, N, D)


def show(name, t):
    vals = ", ".join(f"{x:.12g}" for x in t.detach().reshape(-1).tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def main():
    torch.backends.mha.set_fastpath_enabled(False)  # the reference math, not the fused fast path
    kpm = torch.tensor([[False, False, False, False, True], [False, True, False, False, False]])
    post = fill(torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.1, dtype=torch.float64))
    print("// " + ", ".join(post.state_dict().keys()))
    show("kPostReluOut", post(src(), src_key_padding_mask=kpm))
    pre = fill(torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.1, activation="gelu", norm_first=True,
                                                dtype=torch.float64))
    causal = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=torch.float64)
    show("kPreGeluCausalOut", pre(src(), src_mask=causal, is_causal=True))


if __name__ == "__main__":
    main()
