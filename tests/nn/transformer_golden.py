"""Golden values of tests/nn/transformer_test.cc and tests/nn/transformer_decoder_test.cc:
torch.nn.TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder
and Transformer (eval, float64) with every parameter of the module filled by the closed form the
tests use (parameter p of the state dict, element i: 0.3 * cos(0.37 * i + p)), the stacks' final
norm's weight 1 + 0.1 * sin(i) and bias 0.05 * cos(i), printed as C++ initializer lists, and the
state dict keys the tests compare with.

    python tests/nn/transformer_golden.py
"""
import math

import torch

D, H, FF, S, N = 8, 2, 16, 5, 2
T = 4  # the decoder tests' target length (the memory has S positions)


def fill(layer):
    with torch.no_grad():
        for p, (name, t) in enumerate(layer.state_dict().items()):
            flat = torch.tensor([0.3 * math.cos(0.37 * i + p) for i in range(t.numel())], dtype=torch.float64)
            t.copy_(flat.reshape(t.shape))
    return layer.eval()


def src():
    return torch.tensor([math.sin(0.1 * i + 0.3) for i in range(S * N * D)], dtype=torch.float64).reshape(S, N, D)


def tgt():
    return torch.tensor([math.cos(0.17 * i - 0.2) for i in range(T * N * D)], dtype=torch.float64).reshape(T, N, D)


def memory_mask():
    """An additive [T, S] mask: -0.3 |i - j| (no -inf, so every position counts)."""
    return torch.tensor([[-0.3 * abs(i - j) for j in range(S)] for i in range(T)], dtype=torch.float64)


def golden_norm():
    norm = torch.nn.LayerNorm(D, dtype=torch.float64)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([1 + 0.1 * math.sin(i) for i in range(D)], dtype=torch.float64))
        norm.bias.copy_(torch.tensor([0.05 * math.cos(i) for i in range(D)], dtype=torch.float64))
    return norm


def show_keys(name, module):
    keys = ", ".join(f'"{k}"' for k in module.state_dict().keys())
    print(f"const std::vector<std::string> {name} = {{{keys}}};")


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
    norm = golden_norm()
    post_stack = torch.nn.TransformerEncoder(post, num_layers=2, norm=norm, enable_nested_tensor=False).eval()
    print("// " + ", ".join(post_stack.state_dict().keys()))
    show("kEncoderPostReluPaddingOut", post_stack(src(), src_key_padding_mask=kpm))
    pre_stack = torch.nn.TransformerEncoder(pre, num_layers=2, enable_nested_tensor=False).eval()
    show("kEncoderPreGeluCausalOut", pre_stack(src(), mask=causal))

    print()
    print("// tests/nn/transformer_decoder_test.cc")
    causal_t = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    dec_post = fill(torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.1, dtype=torch.float64))
    show_keys("kDecoderLayerKeys", dec_post)
    show("kDecoderPostReluOut", dec_post(tgt(), src(), tgt_mask=causal_t, memory_key_padding_mask=kpm))
    dec_pre = fill(torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.1, activation="gelu", norm_first=True,
                                                    batch_first=True, dtype=torch.float64))
    tgt_kpm = torch.tensor([[False, False, False, True], [False, False, False, False]])
    show("kDecoderPreGeluBatchFirstOut",  # [N, T, D]
         dec_pre(tgt().transpose(0, 1), src().transpose(0, 1), memory_mask=memory_mask(),
                 tgt_key_padding_mask=tgt_kpm))
    dec_stack = torch.nn.TransformerDecoder(dec_post, num_layers=2, norm=golden_norm()).eval()
    show("kDecoderStackOut", dec_stack(tgt(), src(), tgt_mask=causal_t, memory_key_padding_mask=kpm))

    # The whole model, 2 + 2 layers, every parameter (both final norms too) by the closed form.
    model = fill(torch.nn.Transformer(D, H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF,
                                      dropout=0.1, dtype=torch.float64))
    show_keys("kTransformerKeys", model)
    x, y = src().requires_grad_(), tgt().requires_grad_()
    out = model(x, y, tgt_mask=causal_t, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)
    show("kTransformerOut", out)
    # The gradients of sum(out * w), w_i = cos(0.29 i) (a sum of squares would give gradients near
    # zero through the final LayerNorm): the source's (back through the memory and the whole
    # encoder), the target's, and the first encoder layer's packed projection's.
    w = torch.tensor([math.cos(0.29 * i) for i in range(out.numel())], dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    show("kTransformerSrcGrad", x.grad)
    show("kTransformerTgtGrad", y.grad)
    show("kTransformerEncoderInProjGrad", model.encoder.layers[0].self_attn.in_proj_weight.grad)
    model_pre = fill(torch.nn.Transformer(D, H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF,
                                          dropout=0.1, activation="gelu", norm_first=True, batch_first=True,
                                          layer_norm_eps=1e-3, dtype=torch.float64))
    show("kTransformerPreGeluBatchFirstOut",  # [N, T, D]
         model_pre(src().transpose(0, 1), tgt().transpose(0, 1), tgt_mask=causal_t, memory_mask=memory_mask()))


if __name__ == "__main__":
    main()
