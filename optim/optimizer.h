// Optimizer: parameter groups, per-parameter state, zero_grad and state_dict. Concrete optimizers
// (sgd.h, adam.h) implement step() with the fused update ops of ops/raw_optim_ops.h.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "optim/optimizer_options.h"
#include "tensor/tensor.h"

namespace colony::optim {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Parameters optimized with their own options: {params} takes the optimizer's defaults,
// {params, SGDOptions(0.01)} its own (of the optimizer's options type), and the defaults for every
// option it does not set.
struct ParamGroup {
  ParamGroup(std::vector<Tensor> params, GroupOptions options = {})  // NOLINT: {{w, b}, SGDOptions(0.01)}
      : params(std::move(params)), options(std::move(options)) {}
  std::vector<Tensor> params;
  GroupOptions options;
  // The learning rate before any LR scheduler changed it (torch's group["initial_lr"]): set by
  // the first scheduler built on the optimizer, and the base rate of every later one, so that a
  // CosineAnnealingLR built after a LinearLR (which lowers the rate at once) decays from the
  // group's own rate. In state_dict ("param_groups.<g>.initial_lr") once set, so that schedulers
  // built after load_state_dict start from it too; checkpoints without it load as before.
  std::optional<double> initial_lr;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual void step() = 0;
  // The step with GradScaler's skip decided on the device, as PyTorch's fused optimizers take
  // found_inf: nothing is updated (and no step is counted) where the kernels run when found_inf, a
  // 1-element float32 tensor on the parameters' device, is nonzero. The host does not wait for
  // the flag, so a CUDA graph can capture the step. SGD and Adam implement it
  // (supports_step_unless()); the default throws.
  virtual void step_unless(const Tensor& found_inf);
  virtual bool supports_step_unless() const { return false; }
  // set_to_none = true (PyTorch's default) drops gradients; false zeroes them in place.
  virtual void zero_grad(bool set_to_none = true);
  // The tensors whose .grad() step() reads: the parameters of every group. GradScaler unscales and
  // checks these; an optimizer that steps other tensors (dist::ZeroRedundancyOptimizer under DDP's
  // zero_stage(2): views of this rank's gradient shards) returns those.
  virtual std::vector<Tensor> stepped_tensors() const;

  // Adds a group; a group without options takes a copy of the optimizer's defaults, one with
  // options must hold this optimizer's options type and takes the defaults' value of every option
  // it did not set (OptimizerOptions::inherit_unset). A parameter may belong to one group only.
  void add_param_group(ParamGroup group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // Learning rate of group g / of every group (what LR schedulers change).
  double lr(size_t group = 0) const;
  // The options groups without their own start from (SGDOptions for SGD, ...).
  const OptimizerOptions& defaults() const { return *defaults_; }
  void set_lr(double lr);
  void set_lr(size_t group, double lr);

  // Per-parameter state ("momentum_buffer", "exp_avg", "step", ...) and every group's options.
  // Tensor names: "state.<i>.<key>" with i the parameter's position across groups, and
  // "param_groups.<g>.<option>" as 0-d float64 tensors, so the whole thing is one safetensors file.
  // Virtual so that an optimizer whose state is sharded over ranks (dist::ZeroRedundancyOptimizer)
  // saves and loads the full, non-sharded format through the same calls (save_checkpoint's).
  virtual NamedTensors state_dict() const;
  // Checks that the group structure matches (same group count and sizes) and that every option
  // passes check_options (a checkpoint's lr of NaN or -1 is refused), then restores.
  virtual void load_state_dict(const NamedTensors& state);

  // Throws std::invalid_argument when a group's options are out of range. The base class refuses
  // NaN and infinities; each optimizer adds its own ranges (PyTorch's: lr >= 0, 0 <= beta < 1, ...).
  // Run by add_param_group, load_state_dict and each optimizer's constructor.
  virtual void check_options(const OptimizerOptions& options) const;

 protected:
  Optimizer(std::vector<Tensor> params, const OptimizerOptions& defaults);
  Optimizer(std::vector<ParamGroup> groups, const OptimizerOptions& defaults);
  // State of a parameter (created empty on first use). State made before the parameter changed dtype
  // or device (Module::to between steps) is converted to follow it, as load_state_dict places it.
  std::map<std::string, Tensor>& state_of(const Tensor& param);
  // For a step being captured in a CUDA graph: the device all of group `group`'s parameters with
  // a gradient live on (throws when they span devices), and the address of a float64 on it that
  // holds the group's learning rate at every replay (the kernels' lr_ptr). It is made inside the
  // capture and written by the graph's replay prologue, not by a captured kernel (which would
  // write the capture-time value at every replay), so a scheduler's changes reach each replay.
  Device captured_device(size_t group, const char* op) const;
  const double* captured_lr(size_t group, Device device);

 private:
  struct DeviceLr;
  std::vector<ParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::map<const TensorImpl*, std::map<std::string, Tensor>> state_;
  // Shared with the replay prologues of the graphs that captured a step (weakly: a graph that
  // outlives the optimizer stops refreshing).
  std::shared_ptr<DeviceLr> device_lr_;
};

}  // namespace colony::optim
