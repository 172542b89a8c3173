#include "distributed/ddp/reducer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "autograd/engine/accumulate_grad.h"
#include "autograd/engine/engine.h"
#include "nn/module.h"
#include "ops/cuda_graph.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"
#include "runtime/stream.h"

namespace colony::dist {
namespace {

// Whether `grad` already is `view` (same memory, same shape): then nothing needs copying.
bool is_view_of(const Tensor& grad, const Tensor& view) {
  return grad.defined() && grad.data_ptr_raw() == view.data_ptr_raw() && grad.sizes() == view.sizes() &&
         grad.is_contiguous();
}

}  // namespace

Reducer::Reducer(std::vector<Tensor> params, std::shared_ptr<ProcessGroup> group, ReducerOptions options)
    : params_(std::move(params)),
      group_(std::move(group)),
      options_(options),
      scatter_(options.reduce_scatter || options.shard_gradients),
      hook_(comm_hooks::allreduce_avg()) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].requires_grad() || !params_[i].is_leaf()) {
      throw std::invalid_argument("Reducer: parameter " + std::to_string(i) +
                                  " is not a leaf that requires grad");
    }
  }
  std::vector<size_t> order(params_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = params_.size() - 1 - i;
  build_buckets(order);
  for (size_t i = 0; i < params_.size(); ++i) {
    hook_ids_.push_back(params_[i].register_post_accumulate_grad_hook([this, i](Tensor&) { mark_ready(i, true); }));
  }
}

void Reducer::set_comm_hook(CommHook hook) {
  if (scatter_)
    throw std::invalid_argument("DDP: comm hooks cannot be combined with zero_stage(" +
                                std::string(options_.shard_gradients ? "2" : "1") +
                                "): each bucket is reduce-scattered in its own dtype");
  hook_ = std::move(hook);
}

Reducer::~Reducer() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hook_ids_[i]);
  // The last iterations' GPU timings: waited for only when a trace will show them.
  try {
    std::lock_guard<std::mutex> lock(mu_);
    timeline_.collect(trace::enabled(), [this](const IterationSpans& it) { account(it, true, stats_); });
  } catch (const std::exception&) {
    // A failed device (the job is stopping): the timings are lost, nothing else is.
  }
}

void Reducer::build_buckets(const std::vector<size_t>& order) {
  NoGradGuard no_grad;
  // Greedy fill per (dtype, device) in `order`; a bucket closes when the next parameter would pass
  // the cap (one parameter larger than the cap gets a bucket of its own).
  struct Open {
    std::vector<size_t> params;
    size_t bytes = 0;
    int closed = 0;  // buckets already closed for this key: the first one uses the small cap
  };
  std::map<std::string, Open> open;
  std::vector<std::vector<size_t>> groups;
  for (size_t idx : order) {
    const Tensor& p = params_[idx];
    const std::string key = std::string(dtype_name(p.dtype())) + "/" + p.device().str();
    Open& o = open[key];
    const size_t bytes = static_cast<size_t>(p.nbytes());
    const size_t cap = o.closed == 0 ? options_.first_bucket_bytes : options_.bucket_bytes;
    if (!o.params.empty() && o.bytes + bytes > cap) {
      groups.push_back(std::move(o.params));
      o.params.clear();
      o.bytes = 0;
      ++o.closed;
    }
    o.params.push_back(idx);
    o.bytes += bytes;
  }
  for (auto& [key, o] : open)
    if (!o.params.empty()) groups.push_back(std::move(o.params));
  // Launch order: by where each bucket's first parameter sits in `order`.
  std::vector<size_t> position(params_.size());
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  std::sort(groups.begin(), groups.end(),
            [&](const auto& a, const auto& b) { return position[a.front()] < position[b.front()]; });

  buckets_.clear();
  shard_layout_.clear();
  shard_params_.clear();
  shard_piece_of_.clear();
  shard_bucket_of_.clear();
  timed_device_ = kCPU;
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  for (size_t b = 0; b < groups.size(); ++b) {
    Bucket bucket;
    bucket.params = groups[b];
    int64_t numel = 0;
    for (size_t idx : bucket.params) numel += params_[idx].numel();
    const Tensor& first = params_[bucket.params.front()];
    const int64_t n = static_cast<int64_t>(bucket.params.size());
    if (first.device().is_cuda() && timed_device_.is_cpu()) timed_device_ = first.device();
    if (scatter_) {
      const TensorOptions opts = TensorOptions(first.dtype()).device(first.device());
      bucket.numel = numel;
      bucket.block = zero_detail::bucket_block(numel, group_->size());
      bucket.shard = raw::zeros({bucket.block}, opts);
      // One byte a flag: a quarter of what they cost in DDP's float32 bucket, which keeps the
      // bytes sent per step at DDP's despite the padding (fewer than world elements a bucket).
      bucket.flags = raw::zeros({n}, TensorOptions(kUInt8).device(first.device()));
      for (size_t s = 0; s < bucket.params.size(); ++s) {
        bucket_of_[bucket.params[s]] = b;
        slot_of_[bucket.params[s]] = s;
        bucket.bytes += static_cast<size_t>(params_[bucket.params[s]].nbytes());
      }
      // The parameters move into one flat tensor laid out as the gradients are (FSDP's
      // FlatParameter): rank r's block of it is what rank r steps, so the optimizer's all-gather
      // writes every rank's updated block straight into the parameters, with no gather buffer
      // and no copies in or out (LeNet on 2 ranks: see distributed/README.md, "Step time").
      bucket.params_flat = raw::zeros({bucket.block * group_->size()}, opts);
      int64_t at = 0;
      for (size_t idx : bucket.params) {
        Tensor& p = params_[idx];
        Tensor view = raw::view(raw::narrow(bucket.params_flat, 0, at, p.numel()), p.sizes());
        raw::copy_(view, p);
        nn::set_data(p, view);
        at += p.numel();
      }
      if (!options_.shard_gradients) {
        // Stage 1: the flat tensor lives on, and gradients accumulated so far (no_sync) move in.
        allocate_flat(bucket);
        for (size_t s = 0; s < bucket.params.size(); ++s) {
          Tensor& p = params_[bucket.params[s]];
          if (p.grad().defined()) {
            raw::copy_(bucket.views[s], p.grad());
            p.set_grad(bucket.views[s]);
          }
        }
      }
      buckets_.push_back(std::move(bucket));
      continue;
    }
    bucket.flat = raw::zeros({numel + n}, TensorOptions(first.dtype()).device(first.device()));
    bucket.flags = raw::narrow(bucket.flat, 0, numel, n);
    int64_t offset = 0;
    for (size_t s = 0; s < bucket.params.size(); ++s) {
      Tensor& p = params_[bucket.params[s]];
      Tensor view = raw::view(raw::narrow(bucket.flat, 0, offset, p.numel()), p.sizes());
      // Gradients accumulated so far (no_sync) move into the bucket.
      if (p.grad().defined()) {
        raw::copy_(view, p.grad());
        p.set_grad(view);
      }
      bucket.views.push_back(view);
      bucket_of_[bucket.params[s]] = b;
      slot_of_[bucket.params[s]] = s;
      offset += p.numel();
      bucket.bytes += static_cast<size_t>(p.nbytes());
    }
    buckets_.push_back(std::move(bucket));
  }
  if (!scatter_) return;
  std::vector<std::vector<std::pair<size_t, int64_t>>> layout;
  for (const Bucket& bucket : buckets_) {
    layout.emplace_back();
    for (size_t idx : bucket.params) layout.back().emplace_back(idx, params_[idx].numel());
  }
  shard_layout_ = zero_detail::pieces_by_bucket(layout, group_->size());
  for (size_t k = 0; k < shard_layout_.size(); ++k) {
    const zero_detail::Piece& piece = shard_layout_[k];
    if (piece.owner != group_->rank()) continue;
    const Tensor& p = params_[piece.param];
    shard_params_.push_back(raw::narrow(raw::view(p, {p.numel()}), 0, piece.start, piece.length));
    shard_piece_of_.push_back(k);
  }
  std::vector<int64_t> bucket_start(buckets_.size(), 0);  // each bucket's first element in a rank's shard
  for (size_t bi = 1; bi < buckets_.size(); ++bi) bucket_start[bi] = bucket_start[bi - 1] + buckets_[bi - 1].block;
  for (size_t j = 0; j < shard_params_.size(); ++j) {
    const int64_t offset = shard_layout_[shard_piece_of_[j]].offset;
    size_t bi = 0;
    while (bi + 1 < buckets_.size() && offset >= bucket_start[bi + 1]) ++bi;
    shard_bucket_of_.push_back(bi);
  }
}

bool Reducer::shard_is_free(size_t bi) const {
  for (size_t j = 0; j < shard_params_.size(); ++j) {
    if (shard_bucket_of_[j] != bi) continue;
    const Tensor& g = shard_params_[j].grad();
    if (g.defined() && g.storage() == buckets_[bi].shard.storage()) return false;
  }
  return true;
}

void Reducer::allocate_flat(Bucket& b) {
  const Tensor& first = params_[b.params.front()];
  const TensorOptions opts = TensorOptions(first.dtype()).device(first.device());
  if (options_.shard_gradients) {
    // Made at every backward: mark_ready writes every parameter's slot (its gradient, or zeros)
    // before the bucket launches, so only the padding needs zeroing.
    b.flat = raw::empty({b.block * group_->size()}, opts);
    const int64_t padding = b.block * group_->size() - b.numel;
    if (padding > 0) {
      Tensor tail = raw::narrow(b.flat, 0, b.numel, padding);
      raw::fill_(tail, 0.0);
    }
  } else {
    b.flat = raw::zeros({b.block * group_->size()}, opts);
  }
  b.views.clear();
  int64_t offset = 0;
  for (size_t idx : b.params) {
    const Tensor& p = params_[idx];
    b.views.push_back(raw::view(raw::narrow(b.flat, 0, offset, p.numel()), p.sizes()));
    offset += p.numel();
  }
}

std::vector<Tensor> Reducer::parameter_buckets() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Tensor> out;
  for (const auto& b : buckets_)
    if (b.params_flat.defined()) out.push_back(b.params_flat);
  return out;
}

std::vector<std::vector<size_t>> Reducer::bucket_layout() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::vector<size_t>> out;
  for (const auto& b : buckets_) out.push_back(b.params);
  return out;
}

Reducer::Stats Reducer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  timeline_.collect(false, [this](const IterationSpans& it) { account(it, true, stats_); });
  return stats_;
}

void Reducer::prepare_for_forward() {
  // Rebuild once, at the second synchronizing iteration, in rank 0's arrival order. Every rank
  // takes part in the broadcast whatever it observed, so all build identical buckets.
  // Sharded gradients keep their first layout: the optimizer's state follows it.
  if (rebuilt_ || synced_iterations_ == 0 || scatter_) return;
  if (cuda::CUDAGraph::capturing() != nullptr) {
    throw std::runtime_error("DDP: the buckets are rebuilt in the second iteration, which a CUDA graph cannot "
                             "capture (the ranks agree on the new order through the host); run at least two "
                             "iterations before the capture (make_graphed_step's warm-up of 2 or more)");
  }
  rebuilt_ = true;
  std::vector<int64_t> order;
  std::vector<char> seen(params_.size(), 0);
  for (size_t idx : arrival_order_)
    if (!seen[idx]) {
      seen[idx] = 1;
      order.push_back(static_cast<int64_t>(idx));
    }
  for (size_t i = params_.size(); i-- > 0;)
    if (!seen[i]) order.push_back(static_cast<int64_t>(i));
  Tensor t = raw::from_vector(order, {static_cast<int64_t>(order.size())});
  group_->wait_and_explain(group_->broadcast(t, 0));
  const int64_t* p = t.data_ptr<int64_t>();
  std::vector<size_t> chosen(p, p + order.size());
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<size_t> current;
  for (const auto& b : buckets_) current.insert(current.end(), b.params.begin(), b.params.end());
  if (chosen != current) build_buckets(chosen);
}

void Reducer::prepare_for_backward(const Tensor& output) {
  std::lock_guard<std::mutex> lock(mu_);
  // A forward whose backward never came (evaluation with grad on, an exception) leaves nothing
  // in flight: buckets only start once backward does. Start over.
  reset_iteration();
  if (!output.requires_grad() || !output.grad_fn()) return;
  expecting_backward_ = true;
  output_ = output;
  // Which parameters this forward used: the AccumulateGrad nodes reachable from the output.
  std::unordered_map<const void*, size_t> index_of;
  for (size_t i = 0; i < params_.size(); ++i) index_of[params_[i].impl_ptr().get()] = i;
  std::unordered_set<autograd::Node*> visited;
  std::vector<autograd::Node*> stack{output.grad_fn().get()};
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    if (!visited.insert(node).second) continue;
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(node)) {
      auto it = index_of.find(acc->variable().impl_ptr().get());
      if (it != index_of.end()) reachable_[it->second] = 1;
      continue;
    }
    for (const auto& e : node->next_edges)
      if (e.fn) stack.push_back(e.fn.get());
  }
  // The first gradient to arrive for this output starts the reduction's bookkeeping.
  output.register_hook([this](const Tensor&) -> std::optional<Tensor> {
    on_backward_start();
    return std::nullopt;
  });
}

void Reducer::reset_iteration() {
  expecting_backward_ = false;
  backward_started_ = false;
  ready_.assign(params_.size(), 0);
  reachable_.assign(params_.size(), 0);
  next_to_launch_ = 0;
  output_ = Tensor();
  timeline_.drop_current();
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.launched = false;
    b.all_had_grad = true;
    b.reduction = {};
    b.flags_work = nullptr;
  }
}

void Reducer::on_backward_start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!expecting_backward_ || backward_started_) return;
  backward_started_ = true;
  backward_start_ = trace::Clock::now();
  // A captured iteration is not timed: its events would belong to the graph, which the host
  // cannot query; replays run without the reducer.
  if (timed_device_.is_cuda() && cuda::CUDAGraph::capturing() == nullptr) {
    timeline_.begin(current_stream(timed_device_));
  }
  autograd::Engine::queue_callback([this] { finalize(); });
  // Parameters this forward did not use are ready now.
  for (size_t i = 0; i < params_.size(); ++i)
    if (!reachable_[i]) mark_ready(i, false);
  output_ = Tensor();  // the graph is running; do not keep it alive longer
}

// Called with mu_ held (from on_backward_start and finalize), or from the hook (locks itself).
void Reducer::mark_ready(size_t index, bool from_hook) {
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  if (from_hook) lock.lock();
  if (!expecting_backward_ || ready_[index]) return;
  if (from_hook && !backward_started_) return;  // a backward of another graph
  ready_[index] = 1;
  if (from_hook && synced_iterations_ == 0) arrival_order_.push_back(index);
  Bucket& b = buckets_[bucket_of_[index]];
  const size_t slot = slot_of_[index];
  NoGradGuard no_grad;
  if (options_.shard_gradients && !b.flat.defined()) allocate_flat(b);
  Tensor& p = params_[index];
  Tensor& view = b.views[slot];
  Tensor grad = p.grad();
  if (!grad.defined()) {
    raw::fill_(view, 0.0);
    b.all_had_grad = false;
  } else if (!is_view_of(grad, view)) {
    raw::copy_(view, grad);
    p.set_grad(view);
  }
  Tensor flag = raw::narrow(b.flags, 0, static_cast<int64_t>(slot), 1);
  raw::fill_(flag, grad.defined() ? 1.0 : 0.0);
  if (--b.pending == 0) launch_ready_buckets();
}

void Reducer::launch_ready_buckets() {
  while (next_to_launch_ < buckets_.size() && buckets_[next_to_launch_].pending == 0) {
    Bucket& b = buckets_[next_to_launch_];
    if (scatter_) {
      // Stage 2, in place: this rank's block of the bucket receives the average of every rank's
      // (the flat tensor goes at the end of backward). Stage 1, into the bucket's own shard: the
      // flat tensor, which lives on as the parameters' .grad(), keeps this rank's local gradient
      // everywhere, so that a later synchronized backward accumulating onto it (no zero_grad in
      // between) reduce-scatters the sum of both local gradients, as DDP would average it.
      // Stage 2 with no gradient kept in the shard (zero_grad() since the last backward: the
      // usual step): straight into the shard too, which saves copying it there at the end.
      b.into_shard = options_.shard_gradients && shard_is_free(next_to_launch_);
      Tensor mine = options_.shard_gradients && !b.into_shard
                        ? raw::narrow(b.flat, 0, b.block * group_->rank(), b.block)
                        : b.shard;
      b.reduction = PendingReduction{group_->reduce_scatter_tensor(mine, b.flat, ReduceOp::kAvg), nullptr};
      b.flags_work = group_->allreduce(b.flags, ReduceOp::kMax);
    } else {
      b.reduction = hook_(*group_, b.flat);
    }
    b.launched = true;
    b.launched_at = trace::Clock::now();
    // On a GPU the all-reduce is only queued: events time it without asking the host to wait.
    const Stream comm = b.reduction.work->stream();
    if (comm.device().is_cuda() && comm.device() == timed_device_)
      timeline_.bucket_queued(next_to_launch_, bucket_name(next_to_launch_), current_stream(timed_device_), comm);
    ++next_to_launch_;
  }
}

std::string Reducer::bucket_name(size_t index) const {
  return std::string(scatter_ ? "reduce_scatter" : "allreduce") + " bucket " + std::to_string(index) +
         " (" + std::to_string(buckets_[index].bytes / 1024) + " KiB)";
}

void Reducer::finalize() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!expecting_backward_) return;
  const auto compute_end = trace::Clock::now();
  struct Reset {
    Reducer* r;
    ~Reset() { r->reset_iteration(); }
  } reset{this};
  // Parameters the graph reached but whose gradient never came (a branch that produced no
  // gradient) are ready now, so every bucket starts, in order, on every rank.
  for (size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i]) mark_ready(i, false);
  const auto sink = [this](const IterationSpans& it) { account(it, true, stats_); };
  if (timeline_.began()) timeline_.end(current_stream(timed_device_), sink);

  NoGradGuard no_grad;
  IterationSpans host;  // buckets the host reduced (Gloo), with their own times
  host.backward_begin = backward_start_;
  host.backward_end = compute_end;
  std::vector<size_t> unsure;  // buckets where some parameter had no gradient on this rank
  for (size_t bi = 0; bi < buckets_.size(); ++bi) {
    Bucket& b = buckets_[bi];
    // NCCL: the compute stream waits for the all-reduce; the host goes on.
    group_->wait_and_explain(b.reduction.work);
    if (b.flags_work) group_->wait_and_explain(b.flags_work);
    if (b.reduction.finish) b.reduction.finish();
    const auto s = b.reduction.work->started_at(), e = b.reduction.work->finished_at();
    if (b.reduction.work->stream().device().is_cpu() && s != trace::Clock::time_point{} && e >= s)
      host.buckets.push_back({bi, bucket_name(bi), s, e});
    if (!b.all_had_grad) unsure.push_back(bi);
    if (options_.shard_gradients) continue;  // keep_shards() below
    for (size_t k = 0; k < b.params.size(); ++k) {
      Tensor& p = params_[b.params[k]];
      if (!is_view_of(p.grad(), b.views[k])) p.set_grad(b.views[k]);
    }
  }
  no_grad_anywhere_.assign(params_.size(), 0);
  read_flags(unsure);
  if (options_.shard_gradients) keep_shards();
  else if (scatter_) point_shards_at_buckets();
  account(host, false, stats_);
  if (!buckets_.empty())
    stats_.last_first_bucket_launch_minus_backward_end = std::chrono::duration<double>(
        buckets_[0].launched_at - compute_end).count();
  trace::complete("backward", "compute", backward_start_, compute_end);
  timeline_.collect(false, sink);
  ++stats_.iterations;
  ++synced_iterations_;
}

// Where this rank had a gradient for every parameter of a bucket, every flag is > 0 after the
// all-reduce: nothing to read. Elsewhere the host must see which parameters no rank had a gradient
// for (their .grad() stays undefined): one copy of all those flags, which on a GPU waits for the
// all-reduces, only in iterations where this rank left a parameter without a gradient.
void Reducer::read_flags(const std::vector<size_t>& buckets) {
  if (buckets.empty()) return;
  if (cuda::CUDAGraph::capturing() != nullptr) {
    throw std::runtime_error("DDP: a parameter got no gradient on this rank in an iteration being captured in a CUDA "
                             "graph; which ones no rank had is read on the host, which a capture cannot do; capture "
                             "steps in which every parameter gets a gradient");
  }
  std::vector<Tensor> flags;
  for (size_t bi : buckets) flags.push_back(buckets_[bi].flags);
  Tensor host = raw::to(raw::cat(flags, 0), kCPU, kFloat32);
  if (!host.is_contiguous()) host = raw::contiguous(host);
  const float* f = host.data_ptr<float>();
  for (size_t bi : buckets) {
    const Bucket& b = buckets_[bi];
    for (size_t k = 0; k < b.params.size(); ++k, ++f)
      if (!(*f > 0)) {
        params_[b.params[k]].set_grad(Tensor());
        no_grad_anywhere_[b.params[k]] = 1;
      }
  }
}

// Each of this rank's runs gets its averaged gradient: added to its .grad() when that is still
// the shard's (no zero_grad since), else written there. Then the bucket's flat tensor goes, and
// with it every parameter's full .grad().
void Reducer::keep_shards() {
  const int rank = group_->rank();
  std::vector<int64_t> bucket_start(buckets_.size(), 0);  // each bucket's first element in this rank's shard
  for (size_t bi = 1; bi < buckets_.size(); ++bi) bucket_start[bi] = bucket_start[bi - 1] + buckets_[bi - 1].block;
  size_t bi = 0;
  for (size_t j = 0; j < shard_params_.size(); ++j) {
    const zero_detail::Piece& piece = shard_layout_[shard_piece_of_[j]];
    while (bi + 1 < buckets_.size() && piece.offset >= bucket_start[bi + 1]) ++bi;
    Bucket& b = buckets_[bi];
    const int64_t at = piece.offset - bucket_start[bi];
    Tensor& view = shard_params_[j];
    if (no_grad_anywhere_[piece.param]) {
      view.mutable_grad() = Tensor();
      continue;
    }
    Tensor kept = raw::narrow(b.shard, 0, at, piece.length);
    Tensor& grad = view.mutable_grad();
    if (b.into_shard) {
      grad = kept;  // the reduce-scatter wrote it there
      continue;
    }
    Tensor averaged = raw::narrow(b.flat, 0, b.block * rank + at, piece.length);
    if (grad.defined() && grad.data_ptr_raw() == kept.data_ptr_raw() && grad.numel() == kept.numel()) {
      raw::binary_(raw::BinaryOp::Add, kept, averaged);
    } else {
      raw::copy_(kept, averaged);
      grad = kept;
    }
  }
  for (Bucket& b : buckets_) {
    for (size_t idx : b.params) params_[idx].set_grad(Tensor());
    b.flat = Tensor();
    b.views.clear();
  }
}

// Stage 1: the averaged block is where the reduce-scatter left it, the bucket's shard (replaced at
// every synchronized backward: it averages all that the bucket accumulated); each of this rank's
// runs reads it through a view.
void Reducer::point_shards_at_buckets() {
  std::vector<int64_t> bucket_start(buckets_.size(), 0);
  for (size_t bi = 1; bi < buckets_.size(); ++bi) bucket_start[bi] = bucket_start[bi - 1] + buckets_[bi - 1].block;
  size_t bi = 0;
  for (size_t j = 0; j < shard_params_.size(); ++j) {
    const zero_detail::Piece& piece = shard_layout_[shard_piece_of_[j]];
    while (bi + 1 < buckets_.size() && piece.offset >= bucket_start[bi + 1]) ++bi;
    const Bucket& b = buckets_[bi];
    shard_params_[j].mutable_grad() =
        no_grad_anywhere_[piece.param]
            ? Tensor()
            : raw::narrow(b.shard, 0, piece.offset - bucket_start[bi], piece.length);
  }
}

}  // namespace colony::dist
