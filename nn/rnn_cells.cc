#include "nn/rnn_cells.h"

#include <cmath>
#include <stdexcept>

#include "autograd/ops.h"
#include "nn/init.h"
#include "nn/rnn_cell_math.h"
#include "ops/raw_ops.h"

namespace colony::nn {
namespace detail {

RNNCellBase::RNNCellBase(const char* type, int64_t in, int64_t hidden, bool with_bias, int64_t gates)
    : input_size(in), hidden_size(hidden), bias(with_bias) {
  if (in <= 0 || hidden <= 0) {
    throw std::invalid_argument(std::string(type) + ": input_size and hidden_size must be positive, got " +
                                std::to_string(in) + " and " + std::to_string(hidden));
  }
  // torch's registration order, which is its state dict's.
  weight_ih = register_parameter("weight_ih", raw::empty({gates * hidden, in}));
  weight_hh = register_parameter("weight_hh", raw::empty({gates * hidden, hidden}));
  if (with_bias) {
    bias_ih = register_parameter("bias_ih", raw::empty({gates * hidden}));
    bias_hh = register_parameter("bias_hh", raw::empty({gates * hidden}));
  }
  reset_parameters();
}

void RNNCellBase::reset_parameters() {
  // torch's RNNCellBase.reset_parameters: every parameter uniform(-1/sqrt(H), 1/sqrt(H)), in order.
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& p : parameters(false)) init::uniform_(p, -bound, bound);
}

std::string RNNCellBase::extra_repr() const {
  return std::to_string(input_size) + ", " + std::to_string(hidden_size) + (bias ? "" : ", bias=False") + repr_extra_;
}

Tensor RNNCellBase::state_or_zeros(const Tensor& input, const Tensor& hx) const {
  if (hx.defined()) return hx;
  if (!input.defined()) throw std::invalid_argument(name() + ": input must be defined");
  const Shape shape = input.dim() == 2 ? Shape{input.size(0), hidden_size} : Shape{hidden_size};
  return zeros(shape, TensorOptions(input.dtype()).device(input.device()));
}

}  // namespace detail

RNNCell::RNNCell(const RNNCellOptions& o)
    : RNNCellBase("RNNCell", o.input_size(), o.hidden_size(), o.bias(), 1), options(o) {
  if (o.nonlinearity() == RNNNonlinearity::ReLU) repr_extra_ = ", nonlinearity=relu";
}

Tensor RNNCell::forward(const Tensor& input, const Tensor& hx) {
  const Tensor h = state_or_zeros(input, hx);
  return options.nonlinearity() == RNNNonlinearity::ReLU
             ? functional::rnn_relu_cell(input, h, weight_ih, weight_hh, bias_ih, bias_hh)
             : functional::rnn_tanh_cell(input, h, weight_ih, weight_hh, bias_ih, bias_hh);
}

LSTMCell::LSTMCell(const LSTMCellOptions& o) : RNNCellBase("LSTMCell", o.input_size(), o.hidden_size(), o.bias(), 4), options(o) {}

std::tuple<Tensor, Tensor> LSTMCell::forward(const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx_cx) {
  const Tensor h = state_or_zeros(input, hx_cx ? std::get<0>(*hx_cx) : Tensor());
  const Tensor c = state_or_zeros(input, hx_cx ? std::get<1>(*hx_cx) : Tensor());
  return functional::lstm_cell(input, h, c, weight_ih, weight_hh, bias_ih, bias_hh);
}

GRUCell::GRUCell(const GRUCellOptions& o) : RNNCellBase("GRUCell", o.input_size(), o.hidden_size(), o.bias(), 3), options(o) {}

Tensor GRUCell::forward(const Tensor& input, const Tensor& hx) {
  return functional::gru_cell(input, state_or_zeros(input, hx), weight_ih, weight_hh, bias_ih, bias_hh);
}

}  // namespace colony::nn
