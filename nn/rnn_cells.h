// nn::RNNCell, LSTMCell, GRUCell (torch.nn.RNNCell, LSTMCell, GRUCell): one recurrent step, with
// torch's parameter names, shapes and order (weight_ih [G*H, input_size], weight_hh [G*H, H],
// bias_ih, bias_hh [G*H]; G = 1, 4 (i, f, g, o), 3 (r, z, n)) and its initialization, uniform
// (-1/sqrt(H), 1/sqrt(H)) on every parameter, so a torch state_dict loads. The math is
// nn/rnn_cell_math.h's (autocast rows rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell).
#pragma once

#include <optional>
#include <string>
#include <tuple>

#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {

// RNN's and RNNCell's nonlinearity (torch's "tanh" / "relu").
enum class RNNNonlinearity { Tanh, ReLU };

struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  COLONY_ARG(int64_t, input_size);
  COLONY_ARG(int64_t, hidden_size);
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(RNNNonlinearity, nonlinearity) = RNNNonlinearity::Tanh;
};

// LSTMCell and GRUCell take the same options less the nonlinearity.
struct RNNCellBaseOptions {
  RNNCellBaseOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  COLONY_ARG(int64_t, input_size);
  COLONY_ARG(int64_t, hidden_size);
  COLONY_ARG(bool, bias) = true;
};
using LSTMCellOptions = RNNCellBaseOptions;
using GRUCellOptions = RNNCellBaseOptions;

namespace detail {

// The parameters, their initialization and printing, common to the three cells.
class RNNCellBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t input_size, hidden_size;
  bool bias;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;  // the biases undefined without bias

 protected:
  RNNCellBase(const char* type, int64_t input_size, int64_t hidden_size, bool bias, int64_t gates);
  // hx when defined, else zeros [N, H] ([H] for unbatched input) in the input's dtype and device.
  Tensor state_or_zeros(const Tensor& input, const Tensor& hx) const;
  std::string repr_extra_;  // RNNCell's ", nonlinearity=relu"
};

}  // namespace detail

class RNNCell : public detail::RNNCellBase {
  COLONY_CLONEABLE
 public:
  explicit RNNCell(const RNNCellOptions& options);
  RNNCell(int64_t input_size, int64_t hidden_size) : RNNCell(RNNCellOptions(input_size, hidden_size)) {}
  // input [N, input_size] or unbatched [input_size]; hx [N, H] / [H], zeros when left out (or
  // undefined). Returns h'.
  Tensor forward(const Tensor& input, const Tensor& hx);
  Tensor forward(const Tensor& input) override { return forward(input, Tensor()); }
  RNNCellOptions options;
};

class LSTMCell : public detail::RNNCellBase {
  COLONY_CLONEABLE
 public:
  explicit LSTMCell(const LSTMCellOptions& options);
  LSTMCell(int64_t input_size, int64_t hidden_size) : LSTMCell(LSTMCellOptions(input_size, hidden_size)) {}
  // hx_cx = (h, c), each [N, H] / [H], zeros when left out. Returns (h', c').
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     const std::optional<std::tuple<Tensor, Tensor>>& hx_cx = std::nullopt);
  LSTMCellOptions options;
};

class GRUCell : public detail::RNNCellBase {
  COLONY_CLONEABLE
 public:
  explicit GRUCell(const GRUCellOptions& options);
  GRUCell(int64_t input_size, int64_t hidden_size) : GRUCell(GRUCellOptions(input_size, hidden_size)) {}
  Tensor forward(const Tensor& input, const Tensor& hx);
  Tensor forward(const Tensor& input) override { return forward(input, Tensor()); }
  GRUCellOptions options;
};

}  // namespace colony::nn
