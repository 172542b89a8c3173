// Adam and AdamW with PyTorch's update rule (torch.optim.Adam / AdamW, single-tensor path):
//   g += weight_decay * p              (Adam)   |  p *= 1 - lr * weight_decay   (AdamW)
//   m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2;  vmax = max(vmax, v) (amsgrad)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v or vmax) / sqrt(1 - beta2^t) + eps)
#pragma once

#include "nn/options.h"
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
  AdamOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
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

// AdamW: decoupled weight decay; PyTorch's default weight_decay for AdamW is 0.01.
struct AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay(0.01); }  // NOLINT
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamOptions& options = AdamWOptions()) : Adam(std::move(params), options, true) {}
};

}  // namespace colony::optim
