// One LSTM or GRU step's gate math after its two products (xg = x W_ih^T + b_ih, hg = h W_hh^T +
// b_hh, each [N, G*H] in torch's gate order: LSTM i, f, g, o; GRU r, z, n), forward and backward,
// as one kernel each way (torch's _thnn_fused_lstm_cell / _thnn_fused_gru_cell). The per-element
// formulas are written once here, over any type with + - * (float, double, and the CPU kernel's
// vectors), with the activation functions and their gradients of elementwise_functors.h; the
// kernel entry points are declared once for both devices (kernel.h) and defined in
// kernels/cpu/rnn_cell.cc and kernels/cuda/rnn_cell.cu.
//
// dtype is xg's, hg's and the hidden states'; 16-bit floats compute in float32 and round each
// result once. The LSTM cell state, its gradient and the saved activations are in the compute
// dtype (float32 for 16-bit, else dtype), as the layers keep c in float32 under autocast.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/elementwise_functors.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// ---- the math of one element (one hidden unit of one batch row) ----

// LSTM from the activated gates i, f, g, o and the old cell state c: c' = f c + i g, h' = o
// tanh(c') (torch's order of operations). tanh_c = tanh(c') is kept for the backward.
template <typename C, typename TanhFn>
COLONY_INLINE void lstm_cell_element(C i, C f, C g, C o, C c, TanhFn tanh_fn, C* c_next, C* tanh_c, C* h_next) {
  *c_next = f * c + i * g;
  *tanh_c = tanh_fn(*c_next);
  *h_next = o * *tanh_c;
}

// Its gradients from gh = dL/dh' and gc = dL/dc' (0 where an output has none): those of the four
// gate pre-activations and of c.
template <typename C>
COLONY_INLINE void lstm_cell_element_grads(C gh, C gc, C i, C f, C g, C o, C c, C tanh_c, C* di, C* df, C* dg,
                                           C* d_o, C* dc) {
  *d_o = activation_grad_fn<ActivationGrad::Sigmoid>(gh * tanh_c, o);
  const C dc_next = gc + activation_grad_fn<ActivationGrad::Tanh>(gh * o, tanh_c);
  *di = activation_grad_fn<ActivationGrad::Sigmoid>(dc_next * g, i);
  *df = activation_grad_fn<ActivationGrad::Sigmoid>(dc_next * c, f);
  *dg = activation_grad_fn<ActivationGrad::Tanh>(dc_next * i, g);
  *dc = dc_next * f;
}

// GRU from the activated r and z, the n gate's two pre-activation parts xn and hn and the old h:
// n = tanh(xn + r hn), h' = (1 - z) n + z h, written as torch's gru_cell computes it: (h - n) z + n.
template <typename C, typename TanhFn>
COLONY_INLINE void gru_cell_element(C r, C z, C xn, C hn, C h, TanhFn tanh_fn, C* n, C* h_next) {
  *n = tanh_fn(xn + r * hn);
  *h_next = (h - *n) * z + *n;
}

// Its gradients from gh = dL/dh': those of the r and z pre-activations (the same for xg and hg),
// of the n pre-activation (xg's; hg's is dn r) and of h.
template <typename C>
COLONY_INLINE void gru_cell_element_grads(C gh, C h, C r, C z, C n, C hn, C* dr, C* dz, C* dn, C* dn_h, C* dh) {
  *dn = activation_grad_fn<ActivationGrad::Tanh>(gh - gh * z, n);
  *dn_h = *dn * r;
  *dr = activation_grad_fn<ActivationGrad::Sigmoid>(*dn * hn, r);
  *dz = activation_grad_fn<ActivationGrad::Sigmoid>(gh * (h - n), z);
  *dh = gh * z;
}

// ---- the kernels: rows of contiguous arrays, batch rows of H units ----

// xg, hg [batch, 4H] (dtype); c [batch, H] (compute dtype). Writes h_next [batch, H] (dtype),
// c_next [batch, H] and, unless saved is null, saved [batch, 5H] (compute dtype): i, f, g, o
// activated, then tanh(c').
COLONY_KERNEL(LstmCellForward, DType dtype, const void* xg, const void* hg, const void* c, void* h_next, void* c_next,
              void* saved, int64_t batch, int64_t hidden);
// grad_h [batch, H] (dtype) and grad_c [batch, H] (compute dtype) may each be null (no gradient
// reached that output: zeros). Writes grad_gates [batch, 4H] (dtype; xg's and hg's gradient alike)
// and grad_c_prev [batch, H] (compute dtype).
COLONY_KERNEL(LstmCellBackward, DType dtype, const void* grad_h, const void* grad_c, const void* c, const void* saved,
              void* grad_gates, void* grad_c_prev, int64_t batch, int64_t hidden);

// xg, hg [batch, 3H], h [batch, H] (dtype). Writes h_next [batch, H] (dtype) and, unless saved is
// null, saved [batch, 4H] (compute dtype): r, z, n, and hg's n part (torch's workspace).
COLONY_KERNEL(GruCellForward, DType dtype, const void* xg, const void* hg, const void* h, void* h_next, void* saved,
              int64_t batch, int64_t hidden);
// From grad_h_next [batch, H]: grad_xg, grad_hg [batch, 3H] and grad_h [batch, H] (all dtype).
COLONY_KERNEL(GruCellBackward, DType dtype, const void* grad_h_next, const void* h, const void* saved, void* grad_xg,
              void* grad_hg, void* grad_h, int64_t batch, int64_t hidden);

}  // namespace colony::kernels
