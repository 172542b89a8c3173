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
// Unused parameters need no flag: at the start of backward the reducer walks the graph of the
// forward output, and parameters it cannot reach are ready at once (their bucket slots hold
// their accumulated gradient, or zeros). Each bucket carries one "had a gradient" flag per
// parameter through the same all-reduce; a parameter no rank had a gradient for keeps an
// undefined .grad(), as in PyTorch.
//
// After the first iteration the buckets are rebuilt once in the order gradients actually
// arrived on rank 0 (broadcast, so every rank builds the same buckets).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "distributed/comm/process_group.h"
#include "distributed/ddp/comm_hooks.h"
#include "log/trace.h"
#include "tensor/tensor.h"

namespace colony::dist {

struct ReducerOptions {
  size_t first_bucket_bytes = size_t{1} << 20;
  size_t bucket_bytes = size_t{25} << 20;
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
  void set_comm_hook(CommHook hook) { hook_ = std::move(hook); }

  // Parameter indices (registration order) of each bucket, in launch order.
  std::vector<std::vector<size_t>> bucket_layout() const;

  // Communication seen so far: total time buckets spent in all-reduce, and how much of it ran
  // while backward was still computing (the overlap DDP exists for).
  struct Stats {
    int64_t iterations = 0;
    double comm_seconds = 0;
    double hidden_seconds = 0;
    // The first bucket of the last iteration: when its all-reduce started, relative to the end
    // of backward's computation (negative: during backward).
    double last_first_bucket_start_minus_backward_end = 0;
  };
  Stats stats() const;

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_
    Tensor flat;                 // the gradients, then one flag per parameter
    std::vector<Tensor> views;   // views[i]: params[i]'s gradient inside `flat`
    Tensor flags;                // the last params.size() elements of `flat`
    size_t pending = 0;
    bool launched = false;
    PendingReduction reduction;
    size_t bytes = 0;
  };

  void build_buckets(const std::vector<size_t>& order);
  void on_backward_start();
  void mark_ready(size_t index, bool from_hook);
  void launch_ready_buckets();
  void finalize();
  void reset_iteration();

  std::vector<Tensor> params_;
  std::shared_ptr<ProcessGroup> group_;
  ReducerOptions options_;
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
  Stats stats_;
};

}  // namespace colony::dist
