// torch.optim.swa_utils.AveragedModel: a copy of a model whose parameters (and, with
// use_buffers, buffers) are the running average of the model's over update_parameters calls
// (stochastic weight averaging), or any other average: an exponential moving average with
// ema_avg_fn(decay), or an avg_fn of one's own. SWALR, the rate schedule SWA runs with, is in
// lr_scheduler.h.
//
//   auto swa = std::make_shared<optim::AveragedModel>(model, std::make_shared<Net>());
//   ... after each epoch past swa_start: swa->update_parameters(*model); swa_scheduler.step();
//   swa->forward(x);
//
// C++ has no deepcopy of a module: the caller passes a second instance of the model's
// architecture (`copy`), into which the model's state_dict is loaded; from then on it is the
// averaged model, registered as child "module", beside the int64 buffer "n_averaged" (torch's
// state_dict keys). Every average is computed as torch's CPU path computes it: the running mean
// p + (m - p) / (n + 1), where torch's CUDA path takes lerp(p, m, 1 / (n + 1)) (the same to
// rounding).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "nn/module.h"

namespace colony::optim {

// The average after `n` earlier averages (n >= 1): (averaged, current, n) -> the new average.
using AvgFn = std::function<Tensor(const Tensor& averaged, const Tensor& current, int64_t n)>;

// torch's get_ema_avg_fn(decay): decay * averaged + (1 - decay) * current.
AvgFn ema_avg_fn(double decay = 0.999);
// torch's get_ema_multi_avg_fn(decay) as one tensor's update: lerp(averaged, current, 1 - decay).
AvgFn ema_multi_avg_fn(double decay = 0.999);

class AveragedModel : public nn::Module {
 public:
  // `copy`: a module of the model's architecture (same parameter and buffer names and shapes);
  // avg_fn unset: the running mean; use_buffers: average the buffers too, instead of copying the
  // model's (then update_bn, which is not in Colony, is not needed for batch norm statistics).
  AveragedModel(const std::shared_ptr<nn::Module>& model, std::shared_ptr<nn::Module> copy, AvgFn avg_fn = nullptr,
                bool use_buffers = false);
  // Averages the model's parameters (and buffers, with use_buffers) into this copy: the first call
  // copies them; the buffers are copied from the model without use_buffers. Counts n_averaged.
  void update_parameters(const nn::Module& model);
  Tensor forward(const Tensor& input) override { return module_->forward(input); }
  const std::shared_ptr<nn::Module>& module() const { return module_; }
  int64_t n_averaged() const;

 private:
  std::shared_ptr<nn::Module> module_;
  Tensor n_averaged_;
  AvgFn avg_fn_;
  bool use_buffers_;
};

// torch.optim.swa_utils.update_bn: recomputes every batch norm's running statistics of `model`
// (an AveragedModel's, typically) as their plain average over `inputs` (torch's momentum=None):
// resets them, runs model.forward on each input in training mode, then restores each module's
// momentum and the model's mode. Colony's batch norm has no momentum None, so the k-th batch runs
// with momentum 1 / k, which is what torch's None computes. torch takes a loader (the first
// element of each batch); Colony takes the inputs.
void update_bn(const std::vector<Tensor>& inputs, nn::Module& model);

}  // namespace colony::optim
