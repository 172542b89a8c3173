#include "distributed/zero/zero_redundancy_optimizer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "distributed/init.h"
#include "distributed/zero/partition.h"
#include "nn/safetensors.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::dist {
namespace {

const std::string kWho = "ZeroRedundancyOptimizer";

// "state.12.exp_avg" -> (12, "exp_avg"); false for any other name.
bool split_state_name(const std::string& name, size_t* index, std::string* key) {
  if (name.rfind("state.", 0) != 0) return false;
  const size_t dot = name.find('.', 6);
  if (dot == std::string::npos || dot == 6) return false;
  try {
    *index = static_cast<size_t>(std::stoull(name.substr(6, dot - 6)));
  } catch (const std::exception&) {
    return false;
  }
  *key = name.substr(dot + 1);
  return true;
}

std::vector<Tensor> all_params(const std::vector<optim::ParamGroup>& groups) {
  std::vector<Tensor> out;
  for (const auto& g : groups) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

}  // namespace

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<Tensor> params, const optim::OptimizerOptions& defaults,
                                                 OptimizerFactory factory,
                                                 const ZeroRedundancyOptimizerOptions& options)
    : ZeroRedundancyOptimizer(std::vector<optim::ParamGroup>{optim::ParamGroup(std::move(params))}, defaults,
                              std::move(factory), options) {}

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<optim::ParamGroup> groups,
                                                 const optim::OptimizerOptions& defaults, OptimizerFactory factory,
                                                 const ZeroRedundancyOptimizerOptions& options)
    : Optimizer(std::move(groups), defaults), options_(options) {
  init(std::move(factory));
  // Last: a constructor that threw leaves no hook pointing at it.
  if (options_.overlap_all_gather())
    forward_hook_ = options_.ddp()->register_forward_pre_hook([this] { finish_gathers(); });
}

ZeroRedundancyOptimizer::~ZeroRedundancyOptimizer() {
  if (forward_hook_ >= 0) options_.ddp()->remove_forward_pre_hook(forward_hook_);
  // The all-gathers' tensors must outlive them. A failure was the job's (the watchdog reports
  // it); a destructor cannot throw it.
  try {
    finish_gathers();
  } catch (const std::exception&) {
  }
}

void ZeroRedundancyOptimizer::init(OptimizerFactory factory) {
  if (!factory) throw std::invalid_argument(kWho + ": the optimizer factory is empty");
  if (!(options_.bucket_cap_mb() > 0))
    throw std::invalid_argument(kWho + ": bucket_cap_mb must be positive, got " +
                                std::to_string(options_.bucket_cap_mb()));
  const Reducer* reducer = options_.ddp() ? options_.ddp()->reducer() : nullptr;
  ddp_partition_ = reducer != nullptr && reducer->reduce_scatters();
  stage2_ = ddp_partition_ && reducer->shards_gradients();
  if (options_.ddp() && !ddp_partition_ && reducer != nullptr)
    throw std::invalid_argument(kWho + ": the DDP given with .ddp() was not built with zero_stage(1) or "
                                       "zero_stage(2) (it all-reduces whole gradients); build it with "
                                       "DistributedDataParallelOptions().zero_stage(1) (or 2), or leave .ddp() out");
  if (options_.overlap_all_gather() && !options_.ddp())
    throw std::invalid_argument(kWho + ": overlap_all_gather needs .ddp(ddp) (a DDP built with zero_stage(1) or "
                                       "zero_stage(2)): its forward() is where the all-gathers are waited for");
  reducer_ = ddp_partition_ ? reducer : nullptr;
  group_ = options_.process_group() ? options_.process_group()
           : options_.ddp() && options_.ddp()->process_group() ? options_.ddp()->process_group()
                                                                : default_process_group();
  // No group (one process, as DDP without one): this rank owns everything, nothing is gathered.
  rank_ = group_ ? group_->rank() : 0;
  world_ = group_ ? group_->size() : 1;
  params_ = all_params(param_groups());
  const Tensor& first = params_.front();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    if (p.dtype() != first.dtype() || p.device() != first.device())
      throw std::invalid_argument(kWho + ": parameter " + std::to_string(i) + " is " + dtype_name(p.dtype()) + " on " +
                                  p.device().str() + " but parameter 0 is " + dtype_name(first.dtype()) + " on " +
                                  first.device().str() + "; one dtype and device per optimizer");
    if (!p.is_contiguous())
      throw std::invalid_argument(kWho + ": parameter " + std::to_string(i) + " is not contiguous (shape " +
                                  shape_str(p.sizes()) + ", strides " + shape_str(p.strides()) + ")");
  }
  std::vector<std::vector<int64_t>> numels;
  std::vector<size_t> group_of;
  for (size_t g = 0; g < param_groups().size(); ++g) {
    numels.emplace_back();
    for (const auto& p : param_groups()[g].params) {
      numels.back().push_back(p.numel());
      group_of.push_back(g);
    }
  }
  // With DDP's reduce-scatter (stage 1 or 2): DDP's partition (by bucket), its pieces' parameters
  // renumbered as ours, and its views, whose gradients its reducer writes.
  std::vector<Tensor> reducer_views;
  if (ddp_partition_) {
    const std::vector<Tensor>& theirs = reducer_->params();
    std::vector<size_t> ours(theirs.size(), SIZE_MAX);
    for (size_t r = 0; r < theirs.size(); ++r)
      for (size_t i = 0; i < params_.size(); ++i)
        if (params_[i].impl() == theirs[r].impl()) ours[r] = i;
    for (size_t r = 0; r < theirs.size(); ++r)
      if (ours[r] == SIZE_MAX || theirs.size() != params_.size())
        throw std::invalid_argument(kWho + ": the parameters differ from the DDP's (" + std::to_string(params_.size()) +
                                    " here, " + std::to_string(theirs.size()) +
                                    " trainable there); with .ddp() give it exactly ddp->parameters()");
    pieces_ = reducer_->shard_layout();
    for (auto& piece : pieces_) piece.param = ours[piece.param];
    reducer_views = reducer_->shard_params();
    param_buckets_ = reducer_->parameter_buckets();
    bucket_storage_of_.assign(params_.size(), nullptr);
    for (size_t r = 0; r < theirs.size(); ++r) bucket_storage_of_[ours[r]] = theirs[r].storage().get();
  } else {
    pieces_ = options_.shard_by() == ShardBy::kElement ? zero_detail::pieces_by_element(numels, world_)
                                                        : zero_detail::pieces_by_parameter(numels, world_);
  }
  shard_numel_ = zero_detail::largest_shard(pieces_, world_);
  std::vector<std::vector<Tensor>> mine(param_groups().size());
  size_t own = 0;
  for (size_t k = 0; k < pieces_.size(); ++k) {
    const zero_detail::Piece& piece = pieces_[k];
    if (piece.owner != rank_) continue;
    const Tensor& p = params_[piece.param];
    // A run of a parameter is a 1-D view of it: the wrapped optimizer updates the parameter's
    // memory in place, and keeps state the size of the run.
    Tensor t = ddp_partition_ ? reducer_views.at(own++)
               : piece.length == p.numel() ? p
                                           : raw::view(p, {p.numel()}).narrow(0, piece.start, piece.length);
    local_params_.push_back(t);
    local_pieces_.push_back(k);
    mine[group_of[piece.param]].push_back(t);
  }
  if (local_params_.empty()) return;
  std::vector<optim::ParamGroup> shard;
  for (size_t g = 0; g < param_groups().size(); ++g) shard.emplace_back(std::move(mine[g]), param_groups()[g].options);
  // The wrapped optimizer numbers its parameters group by group: local_params_ in that order.
  local_params_.clear();
  local_pieces_.clear();
  for (size_t g = 0; g < shard.size(); ++g)
    for (size_t k = 0; k < pieces_.size(); ++k)
      if (pieces_[k].owner == rank_ && group_of[pieces_[k].param] == g) local_pieces_.push_back(k);
  for (const auto& g : shard) local_params_.insert(local_params_.end(), g.params.begin(), g.params.end());
  local_ = factory(std::move(shard), defaults());
}

std::vector<ZeroRedundancyOptimizer::GatherRange> ZeroRedundancyOptimizer::gather_ranges() const {
  const auto element = static_cast<double>(params_.front().element_size());
  const int64_t cap = std::clamp<int64_t>(
      static_cast<int64_t>(options_.bucket_cap_mb() * 1024 * 1024 / element / world_), 1, shard_numel_);
  std::vector<GatherRange> ranges;
  auto add_cut = [&](int64_t start, int64_t length) {
    length = std::min(length, shard_numel_ - start);
    for (int64_t at = start; at < start + length; at += cap) ranges.push_back({at, std::min(cap, start + length - at)});
  };
  if (!ddp_partition_) {
    add_cut(0, shard_numel_);
    return ranges;
  }
  // DDP's bucket b is block b of every rank's shard (partition.h's pieces_by_bucket), its blocks
  // at the same offset everywhere. The buckets hold the last layers first (backward's order):
  // gathered by their first parameter in registration order, so the forward's first layers'
  // all-gather completes first.
  const std::vector<std::vector<size_t>> layout = reducer_->bucket_layout();
  const std::vector<Tensor>& theirs = reducer_->params();
  // Each bucket's whole block, padding included (fewer than world elements), so that a bucket
  // under the cap is one all-gather into its flat parameters.
  std::vector<std::pair<size_t, GatherRange>> buckets;
  int64_t before = 0;
  for (size_t k = 0; k < layout.size(); ++k) {
    int64_t numel = 0;
    size_t first = SIZE_MAX;
    for (size_t i : layout[k]) {
      numel += theirs[i].numel();
      first = std::min(first, i);
    }
    const int64_t block = zero_detail::bucket_block(numel, world_);
    buckets.push_back({first, {before, block, static_cast<int>(k), 0}});
    before += block;
  }
  std::stable_sort(buckets.begin(), buckets.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const int64_t bucket_cap = std::max<int64_t>(
      1, static_cast<int64_t>(options_.bucket_cap_mb() * 1024 * 1024 / element / world_));
  for (const auto& [first, range] : buckets)
    for (int64_t at = 0; at < range.length; at += bucket_cap)
      ranges.push_back({range.start + at, std::min(bucket_cap, range.length - at), range.bucket, at});
  return ranges;
}

int ZeroRedundancyOptimizer::owner(size_t index, int64_t element) const {
  for (const auto& piece : pieces_)
    if (piece.param == index && element >= piece.start && element < piece.start + piece.length) return piece.owner;
  throw std::out_of_range(kWho + "::owner: parameter " + std::to_string(index) + " has no element " +
                          std::to_string(element));
}

void ZeroRedundancyOptimizer::prepare_local_step() {
  for (size_t g = 0; g < param_groups().size(); ++g) local_->param_groups()[g].options = param_groups()[g].options;
  if (ddp_partition_) return;  // DDP's reducer wrote the views' gradients
  for (size_t j = 0; j < local_params_.size(); ++j) {
    const zero_detail::Piece& piece = pieces_[local_pieces_[j]];
    const Tensor& p = params_[piece.param];
    if (local_params_[j].impl() == p.impl()) continue;  // a whole parameter has its own gradient
    const Tensor g = p.grad();
    local_params_[j].mutable_grad() =
        g.defined() ? raw::reshape(g, {p.numel()}).narrow(0, piece.start, piece.length) : Tensor();
  }
}

void ZeroRedundancyOptimizer::wait_for_parameters() { finish_gathers(); }

void ZeroRedundancyOptimizer::zero_grad(bool set_to_none) {
  Optimizer::zero_grad(set_to_none);
  if (local_) local_->zero_grad(set_to_none);
}

std::vector<Tensor> ZeroRedundancyOptimizer::stepped_tensors() const {
  return ddp_partition_ ? local_params_ : params_;
}

void ZeroRedundancyOptimizer::step() {
  finish_gathers();  // a step without a forward since the last one
  if (local_) {
    prepare_local_step();
    local_->step();
    // The views' gradients were the parameters' (or copies): not kept past the step. (With DDP's
    // partition they are DDP's, which zero_grad() drops.)
    for (size_t j = 0; j < local_params_.size() && !ddp_partition_; ++j)
      if (local_params_[j].impl() != params_[pieces_[local_pieces_[j]].param].impl())
        local_params_[j].mutable_grad() = Tensor();
  }
  gather_parameters();
}

// Every rank copies its pieces into its flat shard, and one all_gather_into_tensor per range
// fills world x length elements (rank q's elements of the range in block q); finish_gathers()
// copies the other ranks' pieces out into the parameters.
void ZeroRedundancyOptimizer::gather_parameters() {
  if (world_ == 1 || shard_numel_ == 0) return;
  if (ddp_partition_) {
    gather_in_place();
    return;
  }
  NoGradGuard no_grad;
  const Tensor& first = params_.front();
  const TensorOptions opts = TensorOptions(first.dtype()).device(first.device());
  if (ranges_.empty()) ranges_ = gather_ranges();
  // Without .ddp() (stage 1 over a plain DDP, whose parameters are separate tensors). Allocated
  // per step and freed once gathered: between steps ZeRO holds no buffer of its own.
  // (With overlap_all_gather all ranges are in flight together: world x shard elements, the
  // parameters' size, until the forward waits.)
  in_flight_shard_ = raw::zeros({shard_numel_}, opts);
  for (const auto& piece : pieces_) {
    if (piece.owner != rank_) continue;
    const Tensor& p = params_[piece.param];
    Tensor dst = in_flight_shard_.narrow(0, piece.offset, piece.length);
    raw::copy_(dst, raw::view(p, {p.numel()}).narrow(0, piece.start, piece.length));
  }
  // Without overlap, one range at a time, each waited for at once, as before overlap existed: one
  // range's buffer at a time instead of the parameters' size. (Queuing them all first measured no
  // faster: char GPT, 2 ranks, step() 15.8-23.9 ms that way against 26.6-27.8 ms this way, both
  // inside the noise of a machine with load average 8-10.)
  const bool overlap = options_.overlap_all_gather();
  const Tensor shard = in_flight_shard_;
  for (const GatherRange& range : ranges_) {
    if (!overlap) in_flight_shard_ = shard;
    InFlightGather g{range, raw::empty({world_ * range.length}, opts), false, nullptr};
    g.work = group_->allgather_into_tensor(g.gathered, shard.narrow(0, range.start, range.length));
    in_flight_.push_back(std::move(g));
    if (!overlap) finish_gathers();
  }
}

// With .ddp() the parameters are views into DDP's flat buckets, laid out as the gradients
// (reducer.h): rank q's block of bucket b is rank q's shard of it, so each all-gather's output is
// the bucket itself and its input this rank's block of it. No gather buffer, no copy of the shard
// in, none of the other ranks' pieces out: LeNet on 2 ranks, whose step() went 124 KiB through
// each of those three copies, see distributed/README.md ("Step time").
void ZeroRedundancyOptimizer::gather_in_place() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].storage().get() != bucket_storage_of_[i])
      throw std::runtime_error(kWho + "::step: parameter " + std::to_string(i) +
                               " no longer lives in DDP's flat parameter bucket (its data was replaced after DDP was "
                               "built, e.g. by Module::to), so the all-gather of the updated parameters would not reach "
                               "it; move the model before wrapping it in DistributedDataParallel");
  if (ranges_.empty()) ranges_ = gather_ranges();
  const bool overlap = options_.overlap_all_gather();
  for (const GatherRange& range : ranges_) {
    Tensor flat = param_buckets_.at(static_cast<size_t>(range.bucket));
    const int64_t block = flat.numel() / world_;
    InFlightGather g{range, flat, true, nullptr};
    if (range.within == 0 && range.length == block) {
      g.work = group_->allgather_into_tensor(flat, flat.narrow(0, block * rank_, block));
    } else {
      // A bucket larger than bucket_cap_mb, in parts: rank q's part of each block.
      std::vector<Tensor> outputs;
      for (int q = 0; q < world_; ++q) outputs.push_back(flat.narrow(0, block * q + range.within, range.length));
      g.work = group_->allgather(outputs, outputs[static_cast<size_t>(rank_)]);
    }
    in_flight_.push_back(std::move(g));
    if (!overlap) finish_gathers();
  }
}

void ZeroRedundancyOptimizer::finish_gathers() const {
  if (in_flight_.empty()) return;
  NoGradGuard no_grad;
  // Whatever happens, nothing is waited for twice: a failed all-gather leaves the parameters
  // partly updated, and the job is going down (every rank's next collective fails too).
  std::vector<InFlightGather> gathers = std::move(in_flight_);
  in_flight_.clear();
  const Tensor shard = std::move(in_flight_shard_);  // read by the all-gathers: alive until they end
  in_flight_shard_ = Tensor();
  for (size_t k = 0; k < gathers.size(); ++k) {
    InFlightGather& g = gathers[k];
    try {
      group_->wait_and_explain(g.work);
    } catch (...) {
      // The later all-gathers' buffers die with `gathers`: let them end first (they fail fast,
      // the group being broken or aborted), then report the first failure.
      for (size_t later = k + 1; later < gathers.size(); ++later) {
        try {
          gathers[later].work->wait();
        } catch (const std::exception&) {
        }
      }
      throw;
    }
    if (g.in_place) {
      // Written behind the tensor ops' back: what keys on the version (autocast's cast cache)
      // sees new parameters.
      g.gathered.storage()->bump_version();
      continue;
    }
    const int64_t start = g.range.start, length = g.range.length;
    for (const auto& piece : pieces_) {
      if (piece.owner == rank_) continue;
      const int64_t lo = std::max(piece.offset, start);
      const int64_t hi = std::min(piece.offset + piece.length, start + length);
      if (lo >= hi) continue;
      const Tensor& p = params_[piece.param];
      Tensor dst = raw::view(p, {p.numel()}).narrow(0, piece.start + (lo - piece.offset), hi - lo);
      raw::copy_(dst, g.gathered.narrow(0, piece.owner * length + (lo - start), hi - lo));
    }
  }
}

double ZeroRedundancyOptimizer::clip_grad_norm_(double max_norm, double norm_type) {
  finish_gathers();
  NoGradGuard no_grad;
  const bool inf_norm = std::isinf(norm_type);
  if (!inf_norm && !(norm_type > 0))
    throw std::invalid_argument(kWho + "::clip_grad_norm_: norm_type must be positive, got " + std::to_string(norm_type));
  // This rank's pieces of the gradients: each element is counted on exactly one rank.
  std::vector<Tensor> owned;
  if (ddp_partition_) {
    for (const Tensor& t : local_params_)
      if (t.grad().defined()) owned.push_back(t.grad());
  } else {
    for (const auto& piece : pieces_) {
      const Tensor g = params_[piece.param].grad();
      if (piece.owner == rank_ && g.defined())
        owned.push_back(raw::reshape(g, {g.numel()}).narrow(0, piece.start, piece.length));
    }
  }
  double local = 0;
  for (const Tensor& g : owned) {
    const Tensor a = raw::abs(raw::to(g, g.device(), kFloat64));
    if (inf_norm) local = std::max(local, raw::amax(a).item<double>());
    else local += raw::sum(raw::pow(a, norm_type)).item<double>();
  }
  Tensor t = raw::full({1}, local, TensorOptions(kFloat64));
  if (group_) group_->wait_and_explain(group_->allreduce(t, inf_norm ? ReduceOp::kMax : ReduceOp::kSum));
  double total = t.item<double>();
  if (!inf_norm) total = std::pow(total, 1.0 / norm_type);
  const double coef = max_norm / (total + 1e-6);  // as nn::utils::clip_grad_norm_
  if (coef < 1) {
    // Every averaged gradient this rank holds (its own pieces are what its step reads; the rest,
    // under stage 1 with a plain DDP, are scaled too so that they read as a plain clip's would).
    for (const Tensor& p : stepped_tensors()) {
      Tensor g = p.grad();
      if (g.defined()) raw::binary_(raw::BinaryOp::Mul, g, coef);
    }
  }
  return total;
}

std::function<void(Tensor&)> ZeroRedundancyOptimizer::found_inf_reducer() const {
  std::shared_ptr<ProcessGroup> group = group_;
  return [group](Tensor& found_inf) {
    if (group) group->wait_and_explain(group->allreduce(found_inf, ReduceOp::kMax));
  };
}

// Each rank's state travels as one safetensors blob (tensors on the CPU, named
// "<piece>.<key>" by the piece's index in pieces_, the same on every rank): the sizes by an
// all-gather, then each blob by a broadcast from its rank. to_rank puts each parameter's pieces
// back together (state the size of a piece is that piece's run of the parameter's state; a
// scalar such as Adam's step count is the same in every piece).
void ZeroRedundancyOptimizer::consolidate_state_dict(int to_rank) {
  finish_gathers();
  if (to_rank < 0 || to_rank >= world_)
    throw std::invalid_argument(kWho + "::consolidate_state_dict: to_rank " + std::to_string(to_rank) +
                                " is not a rank of the group (0 <= to_rank < " + std::to_string(world_) + ")");
  optim::NamedTensors mine;
  if (local_) {
    size_t j = 0;
    std::string key;
    for (const auto& [name, t] : local_->state_dict())
      if (split_state_name(name, &j, &key))
        mine.emplace_back(std::to_string(local_pieces_.at(j)) + "." + key, raw::to(t, kCPU, t.dtype()));
  }
  const std::string blob = io::encode_safetensors(mine);
  Tensor size = raw::full({1}, static_cast<double>(blob.size()), TensorOptions(kInt64));
  Tensor sizes = size;
  if (group_) {
    sizes = raw::zeros({world_}, TensorOptions(kInt64));
    group_->wait_and_explain(group_->allgather_into_tensor(sizes, size));
  }
  std::map<size_t, std::map<std::string, Tensor>> by_piece;
  for (int q = 0; q < world_; ++q) {
    const int64_t n = static_cast<const int64_t*>(sizes.data_ptr_raw())[q];
    Tensor bytes = raw::empty({n}, TensorOptions(kUInt8));
    if (q == rank_) std::copy(blob.begin(), blob.end(), static_cast<char*>(bytes.data_ptr_raw()));
    if (world_ > 1) group_->wait_and_explain(group_->broadcast(bytes, q));
    if (rank_ != to_rank) continue;
    const std::string received(static_cast<const char*>(bytes.data_ptr_raw()), static_cast<size_t>(n));
    for (auto& [name, t] : io::decode_safetensors(received, "rank " + std::to_string(q) + "'s optimizer state").tensors) {
      const size_t dot = name.find('.');
      by_piece[std::stoull(name.substr(0, dot))][name.substr(dot + 1)] = t;
    }
  }
  consolidated_state_.clear();
  consolidated_ = rank_ == to_rank;
  if (!consolidated_) return;
  std::vector<std::map<std::string, Tensor>> state(params_.size());
  for (const auto& [k, entries] : by_piece) {
    const zero_detail::Piece& piece = pieces_.at(k);
    const Tensor& p = params_[piece.param];
    for (const auto& [key, t] : entries) {
      Tensor& whole = state[piece.param][key];
      if (t.dim() == 0 || t.numel() != piece.length) {
        if (!whole.defined()) whole = t;
        continue;
      }
      if (!whole.defined()) whole = raw::zeros(p.sizes(), TensorOptions(t.dtype()));
      Tensor run = raw::view(whole, {p.numel()}).narrow(0, piece.start, piece.length);
      raw::copy_(run, raw::view(t, {t.numel()}));
    }
  }
  // Optimizer::state_dict's layout: each group's options and count, then its parameters' state.
  size_t index = 0;
  for (size_t g = 0; g < param_groups().size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    for (const auto& [k, v] : param_groups()[g].options.get().to_map())
      consolidated_state_.emplace_back(prefix + k, raw::scalar_tensor(v, kFloat64));
    if (param_groups()[g].initial_lr)  // set by an LR scheduler, as Optimizer::state_dict writes it
      consolidated_state_.emplace_back(prefix + "initial_lr", raw::scalar_tensor(*param_groups()[g].initial_lr, kFloat64));
    consolidated_state_.emplace_back(prefix + "num_params",
                                     raw::scalar_tensor(static_cast<double>(param_groups()[g].params.size()), kFloat64));
    for (size_t i = 0; i < param_groups()[g].params.size(); ++i, ++index)
      for (const auto& [k, t] : state[index])
        consolidated_state_.emplace_back("state." + std::to_string(index) + "." + k, t);
  }
}

optim::NamedTensors ZeroRedundancyOptimizer::state_dict() const {
  finish_gathers();
  if (!consolidated_)
    throw std::runtime_error(kWho + "::state_dict: rank " + std::to_string(rank_) +
                             " holds no consolidated state; call consolidate_state_dict(to_rank) on every rank first, "
                             "then state_dict() on to_rank (the state is sharded across ranks)");
  return consolidated_state_;
}

void ZeroRedundancyOptimizer::load_state_dict(const optim::NamedTensors& state) {
  finish_gathers();
  // The groups' options (and the group checks) through the base class, without any state: it
  // keeps none of its own.
  optim::NamedTensors options_only;
  std::map<size_t, optim::NamedTensors> by_index;
  size_t index = 0;
  std::string key;
  for (const auto& [name, t] : state) {
    if (split_state_name(name, &index, &key)) {
      if (index >= params_.size())
        throw std::invalid_argument(kWho + "::load_state_dict: \"" + name + "\" names parameter " +
                                    std::to_string(index) + " but this optimizer has " + std::to_string(params_.size()));
      by_index[index].emplace_back(key, t);
    } else {
      options_only.emplace_back(name, t);
    }
  }
  Optimizer::load_state_dict(options_only);
  consolidated_ = false;
  consolidated_state_.clear();
  if (!local_) return;
  // The wrapped optimizer's own numbering: its groups' sizes, its parameters in local order, and
  // of a parameter's state the run this rank owns.
  optim::NamedTensors local_state;
  for (size_t g = 0; g < param_groups().size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    for (const auto& [k, v] : param_groups()[g].options.get().to_map())
      local_state.emplace_back(prefix + k, raw::scalar_tensor(v, kFloat64));
    local_state.emplace_back(prefix + "num_params",
                             raw::scalar_tensor(static_cast<double>(local_->param_groups()[g].params.size()), kFloat64));
  }
  for (size_t j = 0; j < local_pieces_.size(); ++j) {
    const zero_detail::Piece& piece = pieces_[local_pieces_[j]];
    const int64_t numel = params_[piece.param].numel();
    auto it = by_index.find(piece.param);
    if (it == by_index.end()) continue;
    for (const auto& [k, t] : it->second) {
      // State shaped like the parameter: this rank's run of it, shaped like what the wrapped
      // optimizer steps (the parameter, or a 1-D view of it). Anything else (a step count) as it is.
      const bool per_element = t.dim() > 0 && t.numel() == numel;
      local_state.emplace_back(
          "state." + std::to_string(j) + "." + k,
          per_element ? raw::reshape(raw::reshape(t, {numel}).narrow(0, piece.start, piece.length),
                                     local_params_[j].sizes())
                      : t);
    }
  }
  local_->load_state_dict(local_state);
}

size_t ZeroRedundancyOptimizer::state_bytes() const { return local_ ? optimizer_state_bytes(*local_) : 0; }

size_t ZeroRedundancyOptimizer::gradient_bytes() const {
  // Stage 2: the shards. Stage 1: every parameter's (DDP's buckets of local gradients), and with
  // .ddp() the averaged shards beside them.
  size_t bytes = 0;
  auto add = [&bytes](const std::vector<Tensor>& tensors) {
    for (const Tensor& t : tensors)
      if (t.grad().defined()) bytes += static_cast<size_t>(t.grad().nbytes());
  };
  if (!stage2_) add(params_);
  if (ddp_partition_) add(local_params_);
  return bytes;
}

size_t optimizer_state_bytes(const optim::Optimizer& optimizer) {
  size_t bytes = 0;
  size_t index = 0;
  std::string key;
  for (const auto& [name, t] : optimizer.optim::Optimizer::state_dict())
    if (split_state_name(name, &index, &key)) bytes += static_cast<size_t>(t.nbytes());
  return bytes;
}

size_t gradient_bytes(const std::vector<Tensor>& params) {
  size_t bytes = 0;
  for (const Tensor& p : params)
    if (p.grad().defined()) bytes += static_cast<size_t>(p.grad().nbytes());
  return bytes;
}

}  // namespace colony::dist
