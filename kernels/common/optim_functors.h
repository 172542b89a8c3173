// Per-element optimizer updates, written once for the CPU loops and the CUDA kernels. The
// formulas are PyTorch's (torch/optim/sgd.py and adam.py, single-tensor path); the per-step
// scalars (bias corrections) are computed on the host in double and passed in, except in a step
// that must not depend on the host (one captured in a CUDA graph): there the kernels read the
// learning rate, each tensor's step count and GradScaler's overflow flag from memory on their own
// device, at every run (the pointer fields below; adam_params_for, step_skipped, count_step).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/macros.h"
#include "kernels/common/scalar_math.h"

namespace colony::kernels {

struct SgdParams {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
  bool first_step;  // the momentum buffer is initialized to the gradient, undamped
  bool maximize;
  // When set, the learning rate is read from here (device memory for a CUDA kernel) instead of
  // `lr`: a step captured in a CUDA graph then follows a scheduler's changes between replays.
  const double* lr_ptr = nullptr;
  // When set and nonzero (GradScaler found an inf/NaN gradient), nothing is updated.
  const float* found_inf = nullptr;
};

// Whether a step is skipped: GradScaler's overflow flag, read where the kernel runs.
COLONY_INLINE bool step_skipped(const float* found_inf) { return found_inf != nullptr && *found_inf != 0.0f; }

// The scalars of an SGD step with the learning rate read from memory when it lives there: called
// once per kernel (or CPU call), so the per-element update reads plain values and vectorizes
// (a pointer test per element kept GCC's loop scalar).
COLONY_INLINE SgdParams sgd_params_for(const SgdParams& s) {
  SgdParams r = s;
  if (s.lr_ptr != nullptr) r.lr = *s.lr_ptr;
  r.lr_ptr = nullptr;
  return r;
}

// Which terms of the SGD update apply, asked of the options at run time...
struct RuntimeSgdFlags {
  COLONY_INLINE static bool maximize(const SgdParams& s) { return s.maximize; }
  COLONY_INLINE static bool weight_decay(const SgdParams& s) { return s.weight_decay != 0; }
  COLONY_INLINE static bool momentum(const SgdParams& s) { return s.momentum != 0; }
  COLONY_INLINE static bool first_step(const SgdParams& s) { return s.first_step; }
  COLONY_INLINE static bool nesterov(const SgdParams& s) { return s.nesterov; }
};
// ...or fixed at compile time (the caller checked that they match the options), so that a CPU
// loop over many elements has no branches and vectorizes. Nesterov and maximize: off.
template <bool kMomentum, bool kFirstStep, bool kWeightDecay>
struct FixedSgdFlags {
  static constexpr bool kUsesBuffer = kMomentum;
  COLONY_INLINE static bool maximize(const SgdParams&) { return false; }
  COLONY_INLINE static bool weight_decay(const SgdParams&) { return kWeightDecay; }
  COLONY_INLINE static bool momentum(const SgdParams&) { return kMomentum; }
  COLONY_INLINE static bool first_step(const SgdParams&) { return kFirstStep; }
  COLONY_INLINE static bool nesterov(const SgdParams&) { return false; }
};

// Updates p (and buf when momentum != 0) for one element; `s` as sgd_params_for returns it.
template <typename T, typename Flags = RuntimeSgdFlags>
COLONY_INLINE void sgd_update(T& p, T g, T& buf, const SgdParams& s, Flags = {}) {
  using C = compute_t<T>;
  C d = static_cast<C>(g);
  if (Flags::maximize(s)) d = -d;
  C pv = static_cast<C>(p);
  if (Flags::weight_decay(s)) d += static_cast<C>(s.weight_decay) * pv;
  if (Flags::momentum(s)) {
    C b = Flags::first_step(s) ? d
                               : static_cast<C>(s.momentum) * static_cast<C>(buf) + static_cast<C>(1 - s.dampening) * d;
    buf = static_cast<T>(b);
    d = Flags::nesterov(s) ? d + static_cast<C>(s.momentum) * b : b;
  }
  p = static_cast<T>(pv - static_cast<C>(s.lr) * d);
}

struct AdamParams {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay;  // AdamW
  bool amsgrad;
  bool maximize;
  double bias_correction1, bias_correction2_sqrt;  // 1 - beta1^t, sqrt(1 - beta2^t)
  // As SgdParams' (a captured step): the learning rate read from memory, and a step skipped when
  // the flag is nonzero. Each tensor's step count, when kept in memory too, is a separate list.
  const double* lr_ptr = nullptr;
  const float* found_inf = nullptr;
};

// The scalars of one tensor's Adam step with what lives in memory resolved: the learning rate,
// and, when `step` (the tensor's step count before this step) is given, the bias corrections of
// step *step + 1, in double as on the host.
COLONY_INLINE AdamParams adam_params_for(const AdamParams& a, const double* step) {
  AdamParams r = a;
  if (a.lr_ptr != nullptr) r.lr = *a.lr_ptr;
  if (step != nullptr) {
    const double t = *step + 1;
    r.bias_correction1 = 1 - ::pow(a.beta1, t);
    r.bias_correction2_sqrt = ::sqrt(1 - ::pow(a.beta2, t));
  }
  return r;
}

// Advances a step count kept in memory, unless the step was skipped.
COLONY_INLINE void count_step(double* step, const float* found_inf) {
  if (!step_skipped(found_inf)) *step += 1;
}

// Which terms of the Adam update apply, asked of the options at run time (as RuntimeSgdFlags)...
struct RuntimeAdamFlags {
  COLONY_INLINE static bool maximize(const AdamParams& a) { return a.maximize; }
  COLONY_INLINE static bool amsgrad(const AdamParams& a) { return a.amsgrad; }
  COLONY_INLINE static bool weight_decay(const AdamParams& a) { return a.weight_decay != 0; }
  COLONY_INLINE static bool decoupled(const AdamParams& a) { return a.decoupled_weight_decay; }
};
// ...or fixed at compile time, so that a CPU loop has no branches and vectorizes (with the flags
// read per element GCC kept AdamW's loop scalar: 4.6 % of the character-level GPT's float32 step).
// amsgrad and maximize: off.
template <bool kWeightDecay, bool kDecoupled>
struct FixedAdamFlags {
  COLONY_INLINE static bool maximize(const AdamParams&) { return false; }
  COLONY_INLINE static bool amsgrad(const AdamParams&) { return false; }
  COLONY_INLINE static bool weight_decay(const AdamParams&) { return kWeightDecay; }
  COLONY_INLINE static bool decoupled(const AdamParams&) { return kDecoupled; }
};

template <typename T, typename Flags = RuntimeAdamFlags>
COLONY_INLINE void adam_update(T& p, T g, T& m, T& v, T& vmax, const AdamParams& a, Flags = {}) {
  using C = compute_t<T>;
  C grad = static_cast<C>(g);
  if (Flags::maximize(a)) grad = -grad;
  C pv = static_cast<C>(p);
  if (Flags::weight_decay(a)) {
    if (Flags::decoupled(a)) {
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
  if (Flags::amsgrad(a)) {
    C mx = static_cast<C>(vmax) > vv ? static_cast<C>(vmax) : vv;
    vmax = static_cast<T>(mx);
    second = mx;
  }
  // In C, as PyTorch's float32 update (and the CUDA kernels) compute it: the bare libm sqrt took
  // the CPU's float32 update through double, and kept its loop from vectorizing in float lanes.
  C denom = math::sqrt(second) / static_cast<C>(a.bias_correction2_sqrt) + static_cast<C>(a.eps);
  C step_size = static_cast<C>(a.lr / a.bias_correction1);
  p = static_cast<T>(pv - step_size * mv / denom);
}

// ---------------------------------------------------------------------------------------------
// RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD: torch.optim's single-tensor rules
// (torch/optim/<name>.py, _single_tensor_<name>), one element at a time, in the order torch's
// tensor ops round: x.mul_(a).addcmul_(g, g, value=b) is (x * a) + (b * g) * g, addcdiv_(t1, t2,
// value=s) is x + (s * t1) / t2, add_(t, alpha=a) is x + a * t, the scalars cast to the compute type
// as torch casts a Python float. Per-step scalars (bias corrections, Adagrad's decayed rate, NAdam's
// momentum cache, RAdam's rectification) are computed on the host in double, as torch does in
// Python, and passed in. Every rule updates the parameter and up to kMaxOptimStates state tensors
// (s0, s1, s2 below; a rule names which hold what); a state a rule does not use is a dummy.

constexpr int kMaxOptimStates = 3;

// torch.lerp's formula (aten/src/ATen/native/Lerp.h): the two forms meet at weight 0.5.
template <typename C>
COLONY_INLINE C torch_lerp(C self, C end, C weight) {
  return (weight < C(0.5) && weight > C(-0.5)) ? self + weight * (end - self) : end - (end - self) * (C(1) - weight);
}

// The gradient as every rule below starts: negated to maximize, plus L2 weight decay.
template <typename C>
COLONY_INLINE C coupled_grad(C g, C p, bool maximize, double weight_decay) {
  if (maximize) g = -g;
  if (weight_decay != 0) g += static_cast<C>(weight_decay) * p;
  return g;
}

// RMSprop. s0: square_avg; s1: grad_avg (centered); s2: momentum_buffer (momentum > 0).
struct RmspropParams {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};
struct RmspropRule {
  using Params = RmspropParams;
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T& s1, T& s2, const Params& k) {
    using C = compute_t<T>;
    C pv = static_cast<C>(p);
    C grad = coupled_grad(static_cast<C>(g), pv, k.maximize, k.weight_decay);
    C sq = static_cast<C>(s0) * static_cast<C>(k.alpha) + static_cast<C>(1 - k.alpha) * grad * grad;
    s0 = static_cast<T>(sq);
    C avg;
    if (k.centered) {
      C ga = torch_lerp(static_cast<C>(s1), grad, static_cast<C>(1 - k.alpha));
      s1 = static_cast<T>(ga);
      avg = math::sqrt(sq + C(-1) * ga * ga);
    } else {
      avg = math::sqrt(sq);
    }
    avg += static_cast<C>(k.eps);
    if (k.momentum > 0) {
      C buf = static_cast<C>(s2) * static_cast<C>(k.momentum) + grad / avg;
      s2 = static_cast<T>(buf);
      p = static_cast<T>(pv + static_cast<C>(-k.lr) * buf);
    } else {
      p = static_cast<T>(pv + static_cast<C>(-k.lr) * grad / avg);
    }
  }
};

// Adagrad. s0: sum. clr = lr / (1 + (step - 1) * lr_decay).
struct AdagradParams {
  double clr, eps, weight_decay;
  bool maximize;
};
struct AdagradRule {
  using Params = AdagradParams;
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T&, T&, const Params& k) {
    using C = compute_t<T>;
    C pv = static_cast<C>(p);
    C grad = coupled_grad(static_cast<C>(g), pv, k.maximize, k.weight_decay);
    C sum = static_cast<C>(s0) + C(1) * grad * grad;
    s0 = static_cast<T>(sum);
    C std = math::sqrt(sum) + static_cast<C>(k.eps);
    p = static_cast<T>(pv + static_cast<C>(-k.clr) * grad / std);
  }
};

// Adamax. s0: exp_avg; s1: exp_inf. clr = lr / (1 - beta1^t).
struct AdamaxParams {
  double clr, beta1, beta2, eps, weight_decay;
  bool maximize;
};
struct AdamaxRule {
  using Params = AdamaxParams;
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T& s1, T&, const Params& k) {
    using C = compute_t<T>;
    C pv = static_cast<C>(p);
    C grad = coupled_grad(static_cast<C>(g), pv, k.maximize, k.weight_decay);
    C m = torch_lerp(static_cast<C>(s0), grad, static_cast<C>(1 - k.beta1));
    C decayed = static_cast<C>(s1) * static_cast<C>(k.beta2);
    C bound = math::abs(grad) + static_cast<C>(k.eps);
    // torch.maximum: NaN wins.
    C u = (decayed != decayed || decayed > bound) ? decayed : bound;
    s0 = static_cast<T>(m);
    s1 = static_cast<T>(u);
    p = static_cast<T>(pv + static_cast<C>(-k.clr) * m / u);
  }
};

// The decay of NAdam and RAdam: decoupled (p *= 1 - lr * weight_decay, before the update) or
// added to the gradient.
template <typename C>
COLONY_INLINE C decayed_grad(C g, C& p, bool maximize, double lr, double weight_decay, bool decoupled) {
  if (maximize) g = -g;
  if (weight_decay != 0) {
    if (decoupled) {
      p *= static_cast<C>(1 - lr * weight_decay);
    } else {
      g += static_cast<C>(weight_decay) * p;
    }
  }
  return g;
}

// NAdam. s0: exp_avg; s1: exp_avg_sq. With mu_t = beta1 (1 - 0.5 * 0.96^(t momentum_decay)) and
// mu_product the product of mu_1..mu_t: grad_coef = -lr (1 - mu_t) / (1 - mu_product),
// avg_coef = -lr mu_{t+1} / (1 - mu_product mu_{t+1}), bias_correction2 = 1 - beta2^t.
struct NadamParams {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay, maximize;
  double bias_correction2, grad_coef, avg_coef;
};
struct NadamRule {
  using Params = NadamParams;
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T& s1, T&, const Params& k) {
    using C = compute_t<T>;
    C pv = static_cast<C>(p);
    C grad = decayed_grad(static_cast<C>(g), pv, k.maximize, k.lr, k.weight_decay, k.decoupled_weight_decay);
    C m = torch_lerp(static_cast<C>(s0), grad, static_cast<C>(1 - k.beta1));
    C v = static_cast<C>(s1) * static_cast<C>(k.beta2) + static_cast<C>(1 - k.beta2) * grad * grad;
    s0 = static_cast<T>(m);
    s1 = static_cast<T>(v);
    C denom = math::sqrt(v / static_cast<C>(k.bias_correction2)) + static_cast<C>(k.eps);
    pv = pv + static_cast<C>(k.grad_coef) * grad / denom;
    p = static_cast<T>(pv + static_cast<C>(k.avg_coef) * m / denom);
  }
};

// RAdam. s0: exp_avg; s1: exp_avg_sq. rectified: rho_t > 5 (torch's threshold), when the update
// is scaled by the adaptive rate sqrt(1 - beta2^t) / (sqrt(v) + eps) and by `rect`; otherwise it
// is plain momentum.
struct RadamParams {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay, maximize;
  double bias_correction1, bias_correction2_sqrt, rect;
  bool rectified;
};
struct RadamRule {
  using Params = RadamParams;
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T& s1, T&, const Params& k) {
    using C = compute_t<T>;
    C pv = static_cast<C>(p);
    C grad = decayed_grad(static_cast<C>(g), pv, k.maximize, k.lr, k.weight_decay, k.decoupled_weight_decay);
    C m = torch_lerp(static_cast<C>(s0), grad, static_cast<C>(1 - k.beta1));
    C v = static_cast<C>(s1) * static_cast<C>(k.beta2) + static_cast<C>(1 - k.beta2) * grad * grad;
    s0 = static_cast<T>(m);
    s1 = static_cast<T>(v);
    C step = m / static_cast<C>(k.bias_correction1) * static_cast<C>(k.lr);
    if (k.rectified) {
      // torch's scalar / tensor is tensor.reciprocal() * scalar: two roundings.
      C adaptive = C(1) / (math::sqrt(v) + static_cast<C>(k.eps)) * static_cast<C>(k.bias_correction2_sqrt);
      step = step * adaptive * static_cast<C>(k.rect);
    }
    p = static_cast<T>(pv - step);
  }
};

// Adadelta. s0: square_avg; s1: acc_delta.
struct AdadeltaParams {
  double lr, rho, eps, weight_decay;
  bool maximize;
};
struct AdadeltaRule {
  using Params = AdadeltaParams;
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T& s1, T&, const Params& k) {
    using C = compute_t<T>;
    C pv = static_cast<C>(p);
    C grad = coupled_grad(static_cast<C>(g), pv, k.maximize, k.weight_decay);
    const C rho = static_cast<C>(k.rho), rest = static_cast<C>(1 - k.rho), eps = static_cast<C>(k.eps);
    C sq = static_cast<C>(s0) * rho + rest * grad * grad;
    s0 = static_cast<T>(sq);
    C std = math::sqrt(sq + eps);
    C delta = math::sqrt(static_cast<C>(s1) + eps) / std * grad;
    s1 = static_cast<T>(static_cast<C>(s1) * rho + rest * delta * delta);
    p = static_cast<T>(pv + static_cast<C>(-k.lr) * delta);
  }
};

// Rprop. s0: prev; s1: step_size. torch.sign(g * prev) picks the step size's factor (etaplus when
// positive, etaminus when negative, 1 when zero; torch.sign(NaN) is 0, so 1 as well); the step
// size is clamped to [step_size_min, step_size_max]; where the sign flipped the gradient counts as
// zero (torch's grad[sign.eq(etaminus)] = 0), and p -= sign(grad) * step_size.
struct RpropParams {
  double etaminus, etaplus, step_size_min, step_size_max;
  bool maximize;
};
struct RpropRule {
  using Params = RpropParams;
  template <typename C>
  COLONY_INLINE static C sign(C x) {
    return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
  }
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T& s1, T&, const Params& k) {
    using C = compute_t<T>;
    C grad = static_cast<C>(g);
    if (k.maximize) grad = -grad;
    const C prod = grad * static_cast<C>(s0);
    const C etaminus = static_cast<C>(k.etaminus);
    const C factor = prod > C(0) ? static_cast<C>(k.etaplus) : (prod < C(0) ? etaminus : C(1));
    C size = static_cast<C>(s1) * factor;
    // torch.clamp: NaN stays NaN.
    const C lo = static_cast<C>(k.step_size_min), hi = static_cast<C>(k.step_size_max);
    if (size < lo) size = lo;
    if (size > hi) size = hi;
    s1 = static_cast<T>(size);
    if (factor == etaminus) grad = C(0);
    p = static_cast<T>(static_cast<C>(p) + C(-1) * sign(grad) * size);
    s0 = static_cast<T>(grad);
  }
};

// ASGD. s0: ax. eta and mu are the parameter's state before this step (host scalars):
// p = p * (1 - lambd * eta) - eta * grad; ax += (p - ax) * mu, or ax = p when mu is 1 (torch's
// mu.item() != 1 test).
struct AsgdParams {
  double eta, lambd, mu, weight_decay;
  bool maximize;
};
struct AsgdRule {
  using Params = AsgdParams;
  template <typename T>
  COLONY_INLINE static void update(T& p, T g, T& s0, T&, T&, const Params& k) {
    using C = compute_t<T>;
    C pv = static_cast<C>(p);
    C grad = coupled_grad(static_cast<C>(g), pv, k.maximize, k.weight_decay);
    // Rounded to T after each of torch's in-place ops (a no-op unless T is a 16-bit type).
    pv = pv * static_cast<C>(1 - k.lambd * k.eta);
    pv = static_cast<C>(static_cast<T>(pv)) + static_cast<C>(-k.eta) * grad;
    pv = static_cast<C>(static_cast<T>(pv));
    p = static_cast<T>(pv);
    if (k.mu != 1) {
      const C ax = static_cast<C>(s0);
      s0 = static_cast<T>(ax + (pv - ax) * static_cast<C>(k.mu));
    } else {
      s0 = static_cast<T>(pv);
    }
  }
};

}  // namespace colony::kernels
