#include "nn/rnn.h"

#include <algorithm>
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

Tensor RNNBase::checked_state(const Tensor& s, int64_t batch, int64_t size, bool batched, const char* what) const {
  if (!s.defined()) return s;
  const std::string type = type_of(mode);
  auto fail = [&](const std::string& msg) { throw std::invalid_argument(type + ": " + msg); };
  if (batched && s.dim() != 3) {
    fail(std::string("For batched 3-D input, ") + what + " should also be 3-D but got " + std::to_string(s.dim()) +
         "-D tensor");
  }
  if (!batched && s.dim() != 2) {
    fail(std::string("For unbatched 2-D input, ") + what + " should also be 2-D but got " + std::to_string(s.dim()) +
         "-D tensor");
  }
  Tensor st = batched ? s : s.unsqueeze(1);
  const int64_t dirs = bidirectional ? 2 : 1;
  const Shape expected = {num_layers * dirs, batch, size};
  if (st.sizes() != expected) {
    fail(std::string("Expected ") + what + " size " + tuple_str(batched ? expected : Shape{num_layers * dirs, size}) +
         " (num_layers * num_directions, " + (batched ? "batch, " : "") + std::to_string(size) + "), got " +
         shape_str(s.sizes()));
  }
  return st;
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::run(const Tensor& input, const Tensor& h0, const Tensor& c0) {
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
  const int64_t T = x.size(0), N = x.size(1);
  if (T == 0) fail("the input has no time steps: " + shape_str(input.sizes()));
  const int64_t h_out = proj_size > 0 ? proj_size : hidden_size;
  // The dense batch is a packed one whose every step has all N rows.
  const Tensor h = checked_state(h0, N, h_out, batched, mode == Mode::LSTM ? "h0" : "hx");
  const Tensor c = checked_state(c0, N, hidden_size, batched, "c0");
  auto [rows, h_last, c_last] = run_rows(reshape(x, {T * N, input_size}), std::vector<int64_t>(T, N), h, c);
  Tensor output = reshape(rows, {T, N, rows.size(1)});
  if (batched && batch_first) output = output.transpose(0, 1);
  if (!batched) {
    output = output.squeeze(1);
    h_last = h_last.squeeze(1);
    if (c_last.defined()) c_last = c_last.squeeze(1);
  }
  return {output, h_last, c_last};
}

std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> RNNBase::run_packed(const utils::rnn::PackedSequence& input,
                                                                          const Tensor& h0, const Tensor& c0) {
  const std::string type = type_of(mode);
  auto fail = [&](const std::string& what) { throw std::invalid_argument(type + ": " + what); };
  const Tensor& data = input.data();
  if (!data.defined() || !input.batch_sizes().defined()) fail("the packed input is empty");
  // torch's check_input for packed input (its data has no batch dim).
  if (data.dim() != 2) fail("input must have 2 dimensions, got " + std::to_string(data.dim()));
  if (data.size(1) != input_size) {
    fail("input.size(-1) must be equal to input_size. Expected " + std::to_string(input_size) + ", got " +
         std::to_string(data.size(1)));
  }
  const std::vector<int64_t> batch_sizes = input.batch_size_values();
  int64_t rows_total = 0;
  for (size_t t = 0; t < batch_sizes.size(); ++t) {
    if (batch_sizes[t] <= 0 || (t > 0 && batch_sizes[t] > batch_sizes[t - 1])) {
      fail("the packed input's batch_sizes must be positive and non-increasing");
    }
    rows_total += batch_sizes[t];
  }
  if (batch_sizes.empty() || rows_total != data.size(0)) {
    fail("the packed input's batch_sizes add up to " + std::to_string(rows_total) + " rows but its data has " +
         std::to_string(data.size(0)));
  }
  const int64_t B = batch_sizes[0], h_out = proj_size > 0 ? proj_size : hidden_size;
  // The states come in the original batch order (torch's permute_hidden) and go back to it.
  const Tensor& sorted = input.sorted_indices();
  auto to_sorted = [&](const Tensor& s) { return s.defined() && sorted.defined() ? index_select(s, 1, sorted) : s; };
  const Tensor h = to_sorted(checked_state(h0, B, h_out, true, mode == Mode::LSTM ? "h0" : "hx"));
  const Tensor c = to_sorted(checked_state(c0, B, hidden_size, true, "c0"));
  auto [rows, h_last, c_last] = run_rows(data, batch_sizes, h, c);
  const Tensor& unsorted = input.unsorted_indices();
  if (unsorted.defined()) {
    h_last = index_select(h_last, 1, unsorted);
    if (c_last.defined()) c_last = index_select(c_last, 1, unsorted);
  }
  return {utils::rnn::PackedSequence(rows, input.batch_sizes(), sorted, unsorted), h_last, c_last};
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::run_rows(const Tensor& input, const std::vector<int64_t>& batch_sizes,
                                                     const Tensor& h0_arg, const Tensor& c0_arg) {
  const int64_t B = batch_sizes[0], dirs = bidirectional ? 2 : 1;
  const int64_t h_out = proj_size > 0 ? proj_size : hidden_size;
  const autocast::Op op = autocast_op(mode);
  const Tensor x = autocast::cast(op, input);
  const Tensor h0 = autocast::cast(op, h0_arg), c0 = autocast::cast(op, c0_arg);
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
      Tensor h = h0.defined() ? h0s[idx] : zeros({B, h_out}, state_options);
      Tensor c;
      if (mode == Mode::LSTM) {
        // c in the gate math's dtype from the start (the reverse direction joins c0's rows to it).
        c = c0.defined() ? colony::to(c0s[idx], c0s[idx].device(), cell_options.dtype())
                         : zeros({B, hidden_size}, cell_options);
      }
      auto [out, h_last, c_last] = run_direction(layers_[idx], d == 1, layer_input, batch_sizes, h, c);
      outputs.push_back(out);
      h_n.push_back(h_last);
      if (c_last.defined()) c_n.push_back(c_last.dtype() == dtype ? c_last : colony::to(c_last, c_last.device(), dtype));
    }
    layer_input = dirs == 1 ? outputs[0] : cat(outputs, 1);
    if (dropout > 0 && is_training() && l + 1 < num_layers) layer_input = functional::dropout(layer_input, dropout, true);
  }
  return {layer_input, stack(h_n, 0), c_n.empty() ? Tensor() : stack(c_n, 0)};
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::run_direction(const Layer& w, bool reverse, const Tensor& input,
                                                          const std::vector<int64_t>& batch_sizes, const Tensor& h0,
                                                          const Tensor& c0) {
  const autocast::Op op = autocast_op(mode);
  const Tensor w_hh = autocast::cast(op, w.w_hh), b_hh = autocast::cast(op, w.b_hh), w_hr = autocast::cast(op, w.w_hr);
  // The input's gates for every step as one product, then split into steps (one node, whose
  // backward writes the steps' gradients into one tensor).
  const std::vector<Tensor> xg =
      split_with_sizes(linear(input, autocast::cast(op, w.w_ih), autocast::cast(op, w.b_ih)), batch_sizes, 0);
  const int64_t T = static_cast<int64_t>(batch_sizes.size()), B = batch_sizes[0];
  auto step = [&](int64_t t, Tensor& h, Tensor& c) {
    switch (mode) {
      case Mode::LSTM: std::tie(h, c) = rnn_step::lstm(xg[t], h, c, w_hh, b_hh, w_hr); break;
      case Mode::GRU: h = rnn_step::gru(xg[t], h, w_hh, b_hh); break;
      default: h = rnn_step::simple(xg[t], h, w_hh, b_hh, mode == Mode::RNNReLU); break;
    }
  };
  auto rows = [](const Tensor& s, int64_t start, int64_t length) {
    return !s.defined() || (start == 0 && length == s.size(0)) ? s : narrow(s, 0, start, length);
  };
  std::vector<Tensor> hs(T);
  Tensor h = h0, c = c0;
  if (!reverse) {
    // Step t runs the first batch_sizes[t] rows; the rows of the sequences that ended before it
    // are their final states, set aside (the last rows first).
    std::vector<Tensor> h_done, c_done;
    int64_t last = B;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t bs = batch_sizes[t];
      if (bs < last) {
        h_done.push_back(rows(h, bs, last - bs));
        h = rows(h, 0, bs);
        if (c.defined()) {
          c_done.push_back(rows(c, bs, last - bs));
          c = rows(c, 0, bs);
        }
        last = bs;
      }
      step(t, h, c);
      hs[t] = h;
    }
    h_done.push_back(h);
    if (c.defined()) c_done.push_back(c);
    std::reverse(h_done.begin(), h_done.end());
    std::reverse(c_done.begin(), c_done.end());
    h = h_done.size() == 1 ? h_done[0] : cat(h_done, 0);
    if (c.defined()) c = c_done.size() == 1 ? c_done[0] : cat(c_done, 0);
  } else {
    // From the last step back: each sequence starts at its own last element, from its initial
    // state, as the rows grow.
    int64_t last = batch_sizes[T - 1];
    h = rows(h0, 0, last);
    c = rows(c0, 0, last);
    for (int64_t t = T - 1; t >= 0; --t) {
      const int64_t bs = batch_sizes[t];
      if (bs > last) {
        h = cat({h, rows(h0, last, bs - last)}, 0);
        if (c.defined()) c = cat({c, rows(c0, last, bs - last)}, 0);
        last = bs;
      }
      step(t, h, c);
      hs[t] = h;
    }
  }
  return {T == 1 ? hs[0] : cat(hs, 0), h, c};
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

std::tuple<utils::rnn::PackedSequence, Tensor> RNN::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const Tensor& hx) {
  auto [out, h, c] = run_packed(packed_input, hx, Tensor());
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

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> LSTM::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const std::optional<std::tuple<Tensor, Tensor>>& hx_cx) {
  const Tensor h0 = hx_cx ? std::get<0>(*hx_cx) : Tensor(), c0 = hx_cx ? std::get<1>(*hx_cx) : Tensor();
  if (h0.defined() != c0.defined()) throw std::invalid_argument("LSTM: pass both h0 and c0, or neither");
  auto [out, h, c] = run_packed(packed_input, h0, c0);
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

std::tuple<utils::rnn::PackedSequence, Tensor> GRU::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const Tensor& hx) {
  auto [out, h, c] = run_packed(packed_input, hx, Tensor());
  return {out, h};
}

}  // namespace colony::nn
