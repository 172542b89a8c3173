// Adam and AdamW with PyTorch's update rule (torch.optim.Adam / AdamW, single-tensor path):
//   g += weight_decay * p              (Adam)   |  p *= 1 - lr * weight_decay   (AdamW)
//   m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2;  vmax = max(vmax, v) (amsgrad)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v or vmax) / sqrt(1 - beta2^t) + eps)
#pragma once

#include <type_traits>
#include <utility>

#include "base/arg.h"
#include "optim/optimizer.h"

namespace colony::optim {

struct AdamOptions : detail::OptionsBase<AdamOptions> {
  static constexpr const char* kName = "AdamOptions";
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT
  COLONY_ARG(double, lr);
  COLONY_ARG(double, beta1) = 0.9;
  COLONY_ARG(double, beta2) = 0.999;
  COLONY_ARG(double, eps) = 1e-8;
  COLONY_ARG(double, weight_decay) = 0.0;
  COLONY_ARG(bool, amsgrad) = false;
  COLONY_ARG(bool, maximize) = false;

 public:
  // PyTorch's betas=(0.9, 0.999): betas({0.9, 0.98}) or betas(0.9, 0.98).
  AdamOptions& betas(std::pair<double, double> b) { return betas(b.first, b.second); }
  AdamOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
  std::pair<double, double> betas() const { return {beta1_, beta2_}; }
  // Every field with its checkpoint name (detail::OptionsBase derives the rest from this list).
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("beta1", s.beta1_);
    visit("beta2", s.beta2_);
    visit("eps", s.eps_);
    visit("weight_decay", s.weight_decay_);
    visit("amsgrad", s.amsgrad_);
    visit("maximize", s.maximize_);
  }
};

// AdamW's own options: the same fields as Adam's, but weight_decay defaults to 1e-2 as in
// torch.optim.AdamW. A separate type (not derived from AdamOptions) so that AdamW cannot be built
// from AdamOptions, whose weight decay of 0 would train with no decay at all.
struct AdamWOptions : detail::OptionsBase<AdamWOptions> {
  static constexpr const char* kName = "AdamWOptions";
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT
  COLONY_ARG(double, lr);
  COLONY_ARG(double, beta1) = 0.9;
  COLONY_ARG(double, beta2) = 0.999;
  COLONY_ARG(double, eps) = 1e-8;
  COLONY_ARG(double, weight_decay) = 1e-2;
  COLONY_ARG(bool, amsgrad) = false;
  COLONY_ARG(bool, maximize) = false;

 public:
  AdamWOptions& betas(std::pair<double, double> b) { return betas(b.first, b.second); }
  AdamWOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
  std::pair<double, double> betas() const { return {beta1_, beta2_}; }
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    AdamOptions::fields(s, visit);  // the same names, so checkpoints of Adam and AdamW read alike
  }
  friend struct AdamOptions;  // whose fields() reads these fields
  // The same numbers as AdamOptions, for the shared update.
  AdamOptions as_adam() const {
    return AdamOptions(lr_).betas(beta1_, beta2_).eps(eps_).weight_decay(weight_decay_).amsgrad(amsgrad_).maximize(
        maximize_);
  }
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  // Several groups: {params} uses `defaults`, {params, AdamOptions(..)} its own options.
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults);
  void step() override;
  void check_options(const OptimizerOptions& options) const override;

 protected:
  // AdamW: the groups hold AdamWOptions and the weight decay is decoupled.
  Adam(std::vector<ParamGroup> groups, const AdamWOptions& defaults);

 private:
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
