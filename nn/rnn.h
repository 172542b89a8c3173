// nn::RNN, LSTM, GRU (torch.nn.RNN, LSTM, GRU): multi-layer, optionally bidirectional recurrent
// layers with torch's options, parameter names, shapes, order and initialization, so a torch
// state_dict loads unchanged. Per layer k and direction (suffix "" or "_reverse"):
//   weight_ih_l{k}{suffix} [G*H, in], weight_hh_l{k}{suffix} [G*H, H_out], bias_ih_l{k}{suffix},
//   bias_hh_l{k}{suffix} [G*H] (with bias), LSTM's weight_hr_l{k}{suffix} [proj_size, H] (with
//   proj_size > 0); G = 1 (RNN), 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n); in = input_size for
//   layer 0, else H_out * num_directions; H_out = proj_size or hidden_size. Every parameter
//   starts uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) (torch's reset_parameters).
//
// Each layer and direction computes the input's gates for all time steps as one product, then one
// product of h with weight_hh per step and the gate math of nn/rnn_cell_math.h (as cuDNN and
// torch's CPU path do): for LSTM and GRU one fused kernel per step each way (lstm_cell_gates,
// gru_cell_gates of autograd/nn_ops.h, CPU and CUDA), the products and the rest autograd ops.
// Under autocast the layer runs in the lower precision (rows rnn_tanh, rnn_relu, lstm, gru).
// dropout > 0 drops the output of every layer but the last while training (torch's rule); with
// num_layers = 1 it has nothing to act on, and Colony logs a warning at construction, as torch
// warns. Inputs are dense [T, N, *] tensors (batch_first: [N, T, *]), unbatched [T, *], or packed
// sequences (nn/packed_sequence.h) through forward_with_packed_input, as libtorch's: each sequence
// runs for its own length (step t on the first batch_sizes[t] rows, the fused cell as above), the
// reverse direction starting at each sequence's own last element, and h_n / c_n hold each
// sequence's state after its last step, in the original batch order. A dense batch is run as the
// packed one whose steps all have N rows.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/arg.h"
#include "nn/module.h"
#include "nn/packed_sequence.h"
#include "nn/rnn_cells.h"

namespace colony::nn {

struct RNNOptions {
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  COLONY_ARG(int64_t, input_size);
  COLONY_ARG(int64_t, hidden_size);
  COLONY_ARG(int64_t, num_layers) = 1;
  COLONY_ARG(RNNNonlinearity, nonlinearity) = RNNNonlinearity::Tanh;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(bool, batch_first) = false;  // input and output [N, T, *] instead of [T, N, *]
  COLONY_ARG(double, dropout) = 0.0;      // between layers, while training
  COLONY_ARG(bool, bidirectional) = false;
};

struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  COLONY_ARG(int64_t, input_size);
  COLONY_ARG(int64_t, hidden_size);
  COLONY_ARG(int64_t, num_layers) = 1;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(bool, batch_first) = false;
  COLONY_ARG(double, dropout) = 0.0;
  COLONY_ARG(bool, bidirectional) = false;
  // > 0: h is projected to proj_size features by weight_hr after each step (torch's LSTMP).
  COLONY_ARG(int64_t, proj_size) = 0;
};

struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  COLONY_ARG(int64_t, input_size);
  COLONY_ARG(int64_t, hidden_size);
  COLONY_ARG(int64_t, num_layers) = 1;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(bool, batch_first) = false;
  COLONY_ARG(double, dropout) = 0.0;
  COLONY_ARG(bool, bidirectional) = false;
};

namespace detail {

// The parameters, checks and the layer loop the three share.
class RNNBase : public Module {
 public:
  enum class Mode { RNNTanh, RNNReLU, LSTM, GRU };

  void reset_parameters();
  std::string extra_repr() const override;
  // Every layer's parameters in torch's _flat_weights order: per layer and direction, w_ih, w_hh,
  // b_ih, b_hh (with bias), w_hr (with proj_size).
  std::vector<Tensor> all_weights() const;

  Mode mode;
  int64_t input_size, hidden_size, num_layers, proj_size;
  bool bias, batch_first, bidirectional;
  double dropout;

 protected:
  RNNBase(Mode mode, int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first,
          double dropout, bool bidirectional, int64_t proj_size);
  // input as given; h0 (and c0 for LSTM) as given or undefined (zeros). Returns output, h_n, c_n
  // (c_n undefined but for LSTM).
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& h0, const Tensor& c0);
  // A packed input, h0 and c0 [L * D, B, *] in the original batch order (B = batch_sizes[0]).
  // Returns the output packed as the input, h_n and c_n in the original batch order.
  std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> run_packed(const utils::rnn::PackedSequence& input,
                                                                    const Tensor& h0, const Tensor& c0);

 private:
  struct Layer {
    Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
  };
  // s checked against [L * D, batch, size] ([L * D, size] unbatched) and shaped [L * D, batch,
  // size]; undefined stays undefined.
  Tensor checked_state(const Tensor& s, int64_t batch, int64_t size, bool batched, const char* what) const;
  // Every layer over rows [P, input_size], whose step t is the next batch_sizes[t] rows
  // (non-increasing; a dense batch is T steps of N rows), from states [L * D, B, *] (undefined:
  // zeros). Returns the last layer's rows [P, D * H_out], h_n and c_n [L * D, B, *].
  std::tuple<Tensor, Tensor, Tensor> run_rows(const Tensor& input, const std::vector<int64_t>& batch_sizes,
                                              const Tensor& h0, const Tensor& c0);
  // One layer in one direction: step t runs the fused cell on the first batch_sizes[t] rows of the
  // state. Returns its rows [P, H_out] and each sequence's state after its last valid step.
  std::tuple<Tensor, Tensor, Tensor> run_direction(const Layer& w, bool reverse, const Tensor& input,
                                                   const std::vector<int64_t>& batch_sizes, const Tensor& h0,
                                                   const Tensor& c0);
  std::vector<Layer> layers_;  // [layer * num_directions + direction]
};

}  // namespace detail

class RNN : public detail::RNNBase {
  COLONY_CLONEABLE
 public:
  explicit RNN(const RNNOptions& options);
  RNN(int64_t input_size, int64_t hidden_size) : RNN(RNNOptions(input_size, hidden_size)) {}
  // input [T, N, input_size] (batch_first: [N, T, input_size]) or unbatched [T, input_size];
  // hx [num_layers * num_directions, N, H] ([.., H] unbatched), zeros when left out.
  // Returns (output [T, N, num_directions * H] (batch_first: [N, T, ...]), h_n shaped as hx).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
  // packed_input's data [P, input_size]; hx [L * D, B, H] (B = batch_sizes[0], the original batch
  // order). Returns (output packed as the input, data [P, D * H]; h_n).
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = Tensor());
  RNNOptions options;
};

class LSTM : public detail::RNNBase {
  COLONY_CLONEABLE
 public:
  explicit LSTM(const LSTMOptions& options);
  LSTM(int64_t input_size, int64_t hidden_size) : LSTM(LSTMOptions(input_size, hidden_size)) {}
  // hx_cx = (h0 [L * D, N, H_out], c0 [L * D, N, H]) (unbatched without N), zeros when left out.
  // Returns (output [T, N, D * H_out], (h_n, c_n)), as libtorch's LSTM.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx_cx = std::nullopt);
  // As forward, on a packed input: (output packed as the input, (h_n, c_n)).
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input,
      const std::optional<std::tuple<Tensor, Tensor>>& hx_cx = std::nullopt);
  LSTMOptions options;
};

class GRU : public detail::RNNBase {
  COLONY_CLONEABLE
 public:
  explicit GRU(const GRUOptions& options);
  GRU(int64_t input_size, int64_t hidden_size) : GRU(GRUOptions(input_size, hidden_size)) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = Tensor());
  GRUOptions options;
};

}  // namespace colony::nn
