// Muon with PyTorch's update rule (torch.optim.Muon): momentum, then the update orthogonalized by a
// quintic Newton–Schulz iteration in bfloat16, for the 2-D weights of hidden layers (embeddings,
// biases, norms and the output head go to AdamW in a second optimizer, as torch's docs advise).
// Per parameter [A, B] and step:
//   buf = lerp(buf, g, 1 - momentum);  u = nesterov ? lerp(g, buf, momentum) : buf
//   X = bfloat16(u), transposed when A > B;  X /= max(||X||, eps)
//   ns_steps times: G = X Xᵀ;  X = a X + (b G + c G G) X     (a, b, c) = ns_coefficients
//   p *= 1 - lr * weight_decay;  p -= lr * ratio(A, B) * X (transposed back)
// ratio: "original" (the default) sqrt(max(1, A / B)), "match_rms_adamw" 0.2 sqrt(max(A, B)),
// "spectral_unclamped" sqrt(A / B). The products run on bfloat16 as torch's do (Colony's bf16 GEMM
// accumulates in float32 and rounds each product once), so results agree with torch's to
// bfloat16's precision, not to the bit. State: momentum_buffer.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct MuonOptions : detail::OptionsBase<MuonOptions> {
  static constexpr const char* kName = "MuonOptions";
  // MuonOptions() leaves lr unset (1e-3 unless a group inherits the optimizer's).
  MuonOptions() = default;
  MuonOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-3;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.1;
  COLONY_OPTIM_ARG(double, momentum) = 0.95;
  COLONY_OPTIM_ARG(bool, nesterov) = true;
  // ns_coefficients (a, b, c); a checkpoint names each ("ns_a", "ns_b", "ns_c").
  COLONY_OPTIM_ARG(double, ns_a) = 3.4445;
  COLONY_OPTIM_ARG(double, ns_b) = -4.7750;
  COLONY_OPTIM_ARG(double, ns_c) = 2.0315;
  COLONY_OPTIM_ARG(double, eps) = 1e-7;
  COLONY_OPTIM_ARG(int64_t, ns_steps) = 5;
  // adjust_lr_fn as a number in checkpoints: 0 "original", 1 "match_rms_adamw", 2 "spectral_unclamped".
  COLONY_OPTIM_ARG(int64_t, adjust_lr) = 0;

 public:
  MuonOptions& ns_coefficients(std::array<double, 3> abc) {
    ns_a(abc[0]);
    ns_b(abc[1]);
    return ns_c(abc[2]);
  }
  std::array<double, 3> ns_coefficients() const { return {ns_a_, ns_b_, ns_c_}; }
  // torch's names; anything else throws "Adjust learning rate function <name> is not supported".
  MuonOptions& adjust_lr_fn(const std::string& name);
  std::string adjust_lr_fn() const;

  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("weight_decay", s.weight_decay_);
    visit("momentum", s.momentum_);
    visit("nesterov", s.nesterov_);
    visit("ns_a", s.ns_a_);
    visit("ns_b", s.ns_b_);
    visit("ns_c", s.ns_c_);
    visit("eps", s.eps_);
    visit("ns_steps", s.ns_steps_);
    visit("adjust_lr_fn", s.adjust_lr_);
  }
};

class Muon : public Optimizer {
 public:
  // Every parameter must be 2-D: "Muon only supports 2D parameters whereas we found a parameter
  // with size: [3]".
  Muon(std::vector<Tensor> params, const MuonOptions& options = {});
  Muon(std::vector<ParamGroup> groups, const MuonOptions& defaults);
  void step() override;
  // torch's checks and words: lr, momentum and weight_decay >= 0 ("Learning rate should be >= 0 but
  // is: -1"), ns_steps < 100, adjust_lr_fn known; and eps >= 0, ns_steps >= 0.
  void check_options(const OptimizerOptions& options) const override;
};

// The Newton–Schulz orthogonalization Muon applies to a 2-D update (torch's
// _zeropower_via_newtonschulz): bfloat16 [A, B] out.
Tensor zeropower_via_newtonschulz(const Tensor& update, std::array<double, 3> ns_coefficients, int64_t ns_steps,
                                  double eps);

}  // namespace colony::optim
