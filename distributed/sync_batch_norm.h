// Batch normalization over the whole batch of a data-parallel job: torch.nn.SyncBatchNorm and
// SyncBatchNorm.convert_sync_batchnorm. In training, each rank's per-channel mean, biased variance
// and element count are all-gathered and combined (so ranks with different batch sizes, an empty
// one included, weigh by their counts, as torch's batch_norm_gather_stats_with_counts), every rank
// normalizes with the global statistics, and the running estimates follow the global mean and
// unbiased variance. In backward each rank's per-channel sum of grad_output and of
// grad_output * x_hat are all-reduced, so the input gradient is that of the sum of every rank's
// loss over the global batch; the weight and bias gradients stay this rank's own (DDP's reduction
// averages them), as torch's. Evaluation uses the running estimates and communicates nothing; no
// process group, or a group of one, is plain batch norm. Under autocast it computes in float32 and
// returns the input's dtype, as batch_norm does.
//
//   model = dist::convert_sync_batchnorm(model);   // before wrapping in DDP, as in torch
//   auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
//
// Where this differs from torch on purpose: a C++ module cannot change its class, and a model
// usually calls its layers through typed members (`bn1->forward(x)`), which a replaced child would
// not reach. So convert_sync_batchnorm converts in place: every nn::BatchNorm1d / BatchNorm2d in
// the tree (and every SyncBatchNorm, which takes the new group) gets `sync` set, and the same root
// comes back. Parameters, buffers, state_dict names and the members that point at them are all
// unchanged; the modules keep their class and input checks (a converted BatchNorm2d still wants
// 4-D input; dist::SyncBatchNorm takes any [N, C, *]) and print as before. The statistics are
// gathered as (mean, biased variance, count) rather than torch's (mean, invstd, count), so
// eps does not enter the combination.
#pragma once

#include <memory>

#include "distributed/comm/process_group.h"
#include "nn/batchnorm.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace colony::dist {

// Batch norm in training mode over the union of every rank's `input` ([N, C, *], N may differ
// between ranks and be 0 on some): the arguments of F::batch_norm with training=true. `group`
// null: the default group. Every rank of the group must call it (it is a collective, forward and
// backward); a rank that fails makes the others' collective fail rather than hang, through the
// group's watchdog. The backward all-reduce is skipped, on every rank alike, when input needs no
// gradient.
Tensor sync_batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, double momentum, double eps,
                       const std::shared_ptr<ProcessGroup>& group = nullptr);

// The nn::BatchNormSync a SyncBatchNorm or converted module holds: sync_batch_norm over `group`
// (null: the default group, looked up at each forward, so it may be made before
// init_process_group).
class GroupBatchNormSync : public nn::BatchNormSync {
 public:
  explicit GroupBatchNormSync(std::shared_ptr<ProcessGroup> group) : group_(std::move(group)) {}
  Tensor forward(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias, double momentum, double eps) override;
  const std::shared_ptr<ProcessGroup>& group() const { return group_; }

 private:
  std::shared_ptr<ProcessGroup> group_;
};

// torch.nn.SyncBatchNorm: input [N, C, *] of any rank >= 2, the options of nn::BatchNorm2d
// (momentum nullopt: the cumulative average), statistics over `process_group` (null: the default
// group).
class SyncBatchNorm : public nn::BatchNormBase {
 public:
  explicit SyncBatchNorm(const nn::BatchNormOptions& options, std::shared_ptr<ProcessGroup> process_group = nullptr);

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Makes every batch norm module in `module`'s tree (itself included) take its training statistics
// over `process_group` (null: the default group), in place, and returns `module`: see the header
// comment for why in place. Returns the same typed pointer, so `model = convert_sync_batchnorm(model)`
// reads as torch's.
void convert_sync_batchnorm_in_place(nn::Module& module, std::shared_ptr<ProcessGroup> process_group = nullptr);
template <typename M>
std::shared_ptr<M> convert_sync_batchnorm(std::shared_ptr<M> module,
                                          std::shared_ptr<ProcessGroup> process_group = nullptr) {
  if (module) convert_sync_batchnorm_in_place(*module, std::move(process_group));
  return module;
}

// Whether `module` normalizes with group statistics in training (a SyncBatchNorm or a converted
// batch norm): what torch code asks with isinstance(m, nn.SyncBatchNorm).
bool is_sync_batch_norm(const nn::Module& module);

}  // namespace colony::dist
