#include "nn/rnn.h"

#include <cmath>
#include <stdexcept>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "log/log.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/repr.h"
#include "nn/rnn_cell_math.h"
#include "ops/raw_ops.h"

namespace colony::nn {
namespace detail {
namespace {

const char* type_of(RNNBase::Mode mode) {
  switch (mode) {
    case RNNBase::Mode::LSTM: return "LSTM";
    case RNNBase::Mode::GRU: return "GRU";
    default: return "RNN";
  }
}

int64_t gates_of(RNNBase::Mode mode) {
  switch (mode) {
    case RNNBase::Mode::LSTM: return 4;
    case RNNBase::Mode::GRU: return 3;
    default: return 1;
  }
}

autocast::Op autocast_op(RNNBase::Mode mode) {
  switch (mode) {
    case RNNBase::Mode::LSTM: return autocast::Op::lstm;
    case RNNBase::Mode::GRU: return autocast::Op::gru;
    case RNNBase::Mode::RNNReLU: return autocast::Op::rnn_relu;
    default: return autocast::Op::rnn_tanh;
  }
}

std::string tuple_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

RNNBase::RNNBase(Mode m, int64_t in, int64_t hidden, int64_t layers, bool with_bias, bool first, double p, bool bidir,
                 int64_t proj)
    : mode(m), input_size(in), hidden_size(hidden), num_layers(layers), proj_size(proj), bias(with_bias),
      batch_first(first), bidirectional(bidir), dropout(p) {
  const std::string type = type_of(m);
  auto fail = [&](const std::string& what) { throw std::invalid_argument(type + ": " + what); };
  if (in <= 0 || hidden <= 0 || layers <= 0) {
    fail("input_size, hidden_size and num_layers must be positive, got " + std::to_string(in) + ", " +
         std::to_string(hidden) + " and " + std::to_string(layers));
  }
  if (!(p >= 0.0 && p <= 1.0)) {
    fail("dropout should be a number in range [0, 1] representing the probability of an element being zeroed, got " +
         repr::py_float(p));
  }
  if (proj < 0) fail("proj_size should be a positive integer or zero to disable projections, got " + std::to_string(proj));
  if (proj >= hidden) {
    fail("proj_size has to be smaller than hidden_size, got proj_size=" + std::to_string(proj) + " and hidden_size=" +
         std::to_string(hidden));
  }
  if (p > 0 && layers == 1) {
    // torch's UserWarning, word for word: the option is kept and does nothing.
    log::warning("{}: dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                 "num_layers greater than 1, but got dropout={} and num_layers={}",
                 type, repr::py_float(p), layers);
  }
  const int64_t gates = gates_of(m), dirs = bidir ? 2 : 1, h_out = proj > 0 ? proj : hidden;
  // torch's registration order (its _flat_weights_names), which is its state dict's.
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      const int64_t layer_in = l == 0 ? in : h_out * dirs;
      Layer w;
      w.w_ih = register_parameter("weight_ih" + sfx, raw::empty({gates * hidden, layer_in}));
      w.w_hh = register_parameter("weight_hh" + sfx, raw::empty({gates * hidden, h_out}));
      if (with_bias) {
        w.b_ih = register_parameter("bias_ih" + sfx, raw::empty({gates * hidden}));
        w.b_hh = register_parameter("bias_hh" + sfx, raw::empty({gates * hidden}));
      }
      if (proj > 0) w.w_hr = register_parameter("weight_hr" + sfx, raw::empty({proj, hidden}));
      layers_.push_back(w);
    }
  }
  reset_parameters();
}

void RNNBase::reset_parameters() {
  // torch's RNNBase.reset_parameters: every parameter uniform(-1/sqrt(H), 1/sqrt(H)), in order.
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& p : parameters(false)) init::uniform_(p, -bound, bound);
}

std::vector<Tensor> RNNBase::all_weights() const { return parameters(false); }

std::string RNNBase::extra_repr() const {
  // torch's RNNBase.extra_repr: the sizes, then only the options that differ from the defaults.
  std::string s = std::to_string(input_size) + ", " + std::to_string(hidden_size);
  if (proj_size != 0) s += ", proj_size=" + std::to_string(proj_size);
  if (num_layers != 1) s += ", num_layers=" + std::to_string(num_layers);
  if (!bias) s += ", bias=False";
  if (batch_first) s += ", batch_first=True";
  if (dropout != 0) s += ", dropout=" + repr::py_float(dropout);
  if (bidirectional) s += ", bidirectional=True";
  return s;
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::run(const Tensor& input, const Tensor& h0_arg, const Tensor& c0_arg) {
  const std::string type = type_of(mode);
  auto fail = [&](const std::string& what) { throw std::invalid_argument(type + ": " + what); };
  if (!input.defined()) fail("input must be defined");
  if (input.dim() != 2 && input.dim() != 3) {
    fail("Expected input to be 2D or 3D, got " + std::to_string(input.dim()) + "D instead");
  }
  const bool batched = input.dim() == 3;
  // Work in [T, N, features] whatever the layout given.
  Tensor x = batched ? input : input.unsqueeze(1);
  if (batched && batch_first) x = x.transpose(0, 1);
  if (x.size(2) != input_size) {
    fail("input.size(-1) must be equal to input_size. Expected " + std::to_string(input_size) + ", got " +
         std::to_string(x.size(2)));
  }
  const int64_t T = x.size(0), N = x.size(1), dirs = bidirectional ? 2 : 1;
  const int64_t h_out = proj_size > 0 ? proj_size : hidden_size;
  if (T == 0) fail("the input has no time steps: " + shape_str(input.sizes()));

  // A given state, checked and shaped [L * D, N, size].
  auto state = [&](const Tensor& s, int64_t size, const char* what) -> Tensor {
    if (!s.defined()) return s;
    if (batched && s.dim() != 3) {
      fail(std::string("For batched 3-D input, ") + what + " should also be 3-D but got " + std::to_string(s.dim()) +
           "-D tensor");
    }
    if (!batched && s.dim() != 2) {
      fail(std::string("For unbatched 2-D input, ") + what + " should also be 2-D but got " + std::to_string(s.dim()) +
           "-D tensor");
    }
    Tensor st = batched ? s : s.unsqueeze(1);
    const Shape expected = {num_layers * dirs, N, size};
    if (st.sizes() != expected) {
      fail(std::string("Expected ") + what + " size " + tuple_str(batched ? expected : Shape{num_layers * dirs, size}) +
           " (num_layers * num_directions, " + (batched ? "batch, " : "") + std::to_string(size) + "), got " +
           shape_str(s.sizes()));
    }
    return st;
  };
  const char* h_name = mode == Mode::LSTM ? "h0" : "hx";
  const autocast::Op op = autocast_op(mode);
  x = autocast::cast(op, x);
  const Tensor h0 = autocast::cast(op, state(h0_arg, h_out, h_name));
  const Tensor c0 = autocast::cast(op, state(c0_arg, hidden_size, "c0"));
  const std::vector<Tensor> h0s = h0.defined() ? unbind(h0, 0) : std::vector<Tensor>();
  const std::vector<Tensor> c0s = c0.defined() ? unbind(c0, 0) : std::vector<Tensor>();
  const DType dtype = x.dtype();
  const TensorOptions state_options = TensorOptions(dtype).device(x.device());
  const TensorOptions cell_options = TensorOptions(rnn_step::gate_dtype(dtype)).device(x.device());

  std::vector<Tensor> h_n, c_n;
  Tensor layer_input = x;
  for (int64_t l = 0; l < num_layers; ++l) {
    std::vector<Tensor> outputs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t idx = l * dirs + d;
      const Layer& w = layers_[idx];
      const Tensor w_hh = autocast::cast(op, w.w_hh), b_hh = autocast::cast(op, w.b_hh), w_hr = autocast::cast(op, w.w_hr);
      // The input's gates for every step as one product, then split into steps (one node, whose
      // backward writes the steps' gradients into one tensor).
      const std::vector<Tensor> xg = split(linear(layer_input, autocast::cast(op, w.w_ih), autocast::cast(op, w.b_ih)), 1, 0);
      Tensor h = h0.defined() ? h0s[idx] : zeros({N, h_out}, state_options);
      Tensor c;
      if (mode == Mode::LSTM) c = c0.defined() ? c0s[idx] : zeros({N, hidden_size}, cell_options);
      std::vector<Tensor> hs(T);
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? s : T - 1 - s;
        const Tensor g = xg[t].squeeze(0);
        switch (mode) {
          case Mode::LSTM: std::tie(h, c) = rnn_step::lstm(g, h, c, w_hh, b_hh, w_hr); break;
          case Mode::GRU: h = rnn_step::gru(g, h, w_hh, b_hh); break;
          default: h = rnn_step::simple(g, h, w_hh, b_hh, mode == Mode::RNNReLU); break;
        }
        hs[t] = h;
      }
      outputs.push_back(stack(hs, 0));
      h_n.push_back(h);
      if (c.defined()) c_n.push_back(c.dtype() == dtype ? c : colony::to(c, c.device(), dtype));
    }
    layer_input = dirs == 1 ? outputs[0] : cat(outputs, 2);
    if (dropout > 0 && is_training() && l + 1 < num_layers) layer_input = functional::dropout(layer_input, dropout, true);
  }
  Tensor output = layer_input, h_last = stack(h_n, 0), c_last = c_n.empty() ? Tensor() : stack(c_n, 0);
  if (batched && batch_first) output = output.transpose(0, 1);
  if (!batched) {
    output = output.squeeze(1);
    h_last = h_last.squeeze(1);
    if (c_last.defined()) c_last = c_last.squeeze(1);
  }
  return {output, h_last, c_last};
}

}  // namespace detail

RNN::RNN(const RNNOptions& o)
    : RNNBase(o.nonlinearity() == RNNNonlinearity::ReLU ? Mode::RNNReLU : Mode::RNNTanh, o.input_size(),
              o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(), o.bidirectional(), 0),
      options(o) {}

std::tuple<Tensor, Tensor> RNN::forward(const Tensor& input, const Tensor& hx) {
  auto [out, h, c] = run(input, hx, Tensor());
  return {out, h};
}

LSTM::LSTM(const LSTMOptions& o)
    : RNNBase(Mode::LSTM, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(),
              o.bidirectional(), o.proj_size()),
      options(o) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTM::forward(const Tensor& input,
                                                             const std::optional<std::tuple<Tensor, Tensor>>& hx_cx) {
  const Tensor h0 = hx_cx ? std::get<0>(*hx_cx) : Tensor(), c0 = hx_cx ? std::get<1>(*hx_cx) : Tensor();
  if (h0.defined() != c0.defined()) throw std::invalid_argument("LSTM: pass both h0 and c0, or neither");
  auto [out, h, c] = run(input, h0, c0);
  return {out, {h, c}};
}

GRU::GRU(const GRUOptions& o)
    : RNNBase(Mode::GRU, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(),
              o.bidirectional(), 0),
      options(o) {}

std::tuple<Tensor, Tensor> GRU::forward(const Tensor& input, const Tensor& hx) {
  auto [out, h, c] = run(input, hx, Tensor());
  return {out, h};
}

}  // namespace colony::nn
