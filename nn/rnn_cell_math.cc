#include "nn/rnn_cell_math.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/nn_ops.h"
#include "autograd/ops.h"

namespace colony::nn {
namespace rnn_step {
namespace {

// t in the gate math's dtype (a differentiable cast, so gradients return in t's dtype).
Tensor widen(const Tensor& t) {
  const DType d = gate_dtype(t.dtype());
  return d == t.dtype() ? t : to(t, t.device(), d);
}

Tensor narrow_to(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : to(t, t.device(), dtype); }

}  // namespace

DType gate_dtype(DType dtype) { return dtype == kFloat16 || dtype == kBFloat16 ? kFloat32 : dtype; }

Tensor simple(const Tensor& xg, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh, bool relu) {
  Tensor pre = add(widen(xg), widen(linear(h, w_hh, b_hh)));
  return narrow_to(relu ? colony::relu(pre) : colony::tanh(pre), h.dtype());
}

std::tuple<Tensor, Tensor> lstm(const Tensor& xg, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                                const Tensor& b_hh, const Tensor& w_hr) {
  // The fused cell (autograd/nn_ops.h): c in the gate math's dtype, h' in xg's, rounded once.
  auto [h_next, c_next] = lstm_cell_gates(xg, linear(h, w_hh, b_hh), narrow_to(c, gate_dtype(xg.dtype())));
  h_next = narrow_to(h_next, h.dtype());
  if (w_hr.defined()) h_next = linear(h_next, w_hr);
  return {h_next, c_next};
}

Tensor gru(const Tensor& xg, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  // The fused cell (autograd/nn_ops.h): the math in float32 for 16-bit, h' rounded once.
  return gru_cell_gates(xg, linear(h, w_hh, b_hh), narrow_to(h, xg.dtype()));
}

}  // namespace rnn_step

namespace functional {
namespace {

// torch's check_rnn_cell_forward_input / _hidden, with its wording.
void check_cell(const char* op, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                int64_t gates, const char* hx_name) {
  if (!input.defined() || !hx.defined() || !w_ih.defined() || !w_hh.defined()) {
    throw std::invalid_argument(std::string(op) + ": input, " + hx_name + ", w_ih and w_hh must be defined");
  }
  if (w_ih.dim() != 2 || w_hh.dim() != 2 || w_ih.size(0) % gates != 0 || w_hh.size(0) != w_ih.size(0) ||
      w_hh.size(1) * gates != w_hh.size(0)) {
    throw std::invalid_argument(std::string(op) + ": w_ih must be [" + std::to_string(gates) + " * H, input_size] and w_hh [" +
                                std::to_string(gates) + " * H, H], got " + shape_str(w_ih.sizes()) + " and " +
                                shape_str(w_hh.sizes()));
  }
  const int64_t input_size = w_ih.size(1), hidden = w_hh.size(1);
  if (input.dim() != 1 && input.dim() != 2) {
    throw std::invalid_argument(std::string(op) + ": Expected input to be 1D or 2D, got " + std::to_string(input.dim()) +
                                "D instead");
  }
  if (input.size(-1) != input_size) {
    throw std::invalid_argument(std::string(op) + ": input has inconsistent input_size: got " +
                                std::to_string(input.size(-1)) + " expected " + std::to_string(input_size));
  }
  const Shape expected = input.dim() == 2 ? Shape{input.size(0), hidden} : Shape{hidden};
  if (hx.sizes() != expected) {
    throw std::invalid_argument(std::string(op) + ": " + hx_name + " must be " + shape_str(expected) + " for input " +
                                shape_str(input.sizes()) + " (batch and hidden_size " + std::to_string(hidden) +
                                "), got " + shape_str(hx.sizes()));
  }
}

// The inputs as the autocast row casts them.
struct Cast {
  Cast(autocast::Op op, const std::vector<const Tensor*>& in) {
    for (const Tensor* t : in) out.push_back(autocast::cast(op, *t));
  }
  std::vector<Tensor> out;
};

Tensor simple_cell(autocast::Op op, const char* name, bool relu, const Tensor& input, const Tensor& hx,
                   const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_cell(name, input, hx, w_ih, w_hh, 1, "hx");
  const Cast c(op, {&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh});
  return rnn_step::simple(linear(c.out[0], c.out[2], c.out[4]), c.out[1], c.out[3], c.out[5], relu);
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return simple_cell(autocast::Op::rnn_tanh_cell, "rnn_tanh_cell", false, input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return simple_cell(autocast::Op::rnn_relu_cell, "rnn_relu_cell", true, input, hx, w_ih, w_hh, b_ih, b_hh);
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("lstm_cell", input, hx, w_ih, w_hh, 4, "hx");
  check_cell("lstm_cell", input, cx, w_ih, w_hh, 4, "cx");
  const Cast c(autocast::Op::lstm_cell, {&input, &hx, &cx, &w_ih, &w_hh, &b_ih, &b_hh});
  auto [h, cell] = rnn_step::lstm(linear(c.out[0], c.out[3], c.out[5]), c.out[1], c.out[2], c.out[4], c.out[6]);
  const DType dtype = c.out[2].dtype();
  return {h, cell.dtype() == dtype ? cell : to(cell, cell.device(), dtype)};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  check_cell("gru_cell", input, hx, w_ih, w_hh, 3, "hx");
  const Cast c(autocast::Op::gru_cell, {&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh});
  return rnn_step::gru(linear(c.out[0], c.out[2], c.out[4]), c.out[1], c.out[3], c.out[5]);
}

}  // namespace functional
}  // namespace colony::nn
