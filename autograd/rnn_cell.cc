// The fused LSTM and GRU cells (raw::lstm_cell, raw::gru_cell) with their backward nodes: one
// kernel each way per step, where the composite of sigmoid, tanh, chunk, mul and add recorded
// about twenty nodes and as many passes over [N, H] arrays.
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"
#include "ops/raw_nn_ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

std::tuple<Tensor, Tensor> lstm_cell_gates(const Tensor& xg, const Tensor& hg, const Tensor& c) {
  const bool grad = autograd::needs_grad(xg, hg, c);
  raw::LstmCellResult r = raw::lstm_cell(xg, hg, c, /*save=*/grad);
  if (!grad) return {r.h, r.c};
  // The activations are the node's own (nothing else sees them), so they are kept as a plain tensor.
  SavedTensor sc(c);
  const Tensor saved = r.saved;
  const DType dtype = xg.dtype();
  std::vector<Tensor> outputs = {r.h, r.c};
  record("LstmCellBackward", {xg, hg, c}, outputs, {sc}, [sc, saved, dtype](const Grads& g, const Needs&) -> Grads {
    raw::LstmCellGrads d = raw::lstm_cell_backward(g[0], g[1], sc.unpack(), saved, dtype);
    // xg's and hg's gradients are the same tensor: the engine never adds into one it sent twice.
    return {d.gates, d.gates, d.c};
  });
  return {outputs[0], outputs[1]};
}

Tensor gru_cell_gates(const Tensor& xg, const Tensor& hg, const Tensor& h) {
  const bool grad = autograd::needs_grad(xg, hg, h);
  auto [h_next, saved] = raw::gru_cell(xg, hg, h, /*save=*/grad);
  if (!grad) return h_next;
  SavedTensor sh(h);
  const Tensor ws = saved;
  record("GruCellBackward", {xg, hg, h}, h_next, {sh}, [sh, ws](const Grads& g, const Needs&) -> Grads {
    raw::GruCellGrads d = raw::gru_cell_backward(g[0], sh.unpack(), ws);
    return {d.xg, d.hg, d.h};
  });
  return h_next;
}

}  // namespace colony
