// Stochastic gradient descent with PyTorch's exact update rule (torch.optim.SGD):
//   d = g + weight_decay * p
//   buf = d (first step) | momentum * buf + (1 - dampening) * d
//   d = nesterov ? d + momentum * buf : buf
//   p -= lr * d
//
// Inside a CUDA graph capture (ops/cuda_graph.h) the learning rate is read from a float64
// tensor on the device, which the graph refreshes from lr() before each replay: a scheduler's
// change between replays takes effect without recapturing. The other options are fixed at capture.
#pragma once

#include <memory>

#include "optim/optimizer.h"

namespace colony::optim {

struct SGDOptions : detail::OptionsBase<SGDOptions> {
  static constexpr const char* kName = "SGDOptions";
  // The learning rate counts as set: an SGD group always has its own (SGD has no default lr).
  SGDOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr);
  COLONY_OPTIM_ARG(double, momentum) = 0.0;
  COLONY_OPTIM_ARG(double, dampening) = 0.0;
  COLONY_OPTIM_ARG(double, weight_decay) = 0.0;
  COLONY_OPTIM_ARG(bool, nesterov) = false;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  // Every field with its checkpoint name (detail::OptionsBase derives the rest from this list).
  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("momentum", s.momentum_);
    visit("dampening", s.dampening_);
    visit("weight_decay", s.weight_decay_);
    visit("nesterov", s.nesterov_);
    visit("maximize", s.maximize_);
  }
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  // Several groups: {params} uses `defaults`, {params, SGDOptions(..)} its own options.
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults);
  void step() override;
  void step_unless(const Tensor& found_inf) override;
  bool supports_step_unless() const override { return true; }
  void check_options(const OptimizerOptions& options) const override;

 private:
  void step_impl(const Tensor& found_inf);
};

}  // namespace colony::optim
