"""Golden values of tests/nn/rnn_test.cc: torch.nn.RNN, LSTM, GRU and their cells in float64, with
every parameter filled by the closed form the test uses (entry p of the state dict, element i:
0.3 * cos(0.37 * i + p)), the input sin(0.1 * i + 0.3), the initial states 0.2 * cos(0.29 * i + k)
(k = 0 for h0, 1 for c0), and the loss sum_j <out_j, w_j> with w_j[i] = cos(0.23 * i + j) over the
outputs (output, h_n, c_n). Prints the outputs, the gradients of the input, the states and every
parameter (in state dict order, concatenated), and the state dict keys, as C++ initializer lists.

    /tmp/torch2/bin/python tests/nn/rnn_golden.py > tests/nn/rnn_golden.h
"""
import math

import torch

I, H, L, T, N, P = 3, 4, 2, 5, 2, 2


def closed(n, a, b, scale=1.0):
    return torch.tensor([scale * math.cos(a * i + b) for i in range(n)], dtype=torch.float64)


def fill(m):
    with torch.no_grad():
        for p, (name, t) in enumerate(m.state_dict().items()):
            t.copy_(closed(t.numel(), 0.37, p, 0.3).reshape(t.shape))
    return m


def seq(shape):
    n = math.prod(shape)
    return torch.tensor([math.sin(0.1 * i + 0.3) for i in range(n)], dtype=torch.float64).reshape(shape).requires_grad_()


def state(shape, k):
    return closed(math.prod(shape), 0.29, k, 0.2).reshape(shape).requires_grad_()


def loss_of(outs):
    return sum((o * closed(o.numel(), 0.23, j).reshape(o.shape)).sum() for j, o in enumerate(outs))


def show(name, t):
    vals = ", ".join(f"{x:.15g}" for x in t.detach().reshape(-1).tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def show_keys(name, m):
    keys = ", ".join(f'"{k}"' for k in m.state_dict().keys())
    print(f"const std::vector<std::string> {name} = {{{keys}}};")


def emit(name, m, outs, inputs):
    """outs: the module's outputs; inputs: (label, tensor) pairs whose gradients are printed."""
    loss_of(outs).backward()
    for j, o in enumerate(outs):
        show(f"{name}_out{j}", o)
    for label, t in inputs:
        show(f"{name}_grad_{label}", t.grad)
    show(f"{name}_grad_params", torch.cat([p.grad.reshape(-1) for p in m.parameters()]))
    show_keys(f"{name}_keys", m)


def layer_case(name, cls, batch_first, batched=True, proj=0, **kw):
    extra = {"proj_size": proj} if proj else {}
    m = fill(cls(I, H, L, bidirectional=True, batch_first=batch_first, dtype=torch.float64, **extra, **kw))
    shape = ((N, T, I) if batch_first else (T, N, I)) if batched else (T, I)
    x = seq(shape)
    h_size = proj or H
    h0 = state((2 * L, N, h_size) if batched else (2 * L, h_size), 0)
    if cls is torch.nn.LSTM:
        c0 = state((2 * L, N, H) if batched else (2 * L, H), 1)
        out, (hn, cn) = m(x, (h0, c0))
        emit(name, m, [out, hn, cn], [("input", x), ("h0", h0), ("c0", c0)])
    else:
        out, hn = m(x, h0)
        emit(name, m, [out, hn], [("input", x), ("h0", h0)])


def cell_case(name, cls, batched=True, **kw):
    m = fill(cls(I, H, dtype=torch.float64, **kw))
    x = seq((N, I) if batched else (I,))
    h = state((N, H) if batched else (H,), 0)
    if cls is torch.nn.LSTMCell:
        c = state((N, H) if batched else (H,), 1)
        hy, cy = m(x, (h, c))
        emit(name, m, [hy, cy], [("input", x), ("h0", h), ("c0", c)])
    else:
        emit(name, m, [m(x, h)], [("input", x), ("h0", h)])


def main():
    print("// Written by tests/nn/rnn_golden.py (torch " + torch.__version__ + "); do not edit.")
    print("#pragma once\n\n#include <cstdint>\n#include <string>\n#include <vector>\n\nnamespace colony::nn::rnn_golden {\n")
    print(f"constexpr int64_t I = {I}, H = {H}, L = {L}, T = {T}, N = {N}, P = {P};")
    layer_case("lstm", torch.nn.LSTM, False)
    layer_case("lstm_bf", torch.nn.LSTM, True)
    layer_case("lstm_unbatched", torch.nn.LSTM, False, batched=False)
    layer_case("lstm_proj", torch.nn.LSTM, True, proj=P)
    layer_case("gru", torch.nn.GRU, False)
    layer_case("gru_bf", torch.nn.GRU, True)
    layer_case("gru_unbatched", torch.nn.GRU, False, batched=False)
    layer_case("rnn_tanh", torch.nn.RNN, True)
    layer_case("rnn_relu", torch.nn.RNN, False, nonlinearity="relu")
    layer_case("rnn_unbatched", torch.nn.RNN, False, batched=False)
    cell_case("rnn_cell", torch.nn.RNNCell)
    cell_case("rnn_relu_cell", torch.nn.RNNCell, nonlinearity="relu")
    cell_case("lstm_cell", torch.nn.LSTMCell)
    cell_case("gru_cell", torch.nn.GRUCell)
    cell_case("gru_cell_unbatched", torch.nn.GRUCell, batched=False)
    cell_case("lstm_cell_nobias", torch.nn.LSTMCell, bias=False)
    print("\n}  // namespace colony::nn::rnn_golden")


if __name__ == "__main__":
    main()
