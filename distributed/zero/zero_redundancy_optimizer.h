// ZeRO (Rajbhandari et al. 2019; PyTorch's torch.distributed.optim.ZeroRedundancyOptimizer): each
// rank keeps the optimizer state of its own shard of the parameters only, so Adam's two moments
// cost 1/N of what they cost under plain DDP (stage 1); given a DDP built with zero_stage(2)
// (.ddp(ddp)), it steps that DDP's gradient shards, so the gradients cost 1/N too (stage 2).
//
//   auto ddp = std::make_shared<dist::DistributedDataParallel>(
//       model, dist::DistributedDataParallelOptions().zero_stage(1));
//   dist::ZeroRedundancyOptimizer opt(ddp->parameters(), optim::AdamWOptions(1e-3),
//                                     dist::optimizer_factory<optim::AdamW, optim::AdamWOptions>(),
//                                     dist::ZeroRedundancyOptimizerOptions().ddp(ddp));
//   ... loss.backward(); opt.step();   // steps this rank's shard, then all-gathers the parameters
//
// Bytes on the wire per step: with .ddp() (zero_stage(1) or 2) DDP reduce-scatters the gradients
// during backward (each rank receives only its shard's average, as in the ZeRO paper) and step()
// all-gathers the parameters: (N-1)/N G each, together a plain DDP's all-reduce. Stage 1 without
// .ddp() (over a plain DDP, which all-reduces) works too but sends 1.5x that. Under zero_stage(1),
// after backward a parameter's .grad() holds this rank's local (not averaged) gradient, and
// stepped_tensors()' .grad() the average over ranks for the elements this rank owns (DDP's shard
// buffers, 1/N of the gradient more); read gradients through stepped_tensors() or
// clip_grad_norm_, not the parameters.
//
// - Which rank steps what (zero/partition.h), the same on every rank. With .ddp(): DDP's partition,
//   by bucket (reducer.h), and the wrapped optimizer steps DDP's views of this rank's runs, whose
//   .grad() DDP's backward writes (under stage 2 the parameters' own .grad() stays undefined).
//   Stage 1 without .ddp(): by default whole parameters,
//   assigned by size, balanced (largest first, each to the rank with the fewest elements so far, as
//   PyTorch's ZeroRedundancyOptimizer); or, with shard_by(ShardBy::kElement), equal runs of the
//   flattened parameters (DeepSpeed's partition: a parameter may be split between ranks, and each
//   rank's state is 1/N of the whole even when one tensor dominates, as LeNet's fc1 does: 77 % of
//   its elements). Splitting a parameter is right for optimizers that update element by element
//   (SGD, Adam, AdamW: all of Colony's). The wrapped optimizer is built by `factory` over this
//   rank's parameters (or their runs, as 1-D views of them), in groups mirroring the full ones (a
//   group may be empty on a rank; a rank that owns nothing has no wrapped optimizer).
// - step(): the wrapped optimizer steps the shard (with the full groups' current options, so LR
//   schedulers, which set them on this optimizer, work as usual), then every rank's updated
//   parameters reach every rank through all_gather_into_tensor of flat buckets: rank r's shard is
//   laid out flat in parameter order, padded to the largest shard, and bucket k carries elements
//   [k B, (k + 1) B) of every rank's shard (B from bucket_cap_mb), so one collective moves
//   world x B elements. With .ddp() the parameters are views into DDP's flat buckets, laid out
//   as the gradients (reducer.h), so each all-gather writes into them in place: one per DDP
//   bucket (in parts where a bucket's block exceeds B), no buffer and no copies. Collective:
//   every rank must call it.
// - overlap_all_gather (with .ddp()): step() launches the all-gathers and returns; each rank's
//   shard is updated at once, the other ranks' parameters when the all-gathers are waited for,
//   which DDP's next forward() does at its start (a forward pre-hook), so the exchange runs on
//   NCCL's stream, or Gloo's communication thread (which takes a collective nobody waited for
//   within 0.5 ms; sooner, the waiter runs it), while the host goes on to zero_grad, the next
//   batch and anything else before it. One all-gather per DDP bucket, the bucket of the first layers'
//   parameters first, so each completes in the order the forward reads them. Everything the
//   optimizer does waits first (step, consolidate_state_dict, state_dict, load_state_dict,
//   clip_grad_norm_, destruction); whatever reads the parameters outside DDP's forward (the
//   wrapped model's own forward, nn::save, model->state_dict(), generation) must call
//   wait_for_parameters() first, as FSDP's summon_full_params. A failed all-gather (a rank died)
//   is thrown there, named as DDP names its own failures.
// - GradScaler: scaler.step(opt) unscales stepped_tensors()' gradients and skips the step on
//   overflow. Over a plain DDP they are its averaged ones, the same everywhere, so every rank
//   decides alike. With .ddp() (stage 1 or 2) they are this rank's shards only: give the scaler
//   found_inf_reducer() so that an overflow in any shard skips the step everywhere.
// - clip_grad_norm_(): the global norm over every rank's shard (each rank's sum of squares of the
//   gradients it owns, all-reduced), then each rank scales its own; right for stage 1 and 2 alike.
// - Checkpoints: consolidate_state_dict(to_rank) (collective) gathers every rank's state to one
//   rank; state_dict() there is exactly a non-sharded optimizer's ("state.<i>.<key>" with i the
//   parameter's index across the full groups, "param_groups.<g>.<option>"), so the file resumes
//   without ZeRO, on another number of ranks, or in PyTorch as today's do. load_state_dict() takes
//   such a full dict on every rank and keeps each rank's part.
//
// All parameters must have one dtype and one device (what a model's master weights have).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "base/arg.h"
#include "distributed/comm/process_group.h"
#include "distributed/ddp/ddp.h"
#include "distributed/zero/partition.h"
#include "optim/optimizer.h"
#include "tensor/tensor.h"

namespace colony::dist {

enum class ShardBy { kParameter, kElement };

struct ZeroRedundancyOptimizerOptions {
  COLONY_ARG(ShardBy, shard_by) = ShardBy::kParameter;
  // Elements of every rank's shard all-gathered per collective: bucket_cap_mb MiB in all
  // (world x B elements), as DDP's bucket_cap_mb bounds its buckets.
  COLONY_ARG(double, bucket_cap_mb) = 25;
  // null: the default group (init_process_group's); with none (one process), the wrapped
  // optimizer steps every parameter and nothing is communicated.
  COLONY_ARG(std::shared_ptr<ProcessGroup>, process_group) = nullptr;
  // The DistributedDataParallel built with zero_stage(1) or zero_stage(2) whose reduce-scattered
  // gradient shards this optimizer steps (ZeRO stage 1 at an all-reduce's bytes, or stage 2). Its
  // parameters must be exactly this optimizer's; the partition is DDP's (by bucket; shard_by is
  // not used), and the process group DDP's. Without it (stage 1 over a plain DDP's all-reduced
  // gradients) the all-gather comes on top of DDP's all-reduce: 1.5x its bytes.
  COLONY_ARG(std::shared_ptr<DistributedDataParallel>, ddp) = nullptr;
  // With .ddp(): step() leaves the all-gathers in flight and DDP's next forward() waits for them
  // (see above). Off, step() returns with every parameter updated, as PyTorch's optimizer does.
  COLONY_ARG(bool, overlap_all_gather) = false;
};

// Builds the wrapped optimizer over a rank's shard (groups mirroring the full ones) from the
// defaults the ZeroRedundancyOptimizer was given.
using OptimizerFactory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<optim::ParamGroup> shard,
                                                                         const optim::OptimizerOptions& defaults)>;

// The factory of optimizer `Opt` with options `Options`: optimizer_factory<optim::AdamW, optim::AdamWOptions>().
template <class Opt, class Options>
OptimizerFactory optimizer_factory() {
  return [](std::vector<optim::ParamGroup> shard, const optim::OptimizerOptions& defaults) {
    return std::unique_ptr<optim::Optimizer>(new Opt(std::move(shard), dynamic_cast<const Options&>(defaults)));
  };
}

class ZeroRedundancyOptimizer : public optim::Optimizer {
 public:
  ZeroRedundancyOptimizer(std::vector<Tensor> params, const optim::OptimizerOptions& defaults,
                          OptimizerFactory factory, const ZeroRedundancyOptimizerOptions& options = {});
  ZeroRedundancyOptimizer(std::vector<optim::ParamGroup> groups, const optim::OptimizerOptions& defaults,
                          OptimizerFactory factory, const ZeroRedundancyOptimizerOptions& options = {});
  ~ZeroRedundancyOptimizer() override;

  // Steps this rank's shard, then all-gathers the updated parameters (overlap_all_gather: starts
  // the all-gathers and returns). Waits first for the previous step's all-gathers, if in flight.
  void step() override;
  // Blocks until the all-gathers a step() with overlap_all_gather left in flight have written
  // every rank's updated parameters into this rank's; returns at once when none are. Rethrows
  // a failed all-gather's error. Not collective (each rank waits for its own).
  void wait_for_parameters();
  // Whether step() left all-gathers that nobody has waited for yet.
  bool parameters_pending() const { return !in_flight_.empty(); }
  // Also drops (or zeroes) the gradient shards under stage 2.
  void zero_grad(bool set_to_none = true) override;
  // With .ddp() (stage 1 or 2): this rank's shard views, the only averaged gradients it holds;
  // else every parameter.
  std::vector<Tensor> stepped_tensors() const override;
  // Whether it steps DDP's gradient shards (stage 2).
  bool shards_gradients() const { return stage2_; }

  // The owner of element `element` of parameter `index` (across the full groups, in order).
  int owner(size_t index, int64_t element = 0) const;
  int rank() const { return rank_; }
  int world_size() const { return world_; }
  // The wrapped optimizer (null on a rank that owns no parameter).
  optim::Optimizer* local_optimizer() { return local_.get(); }

  // Clips every rank's gradients by the global norm over all of them (norm_type 2 or
  // infinity); returns that norm. Collective.
  double clip_grad_norm_(double max_norm, double norm_type = 2.0);
  // For GradScaler::set_found_inf_reducer: a max all-reduce of the overflow flag over the group.
  std::function<void(Tensor&)> found_inf_reducer() const;

  // Collective: gathers every rank's optimizer state to `to_rank` (the other ranks keep none).
  void consolidate_state_dict(int to_rank = 0);
  // On the rank consolidate_state_dict() gathered to: the full state as a non-sharded
  // optimizer's. Elsewhere, or before consolidating, throws saying so.
  optim::NamedTensors state_dict() const override;
  // A full (non-sharded) state dict, the same on every rank: each rank keeps its own parameters'
  // state. Checks the groups as Optimizer::load_state_dict does.
  void load_state_dict(const optim::NamedTensors& state) override;

  // Bytes of optimizer state on this rank (the wrapped optimizer's state tensors).
  size_t state_bytes() const;
  // Bytes of gradient this rank holds: stage 2, its shards; else every parameter's .grad(), and
  // under stage 1 with .ddp() the averaged shards too (DDP's buckets and shards).
  size_t gradient_bytes() const;

 private:
  void init(OptimizerFactory factory);
  // Before the wrapped optimizer steps: the full groups' options, and each view's gradient.
  void prepare_local_step();
  void gather_parameters();
  // The all-gathers in flight, waited for in launch order: each rank's piece of them copied into
  // the parameters. Const for the const readers (state_dict) that must see the parameters.
  void finish_gathers() const;
  // Elements [start, start + length) of every rank's flat shard: what one all-gather moves, in
  // launch order. With .ddp(): DDP's buckets (the first layers' first), cut to bucket_cap_mb.
  struct GatherRange {
    int64_t start = 0;
    int64_t length = 0;
    // With .ddp(): the DDP bucket the range lies in (Reducer::parameter_buckets()' index) and
    // where it starts inside each rank's block of it.
    int bucket = -1;
    int64_t within = 0;
  };
  std::vector<GatherRange> gather_ranges() const;
  struct InFlightGather {
    GatherRange range;
    // world x range.length elements; with .ddp() the DDP bucket's parameters themselves, which
    // the all-gather writes in place (nothing to copy out).
    Tensor gathered;
    bool in_place = false;
    std::shared_ptr<Work> work;
  };
  // With .ddp(): one all-gather per range straight into DDP's flat parameter buckets.
  void gather_in_place();

  std::shared_ptr<ProcessGroup> group_;
  ZeroRedundancyOptimizerOptions options_;
  int rank_ = 0;
  int world_ = 1;
  std::vector<Tensor> params_;  // every parameter, across the full groups, in order
  std::vector<zero_detail::Piece> pieces_;
  // For this rank's pieces (in pieces_ order): the tensor the wrapped optimizer steps (the
  // parameter itself, or a 1-D view of its run) and the piece's index in pieces_.
  std::vector<Tensor> local_params_;
  std::vector<size_t> local_pieces_;
  int64_t shard_numel_ = 0;  // the largest rank's shard (every shard padded to it)
  bool ddp_partition_ = false;  // .ddp() with zero_stage(1) or (2): DDP reduce-scatters, by its partition
  bool stage2_ = false;
  const Reducer* reducer_ = nullptr;  // with ddp_partition_: DDP's
  std::unique_ptr<optim::Optimizer> local_;
  bool consolidated_ = false;
  optim::NamedTensors consolidated_state_;
  std::vector<GatherRange> ranges_;
  // With .ddp(): DDP's flat parameter buckets, and the storage each parameter must still view
  // (a parameter whose data was replaced since would not receive the all-gather: refused).
  std::vector<Tensor> param_buckets_;
  std::vector<const void*> bucket_storage_of_;
  // overlap_all_gather: the last step()'s all-gathers until waited for, and the flat shard they
  // read (alive until they finish, as every collective's tensors must be).
  mutable std::vector<InFlightGather> in_flight_;
  mutable Tensor in_flight_shard_;
  int forward_hook_ = -1;  // the DDP forward pre-hook that waits for them
};

// Bytes of optimizer state an optimizer holds (the tensors under "state." in its state dict):
// what the memory table compares ZeRO with.
size_t optimizer_state_bytes(const optim::Optimizer& optimizer);
// Bytes of the gradients these parameters hold (defined .grad() only).
size_t gradient_bytes(const std::vector<Tensor>& params);

}  // namespace colony::dist
