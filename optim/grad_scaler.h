// Dynamic loss scaling for float16 mixed precision (torch.amp.GradScaler): the loss is multiplied
// by a large factor so that small float16 gradients do not flush to zero, the gradients are divided
// by it again before the optimizer step, and a step whose gradients overflowed is skipped while the
// factor backs off. PyTorch's defaults and rules:
//
//   optim::GradScaler scaler;                       // init_scale 2^16, growth 2, backoff 0.5, interval 2000
//   {
//     AutocastGuard amp(DeviceType::CUDA, kFloat16);
//     loss = F::cross_entropy(model->forward(x), y);
//   }
//   scaler.scale(loss).backward();
//   scaler.unscale_(optimizer);                     // optional: before clip_grad_norm_
//   nn::utils::clip_grad_norm_(model->parameters(), 1.0);
//   scaler.step(optimizer);                         // skipped when any gradient is inf/NaN
//   scaler.update();                                // backoff after a skip, growth after 2000 clean steps
//
// As in PyTorch, the scale and its growth count live on the device (of the first loss scaled)
// and every part of the step runs there: unscale_ runs one fused pass over all of an optimizer's
// gradients per device (raw::amp_unscale_and_check_) and leaves the overflow flag on the device,
// and update() computes the next scale there (raw::amp_update_scale_). step() reads the flag once,
// the only wait for the device per step; get_scale() and state_dict() read the device too.
//
// Inside a CUDA graph capture nothing may wait, so step() leaves the skip to the device as well:
// the optimizer's kernels read the flag at every replay (Optimizer::step_unless; SGD, and Adam
// with capturable(true)), and a replay whose gradients overflowed updates nothing and backs off
// the scale, exactly as an eager step would.
//
// Under DDP every rank sees the same averaged gradients, so an overflow on one rank makes every
// rank's gradients inf/NaN and all ranks skip together; a program that also needs the flag
// reduced explicitly installs set_found_inf_reducer (e.g. an all-reduce).
// bfloat16 has float32's exponent range and needs no scaler.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "base/arg.h"
#include "optim/optimizer.h"

namespace colony::optim {

struct GradScalerOptions {
  COLONY_ARG(double, init_scale) = 65536.0;
  COLONY_ARG(double, growth_factor) = 2.0;
  COLONY_ARG(double, backoff_factor) = 0.5;
  COLONY_ARG(int64_t, growth_interval) = 2000;
  // Disabled, every call is a pass-through (scale() returns the loss, step() steps): one code path
  // for float32 and mixed-precision runs.
  COLONY_ARG(bool, enabled) = true;
};

class GradScaler {
 public:
  explicit GradScaler(const GradScalerOptions& options = {});

  // loss * scale, recorded by autograd (the scale is a float32 tensor on the loss's device; the
  // first call puts it there, which must not be inside a graph capture).
  Tensor scale(const Tensor& loss);
  // Divides the optimizer's gradients by the scale in place and notes whether any is inf/NaN.
  // Once per optimizer between update() calls; a second call throws, as does a call after step().
  // Gradients must not be float16 (keep float32 master weights; autocast does).
  void unscale_(Optimizer& optimizer);
  // Unscales (unless unscale_ did) and calls optimizer.step() unless a gradient was inf/NaN.
  // Returns whether the optimizer stepped. Once per optimizer between update() calls. Inside a
  // CUDA graph capture the device decides at every replay (optimizer.step_unless) and this
  // returns true.
  bool step(Optimizer& optimizer);
  // The next scale: scale * backoff_factor when any optimizer's gradients overflowed since the last
  // update, scale * growth_factor after growth_interval overflow-free updates in a row, unchanged
  // otherwise. Throws when no optimizer was unscaled since the last update.
  void update();
  // Sets the scale directly (and restarts the growth count).
  void update(double new_scale);

  // Read from the device (a wait, as PyTorch's get_scale); 1 when disabled.
  double get_scale() const;
  int64_t growth_tracker() const;
  bool is_enabled() const { return options_.enabled(); }
  const GradScalerOptions& options() const { return options_; }

  // Called with each device's found-inf flag (a 1-element float32 tensor, nonzero = overflow)
  // before step() reads it: e.g. a max all-reduce over the ranks of a process group.
  void set_found_inf_reducer(std::function<void(Tensor& found_inf)> reducer) { reducer_ = std::move(reducer); }

  // "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker" (PyTorch's
  // keys) as 0-d float64 tensors. Empty when disabled.
  NamedTensors state_dict() const;
  void load_state_dict(const NamedTensors& state);

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  struct PerOptimizer {
    Stage stage = Stage::kReady;
    std::vector<Tensor> found_inf;  // one per device the gradients live on
    bool reduced = false;           // the reducer ran on them
    int found = -1;                 // the flags read back (-1: not yet)
  };
  void reduce_found_inf(PerOptimizer& s);
  bool read_found_inf(PerOptimizer& s);
  // Puts the scale and growth count on `device` unless they are somewhere already.
  void init_scale(Device device);
  // The scale on `device` (a copy when the scale lives on another).
  Tensor scale_on(Device device) const;

  GradScalerOptions options_;
  // Before the first scale()/unscale_() (and after load_state_dict without a device), the values
  // the tensors start from.
  float initial_scale_;
  int32_t initial_growth_tracker_ = 0;
  Tensor scale_;           // float32, one element
  Tensor growth_tracker_;  // int32, one element
  std::map<const Optimizer*, PerOptimizer> per_optimizer_;
  std::function<void(Tensor&)> reducer_;
};

}  // namespace colony::optim
