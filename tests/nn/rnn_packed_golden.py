"""Golden values of tests/nn/rnn_packed_test.cc: torch.nn.utils.rnn's packing and RNN, LSTM, GRU on
packed sequences, in float64, with rnn_golden.py's closed forms (every state dict entry p, element
i: 0.3 * cos(0.37 * i + p); the padded input sin(0.1 * i + 0.3); the initial states
0.2 * cos(0.29 * i + k), k = 0 for h0, 1 for c0) and its loss sum_j <out_j, cos(0.23 * i + j)>
over the outputs (the packed output's data, the padded output, h_n, c_n). Prints the outputs, the
gradients of the padded input, the states and every parameter (state dict order, concatenated),
and the state dict keys, as C++ initializer lists.

    /tmp/torch2/bin/python tests/nn/rnn_packed_golden.py > tests/nn/rnn_packed_golden.h
"""
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnn_golden import closed, fill, loss_of, seq, show, show_keys, state

I, H, L, T, N, P = 3, 4, 2, 5, 3, 2
UNSORTED = [3, 5, 2]  # enforce_sorted=False
SORTED = [5, 3, 2]


def show_ints(name, t):
    print(f"const std::vector<int64_t> {name} = {{{', '.join(str(int(v)) for v in t.reshape(-1).tolist())}}};")


def packed_case(name, cls, lengths, layers=L, bidirectional=True, batch_first=False, proj=0, with_state=True, **kw):
    extra = {"proj_size": proj} if proj else {}
    m = fill(cls(I, H, layers, bidirectional=bidirectional, batch_first=batch_first, dtype=torch.float64, **extra,
                 **kw))
    x = seq((N, T, I) if batch_first else (T, N, I))
    sorted_ = lengths == sorted(lengths, reverse=True)
    packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=sorted_)
    dirs = 2 if bidirectional else 1
    h0 = state((dirs * layers, N, proj or H), 0)
    c0 = state((dirs * layers, N, H), 1)
    inputs = [("input", x)]
    if cls is torch.nn.LSTM:
        out, (hn, cn) = m(packed, (h0, c0) if with_state else None)
        finals = [hn, cn]
        if with_state:
            inputs += [("h0", h0), ("c0", c0)]
    else:
        out, hn = m(packed, h0 if with_state else None)
        finals = [hn]
        if with_state:
            inputs += [("h0", h0)]
    padded, out_lengths = pad_packed_sequence(out, batch_first=batch_first)
    outs = [out.data, padded] + finals
    loss_of(outs).backward()
    for j, o in enumerate(outs):
        show(f"{name}_out{j}", o)
    for label, t in inputs:
        show(f"{name}_grad_{label}", t.grad)
    show(f"{name}_grad_params", torch.cat([p.grad.reshape(-1) for p in m.parameters()]))
    show_keys(f"{name}_keys", m)


def utils_case():
    """pack_padded_sequence (unsorted, batch_first) and pad_packed_sequence (total_length, padding)."""
    x = seq((N, T - 1, 2))
    packed = pack_padded_sequence(x, torch.tensor([2, 4, 1]), batch_first=True, enforce_sorted=False)
    show("utils_data", packed.data)
    show_ints("utils_batch_sizes", packed.batch_sizes)
    show_ints("utils_sorted_indices", packed.sorted_indices)
    show_ints("utils_unsorted_indices", packed.unsorted_indices)
    padded, lengths = pad_packed_sequence(packed, batch_first=False, padding_value=-1.5, total_length=T + 1)
    show("utils_padded", padded)
    show_ints("utils_lengths", lengths)
    (padded * closed(padded.numel(), 0.23, 0).reshape(padded.shape)).sum().backward()
    show("utils_grad_input", x.grad)


def main():
    print("// Written by tests/nn/rnn_packed_golden.py (torch " + torch.__version__ + "); do not edit.")
    print("#pragma once\n\n#include <cstdint>\n#include <string>\n#include <vector>\n")
    print("namespace colony::nn::rnn_packed_golden {\n")
    print(f"constexpr int64_t I = {I}, H = {H}, L = {L}, T = {T}, N = {N}, P = {P};")
    print(f"const std::vector<int64_t> unsorted_lengths = {{{', '.join(map(str, UNSORTED))}}};")
    print(f"const std::vector<int64_t> sorted_lengths = {{{', '.join(map(str, SORTED))}}};")
    utils_case()
    packed_case("lstm", torch.nn.LSTM, UNSORTED)
    packed_case("lstm_proj_bf", torch.nn.LSTM, UNSORTED, batch_first=True, proj=P)
    packed_case("lstm_sorted", torch.nn.LSTM, SORTED, layers=1, bidirectional=False, with_state=False)
    packed_case("gru_bf", torch.nn.GRU, UNSORTED, batch_first=True)
    packed_case("gru_sorted", torch.nn.GRU, SORTED, layers=1, bidirectional=False, with_state=False)
    packed_case("rnn_relu", torch.nn.RNN, UNSORTED, nonlinearity="relu")
    packed_case("rnn_tanh_sorted", torch.nn.RNN, SORTED, layers=2, bidirectional=True)
    print("\n}  // namespace colony::nn::rnn_packed_golden")


if __name__ == "__main__":
    main()
