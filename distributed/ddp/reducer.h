// The engine of DistributedDataParallel: averages gradients over the group while backward runs.
//
// Parameters are grouped into buckets (by dtype and device; reverse registration order, since
// backward produces the last layers' gradients first; the first bucket small so communication
// starts early). Each bucket is one flat tensor and each parameter's .grad() becomes a view into
// it, so neither gathering nor writing back copies. A post-accumulate-grad hook marks a
// parameter ready; when a bucket's last parameter is ready its all-reduce starts on the process
// group's communication thread while backward goes on. Buckets start strictly in bucket order,
// the same on every rank, whatever order their gradients arrive in. A callback at the end of
// backward waits for them all, so backward() returns with averaged gradients.
//
// On a GPU (NCCL) the buckets live on the parameters' device, each all-reduce is queued on the
// group's communication stream the moment its bucket is ready, and "waits for them all" means the
// compute stream waits for their end events (Work::wait): backward() returns without the host
// having waited for the GPU, and whatever reads the gradients next runs after the all-reduces.
// Nothing in the reducer blocks the host per bucket: the "had a gradient" flags are read on the
// host only in an iteration where this rank had a parameter without a gradient (one read then, for
// all buckets), and the timings are read from events once the GPU has passed them (timeline.h).
// Gloo on CUDA tensors stages each bucket through host memory, which blocks by nature.
//
// Unused parameters need no flag: at the start of backward the reducer walks the graph of the
// forward output, and parameters it cannot reach are ready at once (their bucket slots hold
// their accumulated gradient, or zeros). Each bucket carries one "had a gradient" flag per
// parameter through the same all-reduce; a parameter no rank had a gradient for keeps an
// undefined .grad(), as in PyTorch.
//
// After the first iteration the buckets are rebuilt once in the order gradients actually
// arrived on rank 0 (broadcast, so every rank builds the same buckets).
//
// With shard_gradients (ZeRO stage 2, DistributedDataParallelOptions::zero_stage(2)) each bucket is
// reduce-scattered instead (zero/partition.h's pieces_by_bucket: the bucket's gradients padded to
// world equal blocks, rank r keeping block r, averaged), and its "had a gradient" flags are
// all-reduced beside it. The bucket's flat tensor exists only from its first gradient to the end
// of backward. This rank's averaged block goes into its gradient shard (shard_params()' .grad(),
// 1/world of the bucket): written there by the reduce-scatter itself when zero_grad() dropped
// the shard's gradients (the usual step), else reduce-scattered in place in the flat tensor and
// added to them at the end of backward (synchronized backwards accumulating). Then the flat
// tensor is freed and every parameter's own .grad() is left undefined, so the full gradient
// does not outlive backward. The buckets are not rebuilt (the
// shards, and the optimizer state that follows them, keep their layout) and comm hooks are refused.
//
// With reduce_scatter alone (ZeRO stage 1, zero_stage(1)) the buckets are laid out and
// reduce-scattered as under stage 2 (same partition, same flags beside them), but each bucket's
// flat tensor lives on and the parameters' .grad() stay views into it, as without ZeRO, and the
// reduce-scatter writes this rank's averaged block into the bucket's `shard` instead of into the
// flat tensor: the averaging moves half the bytes of an all-reduce (the other half is the
// optimizer's all-gather of the updated parameters). So after a synchronized backward a
// parameter's .grad() holds this rank's own local gradient (accumulated since the last zero_grad,
// with or without no_sync), and shard_params()' .grad() the average over ranks of what the buckets
// hold, for the elements this rank owns; a second synchronized backward without zero_grad adds to
// the local gradients and averages the sum, as DDP would. The shards cost 1/world of the gradient
// memory on top of DDP's buckets.
//
// Under both (reduce_scatter or shard_gradients) the parameters themselves move, at construction,
// into one flat tensor per bucket laid out as its gradients (parameter_buckets(); FSDP's
// FlatParameter): each parameter becomes a view into it (nn::set_data: every handle to it sees
// the move), so block r of it is exactly what rank r's optimizer steps, and ZeRO's all-gather of
// the updated parameters writes every rank's block in place. It costs the padding (fewer than
// world elements a bucket); whatever replaces a parameter's data later (Module::to) cuts it off
// from the bucket, which ZeroRedundancyOptimizer::step() refuses with the reason.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/comm/process_group.h"
#include "distributed/ddp/comm_hooks.h"
#include "distributed/ddp/timeline.h"
#include "distributed/zero/partition.h"
#include "log/trace.h"
#include "tensor/tensor.h"

namespace colony::dist {

struct ReducerOptions {
  size_t first_bucket_bytes = size_t{1} << 20;
  size_t bucket_bytes = size_t{25} << 20;
  bool shard_gradients = false;  // ZeRO stage 2 (see above); implies reduce_scatter
  bool reduce_scatter = false;   // ZeRO stage 1 (see above)
};

class Reducer {
 public:
  // params: the parameters that require grad, in registration order.
  Reducer(std::vector<Tensor> params, std::shared_ptr<ProcessGroup> group, ReducerOptions options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Called by DDP::forward, before the wrapped module runs, in every iteration that synchronizes:
  // rebuilds the buckets once after the first iteration.
  void prepare_for_forward();
  // Called with the forward output of an iteration that synchronizes: its backward will reduce.
  void prepare_for_backward(const Tensor& output);
  // Throws std::invalid_argument with reduce_scatter or shard_gradients: a bucket is reduce-scattered,
  // not averaged by a hook.
  void set_comm_hook(CommHook hook);

  // With reduce_scatter or shard_gradients: every rank's runs of the parameters (index into the
  // reducer's parameters, in registration order), bucket by bucket; and this rank's runs as 1-D
  // views of the parameters, in that order, whose .grad() after each synchronized backward is this
  // rank's averaged gradient of the run (stage 2: added to what it held, as .grad() accumulates;
  // stage 1: the average of the buckets, which accumulate the local gradients; undefined when no
  // rank had a gradient for the parameter). Empty otherwise.
  const std::vector<zero_detail::Piece>& shard_layout() const { return shard_layout_; }
  const std::vector<Tensor>& shard_params() const { return shard_params_; }
  bool shards_gradients() const { return options_.shard_gradients; }
  bool reduce_scatters() const { return scatter_; }
  const std::vector<Tensor>& params() const { return params_; }
  // With reduce_scatter or shard_gradients: each bucket's parameters as one flat tensor, in
  // bucket order, laid out as the bucket's gradients (world blocks of the padded bucket, rank r's
  // run of each parameter in block r); every parameter is a view into its bucket's (see above).
  // Empty otherwise.
  std::vector<Tensor> parameter_buckets() const;

  // Parameter indices (registration order) of each bucket, in launch order.
  std::vector<std::vector<size_t>> bucket_layout() const;

  // Communication seen so far (timeline.h). On a GPU the times cover the iterations whose events
  // the GPU has passed: they trail the host by an iteration or two; stats() never blocks.
  using Stats = ReducerStats;
  Stats stats() const;

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_
    Tensor flat;                 // the gradients, then one flag per parameter
    std::vector<Tensor> views;   // views[i]: params[i]'s gradient inside `flat`
    Tensor flags;                // the last params.size() elements of `flat`
    size_t pending = 0;
    bool launched = false;
    trace::Clock::time_point launched_at{};  // when the host handed its all-reduce to the group
    bool all_had_grad = true;    // every parameter had a gradient on this rank this iteration
    PendingReduction reduction;
    size_t bytes = 0;
    // reduce_scatter: the padded bucket is block x world elements, the flags travel on their own,
    // and `shard` holds this rank's averaged block between backwards; shard_gradients: `flat`
    // exists only during a backward.
    int64_t numel = 0;
    int64_t block = 0;
    Tensor shard;
    Tensor params_flat;  // the parameters themselves, laid out as `flat` (parameter_buckets())
    // shard_gradients: this backward reduce-scatters straight into `shard` (none of the shard's
    // gradients was kept to accumulate onto: zero_grad() dropped them), not into `flat`.
    bool into_shard = false;
    std::shared_ptr<Work> flags_work;
  };

  void build_buckets(const std::vector<size_t>& order);
  void on_backward_start();
  void mark_ready(size_t index, bool from_hook);
  void launch_ready_buckets();
  void finalize();
  void reset_iteration();
  void read_flags(const std::vector<size_t>& buckets);
  // shard_gradients: the bucket's flat tensor and its views, made at its first gradient.
  void allocate_flat(Bucket& b);
  // shard_gradients: whether no gradient of shard_params_ in bucket `bi` is kept in its shard.
  bool shard_is_free(size_t bi) const;
  // shard_gradients, at the end of backward: this rank's block into its shard views' .grad().
  void keep_shards();
  // reduce_scatter alone, at the end of backward: the shard views' .grad() are the bucket's
  // averaged block.
  void point_shards_at_buckets();
  std::vector<zero_detail::Piece> shard_layout_;
  std::vector<Tensor> shard_params_;
  std::vector<size_t> shard_piece_of_;  // shard_params_[j]'s index in shard_layout_
  std::vector<size_t> shard_bucket_of_;  // shard_params_[j]'s bucket
  std::vector<char> no_grad_anywhere_;  // per parameter, this iteration
  std::string bucket_name(size_t index) const;

  std::vector<Tensor> params_;
  std::shared_ptr<ProcessGroup> group_;
  ReducerOptions options_;
  bool scatter_ = false;  // reduce_scatter || shard_gradients
  CommHook hook_;
  std::vector<int> hook_ids_;

  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_, slot_of_;

  mutable std::mutex mu_;
  bool expecting_backward_ = false;
  bool backward_started_ = false;
  std::vector<char> ready_;
  std::vector<char> reachable_;
  size_t next_to_launch_ = 0;
  Tensor output_;  // the forward output whose graph the coming backward runs
  trace::Clock::time_point backward_start_{};

  int64_t synced_iterations_ = 0;
  std::vector<size_t> arrival_order_;
  bool rebuilt_ = false;
  Device timed_device_ = kCPU;        // the CUDA device whose buckets the timeline times, if any
  mutable DeviceTimeline timeline_;   // with mu_
  mutable Stats stats_;
};

}  // namespace colony::dist
