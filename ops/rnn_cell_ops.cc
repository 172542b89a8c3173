// The fused LSTM and GRU cells (ops/raw_nn_ops.h): checks, allocation, one kernel each way.
#include <stdexcept>
#include <string>

#include "kernels/common/rnn_cell.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

[[noreturn]] void fail(const char* op, const std::string& what) { throw std::invalid_argument(std::string(op) + ": " + what); }

// Batch rows and hidden size of gate pre-activations [N, G*H] or [G*H], checked against each other.
struct Rows {
  int64_t batch, hidden;
  Shape state;  // [N, H] or [H]
};

Rows gate_rows(const char* op, const Tensor& xg, const Tensor& hg, int64_t gates) {
  check_defined(xg, op, "xg");
  check_defined(hg, op, "hg");
  check_floating(xg, op, "xg");
  if (xg.dim() != 1 && xg.dim() != 2) fail(op, "xg must be [N, G*H] or [G*H], got " + shape_str(xg.sizes()));
  if (hg.sizes() != xg.sizes() || hg.dtype() != xg.dtype() || hg.device() != xg.device()) {
    fail(op, "hg must match xg (" + shape_str(xg.sizes()) + ", " + dtype_name(xg.dtype()) + " on " + xg.device().str() +
                 "), got " + shape_str(hg.sizes()) + ", " + dtype_name(hg.dtype()) + " on " + hg.device().str());
  }
  if (xg.size(-1) % gates != 0) {
    fail(op, "the gates' last dim must be " + std::to_string(gates) + " * hidden_size, got " + std::to_string(xg.size(-1)));
  }
  Rows r{xg.dim() == 2 ? xg.size(0) : 1, xg.size(-1) / gates, {}};
  r.state = xg.dim() == 2 ? Shape{xg.size(0), r.hidden} : Shape{r.hidden};
  return r;
}

// t as a state [N, H] of `dtype` on xg's device.
void check_state(const char* op, const char* what, const Tensor& t, const Rows& r, DType dtype, const Tensor& xg) {
  check_defined(t, op, what);
  if (t.sizes() != r.state || t.dtype() != dtype || t.device() != xg.device()) {
    fail(op, std::string(what) + " must be " + shape_str(r.state) + ", " + dtype_name(dtype) + " on " +
                 xg.device().str() + ", got " + shape_str(t.sizes()) + ", " + dtype_name(t.dtype()) + " on " +
                 t.device().str());
  }
}

const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr_raw() : nullptr; }

TensorOptions like(const Tensor& t, DType dtype) { return TensorOptions(dtype).device(t.device()); }

}  // namespace

DType rnn_cell_state_dtype(DType dtype) { return dtype == kFloat16 || dtype == kBFloat16 ? kFloat32 : dtype; }

LstmCellResult lstm_cell(const Tensor& xg_arg, const Tensor& hg_arg, const Tensor& c_arg, bool save) {
  const char* op = "lstm_cell";
  const Rows r = gate_rows(op, xg_arg, hg_arg, 4);
  const DType state = rnn_cell_state_dtype(xg_arg.dtype());
  check_state(op, "c", c_arg, r, state, xg_arg);
  const Tensor xg = contiguous(xg_arg), hg = contiguous(hg_arg), c = contiguous(c_arg);
  LstmCellResult out;
  out.h = empty(r.state, like(xg, xg.dtype()));
  out.c = empty(r.state, like(xg, state));
  if (save) out.saved = empty({r.batch, 5 * r.hidden}, like(xg, state));
  run_kernel<kernels::LstmCellForward>(xg.device(), xg.dtype(), xg.data_ptr_raw(), hg.data_ptr_raw(), c.data_ptr_raw(),
                                       out.h.data_ptr_raw(), out.c.data_ptr_raw(),
                                       save ? out.saved.data_ptr_raw() : nullptr, r.batch, r.hidden);
  return out;
}

LstmCellGrads lstm_cell_backward(const Tensor& grad_h_arg, const Tensor& grad_c_arg, const Tensor& c_arg,
                                 const Tensor& saved_arg, DType dtype) {
  const char* op = "lstm_cell_backward";
  check_defined(c_arg, op, "c");
  check_defined(saved_arg, op, "saved");
  const DType state = c_arg.dtype();
  const int64_t hidden = c_arg.dim() == 0 ? 0 : c_arg.size(-1), batch = c_arg.dim() == 2 ? c_arg.size(0) : 1;
  if (c_arg.dim() < 1 || c_arg.dim() > 2 || saved_arg.sizes() != Shape{batch, 5 * hidden} ||
      saved_arg.dtype() != state || saved_arg.device() != c_arg.device()) {
    fail(op, "c must be [N, H] and saved [N, 5H] of c's dtype and device, got " + shape_str(c_arg.sizes()) + " and " +
                 shape_str(saved_arg.sizes()));
  }
  if (rnn_cell_state_dtype(dtype) != state) {
    fail(op, "the gates are " + std::string(dtype_name(dtype)) + " but c is " + dtype_name(state));
  }
  if (grad_h_arg.defined() && (grad_h_arg.sizes() != c_arg.sizes() || grad_h_arg.dtype() != dtype ||
                               grad_h_arg.device() != c_arg.device())) {
    fail(op, "grad_h must be shaped and placed as c, in the gates' dtype, got " + shape_str(grad_h_arg.sizes()) + ", " +
                 dtype_name(grad_h_arg.dtype()));
  }
  if (grad_c_arg.defined() && (grad_c_arg.sizes() != c_arg.sizes() || grad_c_arg.dtype() != state ||
                               grad_c_arg.device() != c_arg.device())) {
    fail(op, "grad_c must be shaped, typed and placed as c, got " + shape_str(grad_c_arg.sizes()) + ", " +
                 dtype_name(grad_c_arg.dtype()));
  }
  const Tensor grad_h = grad_h_arg.defined() ? contiguous(grad_h_arg) : Tensor();
  const Tensor grad_c = grad_c_arg.defined() ? contiguous(grad_c_arg) : Tensor();
  const Tensor c = contiguous(c_arg), saved = contiguous(saved_arg);
  const Shape gates_shape = c.dim() == 2 ? Shape{batch, 4 * hidden} : Shape{4 * hidden};
  LstmCellGrads g{empty(gates_shape, like(c, dtype)), empty(c.sizes(), like(c, state))};
  run_kernel<kernels::LstmCellBackward>(c.device(), dtype, data_or_null(grad_h), data_or_null(grad_c), c.data_ptr_raw(),
                                        saved.data_ptr_raw(), g.gates.data_ptr_raw(), g.c.data_ptr_raw(), batch, hidden);
  return g;
}

std::tuple<Tensor, Tensor> gru_cell(const Tensor& xg_arg, const Tensor& hg_arg, const Tensor& h_arg, bool save) {
  const char* op = "gru_cell";
  const Rows r = gate_rows(op, xg_arg, hg_arg, 3);
  check_state(op, "h", h_arg, r, xg_arg.dtype(), xg_arg);
  const Tensor xg = contiguous(xg_arg), hg = contiguous(hg_arg), h = contiguous(h_arg);
  Tensor h_next = empty(r.state, like(xg, xg.dtype()));
  Tensor saved = save ? empty({r.batch, 4 * r.hidden}, like(xg, rnn_cell_state_dtype(xg.dtype()))) : Tensor();
  run_kernel<kernels::GruCellForward>(xg.device(), xg.dtype(), xg.data_ptr_raw(), hg.data_ptr_raw(), h.data_ptr_raw(),
                                      h_next.data_ptr_raw(), saved.defined() ? saved.data_ptr_raw() : nullptr, r.batch,
                                      r.hidden);
  return {h_next, saved};
}

GruCellGrads gru_cell_backward(const Tensor& grad_arg, const Tensor& h_arg, const Tensor& saved_arg) {
  const char* op = "gru_cell_backward";
  check_defined(grad_arg, op, "grad");
  check_defined(h_arg, op, "h");
  check_defined(saved_arg, op, "saved");
  const int64_t hidden = h_arg.dim() == 0 ? 0 : h_arg.size(-1), batch = h_arg.dim() == 2 ? h_arg.size(0) : 1;
  if (h_arg.dim() < 1 || h_arg.dim() > 2 || grad_arg.sizes() != h_arg.sizes() || grad_arg.dtype() != h_arg.dtype() ||
      grad_arg.device() != h_arg.device() || saved_arg.sizes() != Shape{batch, 4 * hidden} ||
      saved_arg.dtype() != rnn_cell_state_dtype(h_arg.dtype()) || saved_arg.device() != h_arg.device()) {
    fail(op, "grad and h must be [N, H] alike and saved [N, 4H], got " + shape_str(grad_arg.sizes()) + ", " +
                 shape_str(h_arg.sizes()) + " and " + shape_str(saved_arg.sizes()));
  }
  const Tensor grad = contiguous(grad_arg), h = contiguous(h_arg), saved = contiguous(saved_arg);
  const Shape gates_shape = h.dim() == 2 ? Shape{batch, 3 * hidden} : Shape{3 * hidden};
  GruCellGrads g{empty(gates_shape, like(h, h.dtype())), empty(gates_shape, like(h, h.dtype())),
                 empty(h.sizes(), like(h, h.dtype()))};
  run_kernel<kernels::GruCellBackward>(h.device(), h.dtype(), grad.data_ptr_raw(), h.data_ptr_raw(),
                                       saved.data_ptr_raw(), g.xg.data_ptr_raw(), g.hg.data_ptr_raw(),
                                       g.h.data_ptr_raw(), batch, hidden);
  return g;
}

}  // namespace colony::raw
