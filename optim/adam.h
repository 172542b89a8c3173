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

struct AdamOptions {
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
  HyperParams to_map() const;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  void step() override;
  void check_options(const HyperParams& options) const override;

 protected:
  Adam(std::vector<Tensor> params, const AdamOptions& options, bool decoupled);

 private:
  bool decoupled_;
};

// AdamW's own options: the same fields as Adam's, but weight_decay defaults to 1e-2 as in
// torch.optim.AdamW. A separate type (not derived from AdamOptions) so that AdamW cannot be built
// from AdamOptions, whose weight decay of 0 would train with no decay at all.
struct AdamWOptions {
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
  // The same numbers as AdamOptions, for the shared update.
  AdamOptions as_adam() const {
    return AdamOptions(lr_).betas(beta1_, beta2_).eps(eps_).weight_decay(weight_decay_).amsgrad(amsgrad_).maximize(
        maximize_);
  }
};

// AdamW: Adam with decoupled weight decay.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& options = {})
      : Adam(std::move(params), options.as_adam(), true) {}
  // AdamW(params, AdamOptions(...)) used to compile and train without weight decay.
  template <typename O, typename = std::enable_if_t<std::is_same_v<O, AdamOptions>>>
  AdamW(std::vector<Tensor>, const O&) : Adam({}, AdamOptions(), true) {
    static_assert(!std::is_same_v<O, O>,
                  "AdamW takes AdamWOptions (weight_decay defaults to 1e-2), not AdamOptions: write "
                  "AdamW(params, AdamWOptions(lr).weight_decay(...))");
  }
};

}  // namespace colony::optim
