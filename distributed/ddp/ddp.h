// DistributedDataParallel: every rank holds a replica of the module; gradients are averaged over
// the group during backward (see reducer.h for how), so after backward() every rank holds the
// same averaged gradients and the optimizers keep the replicas identical.
//
//   auto ddp = std::make_shared<dist::DistributedDataParallel>(model);   // broadcasts rank 0's weights
//   loss = F::cross_entropy(ddp->forward(x), y); loss.backward();        // all-reduce overlaps backward
//   { auto guard = ddp->no_sync(); ddp->forward(x1)...backward(); }      // accumulate locally
//
// Construction checks that every rank has the same parameter and buffer names, dtypes and shapes
// (the error names the first difference) and copies rank 0's parameters and buffers to all.
// With no process group (one process, init_process_group not called or world size 1) it simply
// runs the module.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "base/arg.h"
#include "distributed/comm/process_group.h"
#include "distributed/ddp/comm_hooks.h"
#include "distributed/ddp/reducer.h"
#include "nn/module.h"

namespace colony::dist {

struct DistributedDataParallelOptions {
  // Bucket caps in MiB (PyTorch's bucket_cap_mb; the first bucket is small so its all-reduce
  // starts early in backward).
  COLONY_ARG(double, bucket_cap_mb) = 25;
  COLONY_ARG(double, first_bucket_cap_mb) = 1;
  // Copy rank 0's buffers (BatchNorm running statistics) to every rank at each forward.
  COLONY_ARG(bool, broadcast_buffers) = true;
  // The group to average over; null means the default group of init_process_group().
  COLONY_ARG(std::shared_ptr<ProcessGroup>, process_group) = nullptr;
  // ZeRO, for a dist::ZeroRedundancyOptimizer given this DDP (.ddp(ddp)): 0 averages whole buckets
  // (all-reduce); 1 reduce-scatters each bucket so that each rank receives the averaged gradient of
  // its shard only, keeping the full buckets of local gradients (the optimizer all-gathers the
  // updated parameters: together an all-reduce's bytes); 2 also frees all but the shard after
  // backward, so each rank keeps 1/N of the gradient (reducer.h). Under 1 and 2 a parameter's
  // averaged gradient is only on the ranks that own it (the optimizer's stepped_tensors()); under
  // 1 the parameters' .grad() hold this rank's local gradients.
  COLONY_ARG(int, zero_stage) = 0;
};

class DistributedDataParallel : public nn::Module {
 public:
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                   const DistributedDataParallelOptions& options = {});
  ~DistributedDataParallel() override;

  Tensor forward(const Tensor& input) override;
  std::shared_ptr<nn::Module> module() const { return module_; }

  // While a guard lives, backward accumulates gradients locally without communicating; the first
  // backward after it reduces everything accumulated (gradient accumulation).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel* ddp) : ddp_(ddp), previous_(ddp->sync_) { ddp_->sync_ = false; }
    ~NoSyncGuard() {
      if (ddp_) ddp_->sync_ = previous_;
    }
    NoSyncGuard(NoSyncGuard&& o) noexcept : ddp_(o.ddp_), previous_(o.previous_) { o.ddp_ = nullptr; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallel* ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(this); }
  bool synchronizes() const { return sync_; }

  // Replaces how a bucket is averaged (comm_hooks.h: fp16_compress, bf16_compress).
  void register_comm_hook(CommHook hook);

  // Runs `hook` at the start of every forward() (no_sync, no_grad and one process included),
  // before the module reads a parameter: how a ZeroRedundancyOptimizer with overlap_all_gather
  // waits for the all-gathers its step() left in flight. Hooks run in registration order; the id
  // removes it again.
  int register_forward_pre_hook(std::function<void()> hook);
  void remove_forward_pre_hook(int id);

  // Null without a process group.
  const Reducer* reducer() const { return reducer_.get(); }
  const std::shared_ptr<ProcessGroup>& process_group() const { return group_; }

 private:
  void verify_same_model_on_all_ranks();
  void broadcast_from_rank0(const std::vector<Tensor>& tensors);

  std::shared_ptr<nn::Module> module_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<ProcessGroup> group_;
  std::unique_ptr<Reducer> reducer_;
  bool sync_ = true;
  std::vector<std::pair<int, std::function<void()>>> forward_pre_hooks_;
  int next_hook_id_ = 0;
};

}  // namespace colony::dist
