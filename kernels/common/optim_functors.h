// Per-element optimizer updates, written once for the CPU loops and the CUDA kernels. The
// formulas are PyTorch's (torch/optim/sgd.py and adam.py, single-tensor path); the per-step
// scalars (bias corrections) are computed on the host in double and passed in.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

struct SgdParams {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
  bool first_step;  // the momentum buffer is initialized to the gradient, undamped
  bool maximize;
};

// Updates p (and buf when momentum != 0) for one element.
template <typename T>
COLONY_INLINE void sgd_update(T& p, T g, T& buf, const SgdParams& s) {
  using C = compute_t<T>;
  C d = static_cast<C>(g);
  if (s.maximize) d = -d;
  C pv = static_cast<C>(p);
  if (s.weight_decay != 0) d += static_cast<C>(s.weight_decay) * pv;
  if (s.momentum != 0) {
    C b = s.first_step ? d : static_cast<C>(s.momentum) * static_cast<C>(buf) + static_cast<C>(1 - s.dampening) * d;
    buf = static_cast<T>(b);
    d = s.nesterov ? d + static_cast<C>(s.momentum) * b : b;
  }
  p = static_cast<T>(pv - static_cast<C>(s.lr) * d);
}

struct AdamParams {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay;  // AdamW
  bool amsgrad;
  bool maximize;
  double bias_correction1, bias_correction2_sqrt;  // 1 - beta1^t, sqrt(1 - beta2^t)
};

template <typename T>
COLONY_INLINE void adam_update(T& p, T g, T& m, T& v, T& vmax, const AdamParams& a) {
  using C = compute_t<T>;
  C grad = static_cast<C>(g);
  if (a.maximize) grad = -grad;
  C pv = static_cast<C>(p);
  if (a.weight_decay != 0) {
    if (a.decoupled_weight_decay) {
      pv *= static_cast<C>(1 - a.lr * a.weight_decay);
    } else {
      grad += static_cast<C>(a.weight_decay) * pv;
    }
  }
  C mv = static_cast<C>(m) + (grad - static_cast<C>(m)) * static_cast<C>(1 - a.beta1);  // lerp, as PyTorch
  C vv = static_cast<C>(a.beta2) * static_cast<C>(v) + static_cast<C>(1 - a.beta2) * grad * grad;
  m = static_cast<T>(mv);
  v = static_cast<T>(vv);
  C second = vv;
  if (a.amsgrad) {
    C mx = static_cast<C>(vmax) > vv ? static_cast<C>(vmax) : vv;
    vmax = static_cast<T>(mx);
    second = mx;
  }
  C denom = sqrt(second) / static_cast<C>(a.bias_correction2_sqrt) + static_cast<C>(a.eps);
  C step_size = static_cast<C>(a.lr / a.bias_correction1);
  p = static_cast<T>(pv - step_size * mv / denom);
}

}  // namespace colony::kernels
