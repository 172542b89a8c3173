// Adam and AdamW with PyTorch's update rule (torch.optim.Adam / AdamW, single-tensor path):
//   g += weight_decay * p              (Adam)   |  p *= 1 - lr * weight_decay   (AdamW)
//   m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2;  vmax = max(vmax, v) (amsgrad)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v or vmax) / sqrt(1 - beta2^t) + eps)
#pragma once

#include <type_traits>
#include <utility>

#include "optim/optimizer.h"

namespace colony::optim {

namespace detail {

// Adam's and AdamW's options: one list of fields. They differ in weight_decay's default (0 for
// Adam, 1e-2 for AdamW, as in torch.optim) and are distinct types, so that AdamW cannot be built
// from AdamOptions, whose weight decay of 0 would train with no decay at all.
template <bool kDecoupled>
struct AdamFamilyOptions : OptionsBase<AdamFamilyOptions<kDecoupled>> {
  static constexpr const char* kName = kDecoupled ? "AdamWOptions" : "AdamOptions";
  // AdamOptions() leaves lr unset (1e-3 unless a group inherits the optimizer's); AdamOptions(lr)
  // sets it.
  AdamFamilyOptions() = default;
  AdamFamilyOptions(double lr) : lr_(lr) { this->mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1e-3;
  COLONY_OPTIM_ARG(double, beta1) = 0.9;
  COLONY_OPTIM_ARG(double, beta2) = 0.999;
  COLONY_OPTIM_ARG(double, eps) = 1e-8;
  COLONY_OPTIM_ARG(double, weight_decay) = kDecoupled ? 1e-2 : 0.0;
  COLONY_OPTIM_ARG(bool, amsgrad) = false;
  COLONY_OPTIM_ARG(bool, maximize) = false;
  // PyTorch's capturable: each parameter's step count lives on its device and the kernels take
  // the bias corrections and the learning rate from device memory, so a step can be captured in a
  // CUDA graph (and replayed with the right step number and a scheduler's learning rate).
  COLONY_OPTIM_ARG(bool, capturable) = false;

 public:
  // PyTorch's betas=(0.9, 0.999): betas({0.9, 0.98}) or betas(0.9, 0.98).
  AdamFamilyOptions& betas(std::pair<double, double> b) { return betas(b.first, b.second); }
  AdamFamilyOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    this->mark_set("beta1");
    this->mark_set("beta2");
    return *this;
  }
  std::pair<double, double> betas() const { return {beta1_, beta2_}; }
  // Every field with its checkpoint name (OptionsBase derives the rest from this list); Adam's
  // and AdamW's checkpoints use the same names.
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("beta1", s.beta1_);
    visit("beta2", s.beta2_);
    visit("eps", s.eps_);
    visit("weight_decay", s.weight_decay_);
    visit("amsgrad", s.amsgrad_);
    visit("maximize", s.maximize_);
    visit("capturable", s.capturable_);
  }
  // The same numbers as Adam's options, for the shared update.
  AdamFamilyOptions<false> as_adam() const {
    return AdamFamilyOptions<false>(lr_)
        .betas(beta1_, beta2_)
        .eps(eps_)
        .weight_decay(weight_decay_)
        .amsgrad(amsgrad_)
        .maximize(maximize_)
        .capturable(capturable_);
  }
};

}  // namespace detail

using AdamOptions = detail::AdamFamilyOptions<false>;
using AdamWOptions = detail::AdamFamilyOptions<true>;

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, AdamOptions(..)} its own options.
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults);
  void step() override;
  // Capturable groups skip on the device; the others read the flag on the host.
  void step_unless(const Tensor& found_inf) override;
  bool supports_step_unless() const override { return true; }
  void check_options(const OptimizerOptions& options) const override;

 protected:
  // AdamW: the groups hold AdamWOptions and the weight decay is decoupled.
  Adam(std::vector<ParamGroup> groups, const AdamWOptions& defaults);

 private:
  void step_impl(const Tensor& found_inf);
  // A group's options as Adam's numbers (AdamW's are converted).
  static AdamOptions numbers(const OptimizerOptions& options);
  bool decoupled_;
};

// AdamW: Adam with decoupled weight decay.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& options = {})
      : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults) : Adam(std::move(groups), defaults) {}
  // AdamW(params, AdamOptions(...)) used to compile and train without weight decay.
  template <typename O, typename = std::enable_if_t<std::is_same_v<O, AdamOptions>>>
  AdamW(std::vector<Tensor>, const O&) : Adam(std::vector<ParamGroup>{}, AdamWOptions()) {
    static_assert(!std::is_same_v<O, O>,
                  "AdamW takes AdamWOptions (weight_decay defaults to 1e-2), not AdamOptions: write "
                  "AdamW(params, AdamWOptions(lr).weight_decay(...))");
  }
};

}  // namespace colony::optim
