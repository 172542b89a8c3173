"""Golden values of tests/nn/transformer_test.cc: torch.nn.TransformerEncoderLayer and
torch.nn.TransformerEncoder (eval, float64) with every parameter of the layer filled by the closed
form the test uses (parameter p of the state dict, element i: 0.3 * cos(0.37 * i + p)), the final
norm's weight 1 + 0.1 * sin(i) and bias 0.05 * cos(i), printed as C++ initializer lists.

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

    # TransformerEncoder deep-copies the filled layer, so both layers hold the closed form.
    norm = torch.nn.LayerNorm(D, dtype=torch.float64)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([1 + 0.1 * math.sin(i) for i in range(D)], dtype=torch.float64))
        norm.bias.copy_(torch.tensor([0.05 * math.cos(i) for i in range(D)], dtype=torch.float64))
    post_stack = torch.nn.TransformerEncoder(post, num_layers=2, norm=norm, enable_nested_tensor=False).eval()
    print("// " + ", ".join(post_stack.state_dict().keys()))
    show("kEncoderPostReluPaddingOut", post_stack(src(), src_key_padding_mask=kpm))
    pre_stack = torch.nn.TransformerEncoder(pre, num_layers=2, enable_nested_tensor=False).eval()
    show("kEncoderPreGeluCausalOut", pre_stack(src(), mask=causal))


if __name__ == "__main__":
    main()
