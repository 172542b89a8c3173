// ProcessGroup over NCCL, for CUDA tensors on one device per rank.
//
//   auto pg = std::make_shared<ProcessGroupNCCL>(store, rank, world_size);   // on cuda:LOCAL_RANK
//   auto work = pg->allreduce(grads, ReduceOp::kAvg);   // returns once queued on the GPU
//   work->wait();                                       // the current stream waits; the host does not
//
// - Construction: rank 0 creates NCCL's unique id and publishes it on the store under
//   "nccl/gen<generation>/group<n>/unique_id" (the n-th group a rank creates meets the n-th group of
//   the others; a restarted job's generation never reads an old id); every rank creates its
//   communicator non-blocking (ncclConfig_t::blocking = 0), so a rank that never comes makes the
//   others fail at the store's timeout instead of hanging inside NCCL.
// - Streams: one high-priority communication stream per group. Each collective records an event on
//   the caller's current stream and makes the communication stream wait for it (the inputs are
//   ready), marks its tensors as used on the communication stream (the caching allocator keeps
//   their memory until it has run), runs NCCL there, and records an end event in its Work.
//   Work::wait() makes the caller's current stream wait for that event (no host block);
//   synchronize() blocks the host; is_completed() asks the event.
// - Fingerprints: before queuing a collective the ranks exchange its fingerprint (sequence number,
//   op, dtype, count) on the peer channel, as the Gloo group does: a mismatch fails that Work on
//   every rank with the same words ("collective mismatch at #12: rank 0 called allreduce(...),
//   rank 1 called broadcast(...)") and the group stays usable. This costs one host round trip per
//   collective on the calling thread; the data moves on the GPU.
// - Failure: a watchdog thread polls the in-flight Works' end events against their deadlines
//   (ProcessGroupOptions::timeout, or per call) and ncclCommGetAsyncError. On a timeout or an NCCL
//   error it aborts the communicator (ncclCommAbort: the kernels stop, streams waiting on them go
//   on), fails every in-flight and later Work with "allreduce #12 (float32, ...) timed out after
//   500 ms on rank 1's GPU", and reports that to the group's FailureMonitor (the job's store: every
//   rank stops). abort() does the same when another rank failed. ncclCommAbort frees the
//   communicator, so while another thread is inside NCCL calls on it (queuing a collective) the
//   abort waits for that thread to leave them, and its Work fails too.
// - Teardown: the destructor first waits for the collectives still running (wait() never blocked
//   the host), so that the last all_reduce before destroy_process_group() completes instead of
//   being cut short by an abort.
// - allreduce (sum, avg through ncclAvg, max, min), broadcast, allgather and reduce_scatter (as
//   grouped broadcasts / reduces, ncclGroupStart/End, so outputs need not be one buffer),
//   allreduce_coalesced (several tensors, one grouped launch), barrier (a one-element allreduce);
//   float32, float64, float16, bfloat16, int32, int64, uint8; bool for broadcast and allgather
//   (moved as uint8; reducing it is refused, as with Gloo).
//
// Threading: collectives may be called from one thread at a time per group; Works from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distributed/comm/process_group.h"
#include "distributed/nccl/nccl_runtime.h"
#include "distributed/store/store.h"

namespace colony::dist {

struct ProcessGroupNCCLOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // collectives' default
  int device = -1;      // CUDA device index; -1: the current device
  int generation = 0;   // colonyrun's restart count: keys of one generation never meet another's
  // How often the watchdog looks at in-flight collectives: a failure is seen this much after it
  // happens at most, at the cost of one event query per in-flight collective.
  std::chrono::milliseconds watchdog_interval{100};
  // null: real_nccl_runtime() (tests pass a fake).
  std::shared_ptr<nccl_detail::NcclRuntime> runtime;
};

class ProcessGroupNCCL : public ProcessGroup {
 public:
  // Blocks until the communicator is ready on every rank (or the store's timeout: TimeoutError).
  // Throws std::invalid_argument for rank/size out of range, std::runtime_error in a build without
  // CUDA or NCCL.
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, ProcessGroupNCCLOptions options = {});
  // Waits until the collectives still running on the GPU have finished (each within its deadline),
  // then finalizes and destroys the communicator. Aborts it instead when one is past its deadline
  // or NCCL reports an error: those Works then fail, and stderr says which one was cut short.
  ~ProcessGroupNCCL() override;
  ProcessGroupNCCL(const ProcessGroupNCCL&) = delete;
  ProcessGroupNCCL& operator=(const ProcessGroupNCCL&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "nccl"; }
  uint64_t collectives_started() const override;
  int device() const { return device_; }

  std::shared_ptr<Work> allreduce(Tensor& tensor, ReduceOp op = ReduceOp::kSum,
                                  const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> broadcast(Tensor& tensor, int root = 0, const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> allgather(std::vector<Tensor>& outputs, const Tensor& input,
                                  const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       ReduceOp op = ReduceOp::kSum, const CollectiveOptions& opts = {}) override;
  // ncclAllGather / ncclReduceScatter on the flat tensors themselves (one NCCL call, no grouping).
  std::shared_ptr<Work> allgather_into_tensor(Tensor& output, const Tensor& input,
                                              const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::kSum,
                                              const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> barrier(const CollectiveOptions& opts = {}) override;
  // Every tensor reduced in place, in one grouped launch (one Work, one fingerprint: the dtype, the
  // total element count, and the tensors' count and sizes, which every rank must pass alike).
  std::shared_ptr<Work> allreduce_coalesced(std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::kSum,
                                            const CollectiveOptions& opts = {});

  void abort(const std::string& reason) override;
  // Also read by the watchdog, which reports the failures it finds (timeouts, NCCL errors).
  void set_failure_monitor(std::weak_ptr<FailureMonitor> monitor) override;

  // The store key rank 0 published the unique id under, e.g. "nccl/gen0/group1/unique_id".
  const std::string& unique_id_key() const { return unique_id_key_; }

  struct State;  // shared with the watchdog thread and the Works; defined in the .cc

 private:
  int rank_;
  int size_;
  int device_;
  std::string unique_id_key_;
  std::shared_ptr<State> state_;
  std::thread watchdog_;
};

// Blocks the host until `work` has run: on the GPU for an NCCL collective (its end event), like
// wait() for the others. Throws the collective's error.
void synchronize(Work& work);

}  // namespace colony::dist
