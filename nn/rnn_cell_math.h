// The math of one recurrent step, shared by the cells (nn/rnn_cells.h) and the layers that run
// them over a sequence (nn/rnn.h), as torch's rnn_tanh_cell, rnn_relu_cell, lstm_cell and
// gru_cell compute it (gate order i, f, g, o for LSTM and r, z, n for GRU; GRU's b_hn inside
// the product with r). The products are autograd ops; the LSTM and GRU gate math after them is
// one fused op each way (lstm_cell_gates, gru_cell_gates of autograd/nn_ops.h: one kernel forward
// saving the activations, one backward), the simple RNN's is tanh / relu of the sum.
//
// Precision: the products run in the inputs' dtype (under autocast, the callers cast every input
// to the lower precision first, torch's rows for these ops); the gate math of 16-bit inputs runs
// in float32 and each result is rounded once to the inputs' dtype, as torch's fused CUDA cells
// (_thnn_fused_lstm_cell, _thnn_fused_gru_cell) and cuDNN do. An LSTM layer keeps c in float32
// between its steps (c_n is rounded at the end).
#pragma once

#include <tuple>

#include "tensor/tensor.h"

namespace colony::nn::functional {

// One step of each cell: input [N, input_size] (or [input_size]), hx [N, H] (or [H]),
// w_ih [G*H, input_size], w_hh [G*H, H], b_ih and b_hh [G*H] (undefined without bias).
// Under autocast every floating input is cast to the lower precision (the table's rows
// rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell) and the results come back in it.
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
// Returns (h', c').
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());

}  // namespace colony::nn::functional

namespace colony::nn::rnn_step {

// The step from the input's gates xg = x W_ih^T + b_ih ([N, G*H], computed for every time step at
// once by the layers) and the previous state; the hidden product h W_hh^T + b_hh is taken here.
// h is in the compute dtype of the products (x's); the new h comes back in it.
Tensor simple(const Tensor& xg, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh, bool relu);
// c in any floating dtype (the layers keep it in float32 for 16-bit inputs); returns (h', c') with
// c' in the gate math's dtype. w_hr (LSTM's proj_size) projects h' when defined.
std::tuple<Tensor, Tensor> lstm(const Tensor& xg, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                                const Tensor& b_hh, const Tensor& w_hr = Tensor());
Tensor gru(const Tensor& xg, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh);

// The dtype the gate math runs in for inputs of `dtype`: float32 for 16-bit floats, else itself.
DType gate_dtype(DType dtype);

}  // namespace colony::nn::rnn_step
