// Optimizer: parameter groups, per-parameter state, zero_grad and state_dict. Concrete optimizers
// (sgd.h, adam.h) implement step() with the fused update ops of tensor/raw_optim_ops.h.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace colony::optim {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Hyper-parameters of one group by name ("lr", "momentum", ...). Each optimizer's Options struct
// converts to and from this, so groups, schedulers and checkpoints handle every optimizer alike.
using HyperParams = std::map<std::string, double>;

struct ParamGroup {
  std::vector<Tensor> params;
  HyperParams options;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual void step() = 0;
  // set_to_none = true (PyTorch's default) drops gradients; false zeroes them in place.
  void zero_grad(bool set_to_none = true);

  // Adds a group; options missing from `group.options` take the optimizer's defaults. A parameter
  // may belong to one group only.
  void add_param_group(ParamGroup group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // Learning rate of group g / of every group (what LR schedulers change).
  double lr(size_t group = 0) const;
  void set_lr(double lr);
  void set_lr(size_t group, double lr);

  // Per-parameter state ("momentum_buffer", "exp_avg", "step", ...) and every group's options.
  // Tensor names: "state.<i>.<key>" with i the parameter's position across groups, and
  // "param_groups.<g>.<option>" as 0-d float64 tensors, so the whole thing is one safetensors file.
  NamedTensors state_dict() const;
  // Checks that the group structure matches (same group count and sizes) and that every option
  // passes check_options (a checkpoint's lr of NaN or -1 is refused), then restores.
  void load_state_dict(const NamedTensors& state);

  // Throws std::invalid_argument when a group's options are out of range. The base class refuses
  // NaN and infinities; each optimizer adds its own ranges (PyTorch's: lr >= 0, 0 <= beta < 1, ...).
  // Run by add_param_group, load_state_dict and each optimizer's constructor.
  virtual void check_options(const HyperParams& options) const;

 protected:
  Optimizer(std::vector<Tensor> params, HyperParams defaults);
  Optimizer(std::vector<ParamGroup> groups, HyperParams defaults);
  // State of a parameter (created empty on first use).
  std::map<std::string, Tensor>& state_of(const Tensor& param);

 private:
  std::vector<ParamGroup> groups_;
  HyperParams defaults_;
  std::map<const TensorImpl*, std::map<std::string, Tensor>> state_;
};

}  // namespace colony::optim
