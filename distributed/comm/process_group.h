// One interface for collective communication between the ranks of a job. Gloo implements it for
// CPU tensors (gloo/process_group_gloo.h), NCCL for CUDA tensors (nccl/process_group_nccl.h).
//
// Every collective is asynchronous: it is queued in call order and returns a Work at once; the
// backend runs it (Gloo: on its communication thread) while the caller goes on computing.
// Tensors passed to a collective must stay alive and untouched until its Work completes.
//
// Every collective carries a sequence number and a fingerprint (op, dtype, element count, root);
// ranks that disagree get an error that says which rank called what, instead of a hang or
// garbage. A collective that does not finish within its timeout fails with a TimeoutError
// naming the collective and its sequence number. Other failures (a peer that is gone, ranks that
// called different collectives, abort()) are CollectiveError.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/store/store.h"
#include "runtime/stream.h"
#include "tensor/tensor.h"

namespace colony::dist {

enum class ReduceOp { kSum, kAvg, kMax, kMin };
const char* reduce_op_name(ReduceOp op);
// "rank 2 is unreachable", "ranks 1, 3 are unreachable".
std::string unreachable_phrase(const std::vector<int>& ranks);

// A collective that failed for a reason other than its timeout (that one is TimeoutError, from
// store.h): ranks called different collectives, a peer is unreachable, or the group was aborted.
class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // `unreachable`: the peers whose loss made it fail (they exited, crashed or were cut off), so
  // that whoever reports the failure can blame them rather than this rank.
  CollectiveError(const std::string& what, std::vector<int> unreachable)
      : std::runtime_error(what), unreachable_(std::move(unreachable)) {}
  const std::vector<int>& unreachable() const { return unreachable_; }

 private:
  std::vector<int> unreachable_;
};

// A collective that timed out because other ranks stopped making progress: alive (their
// heartbeat goes on) but they never started it, blocked somewhere outside the collectives. Names
// them, so that whoever reports the failure blames them rather than this rank.
class StalledRanksError : public TimeoutError {
 public:
  // what(): "<timeout>; <stall>".
  StalledRanksError(const std::string& timeout, const std::string& stall, std::vector<int> stalled)
      : TimeoutError(timeout + "; " + stall), timeout_(timeout), stall_(stall), stalled_(std::move(stalled)) {}
  const std::vector<int>& stalled() const { return stalled_; }
  // The collective's own timeout error, and the words for the stalled ranks.
  const std::string& timeout() const { return timeout_; }
  const std::string& stall() const { return stall_; }

 private:
  std::string timeout_, stall_;
  std::vector<int> stalled_;
};

// "rank 0 stopped making progress", "ranks 0, 2 stopped making progress".
std::string stalled_phrase(const std::vector<int>& ranks);

// The handle of one queued collective.
class Work {
 public:
  virtual ~Work() = default;
  // Whether it finished (successfully or not).
  virtual bool is_completed() const = 0;
  // Blocks until done or `timeout` passes (negative: the collective's own timeout). Rethrows the
  // collective's error; on timeout throws TimeoutError naming the collective and its sequence
  // number. Returns normally only on success.
  virtual void wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1)) = 0;
  // The collective's error once completed unsuccessfully, else null.
  virtual std::exception_ptr exception() const = 0;
  // "allreduce #12 (float32, 1024 elements, sum)" — for messages and traces. Sequence numbers
  // count the collectives of one group from #1, in call order, the same on every rank.
  virtual std::string description() const = 0;

  // When the host began and finished running it (steady clock; zero until then). DDP's trace
  // shows these, so overlap with backward can be seen. Backends call mark_started()/mark_finished()
  // on their communication thread; a Work that wraps another reports the inner one's.
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual TimePoint started_at() const { return started_at_.load(); }
  virtual TimePoint finished_at() const { return finished_at_.load(); }

  // The device stream the collective runs on (NCCL: the group's communication stream), so that a
  // caller can time it with events recorded there instead of blocking the host to ask; the CPU
  // stream (the default) when the host runs it, and then started_at()/finished_at() are its times.
  virtual Stream stream() const { return Stream(); }

 protected:
  void mark_started() { started_at_.store(std::chrono::steady_clock::now()); }
  void mark_finished() { finished_at_.store(std::chrono::steady_clock::now()); }

 private:
  std::atomic<TimePoint> started_at_{TimePoint{}};
  std::atomic<TimePoint> finished_at_{TimePoint{}};
};

struct CollectiveOptions {
  // Negative: the group's timeout.
  std::chrono::milliseconds timeout{-1};
};

struct ProcessGroupOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

// What watches the job for failures (the watchdog init_process_group runs): it knows why the job
// is going down, and tells every rank to stop. A group that has one names the cause in its
// errors, and reports failures only it can see (a collective that timed out on a GPU).
class FailureMonitor {
 public:
  virtual ~FailureMonitor() = default;
  // "rank 1 failed: data file vanished", or "" when nobody said.
  virtual std::string failure_cause() = 0;
  // Makes every rank stop with `message` (the first report wins).
  virtual void report_failure(const std::string& message) = 0;
  // The ranks that have started fewer collectives than this one while they still beat, and the
  // words for it ("rank 0 stopped making progress: it has started 800 collectives, rank 1 801 ...");
  // what a collective that timed out asks before blaming itself. None by default.
  struct Stall {
    std::vector<int> ranks;
    std::string description;
  };
  virtual Stall stalled_ranks() { return {}; }
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend_name() const = 0;

  // In place on `tensor` (contiguous). kAvg divides the sum by size() (integer dtypes: truncated
  // toward zero, as NCCL does).
  virtual std::shared_ptr<Work> allreduce(Tensor& tensor, ReduceOp op = ReduceOp::kSum,
                                          const CollectiveOptions& opts = {}) = 0;
  // Root's `tensor` is copied into every rank's `tensor` (same shape and dtype everywhere).
  virtual std::shared_ptr<Work> broadcast(Tensor& tensor, int root = 0, const CollectiveOptions& opts = {}) = 0;
  // outputs[r] receives rank r's `input`; outputs has size() tensors shaped like input.
  virtual std::shared_ptr<Work> allgather(std::vector<Tensor>& outputs, const Tensor& input,
                                          const CollectiveOptions& opts = {}) = 0;
  // `output` on rank r receives the reduction over ranks of inputs[r]; inputs has size() tensors
  // shaped like output.
  virtual std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                               ReduceOp op = ReduceOp::kSum,
                                               const CollectiveOptions& opts = {}) = 0;
  // The flat forms (PyTorch's all_gather_into_tensor and reduce_scatter_tensor), what ZeRO moves
  // its buckets with: `output` (contiguous) holds size() blocks of input.numel() elements, rank r's
  // `input` in block r; for reduce_scatter_tensor `input` holds size() blocks of output.numel()
  // elements and `output` on rank r receives the reduction over ranks of block r. Same dtypes,
  // checks, fingerprints (allgather / reduce_scatter with the per-rank count, so a flat call and a
  // list call of the same sizes match) and errors as the list forms. The default splits the flat
  // tensor into views and calls the list form; NCCL overrides them with ncclAllGather and
  // ncclReduceScatter.
  virtual std::shared_ptr<Work> allgather_into_tensor(Tensor& output, const Tensor& input,
                                                      const CollectiveOptions& opts = {});
  virtual std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input,
                                                      ReduceOp op = ReduceOp::kSum,
                                                      const CollectiveOptions& opts = {});
  virtual std::shared_ptr<Work> barrier(const CollectiveOptions& opts = {}) = 0;

  // Fails every queued and running collective, and every later one, with `reason` (the
  // watchdog calls this when another rank failed). Never blocks.
  virtual void abort(const std::string& reason) = 0;

  // How many collectives this rank has started on the group (their sequence numbers so far): the
  // watchdog posts it, so that a rank that stopped making progress can be told from one that
  // waits for it. Any thread. 0 for a backend that does not count.
  virtual uint64_t collectives_started() const { return 0; }

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  // Held weakly: once the monitor is gone, errors are no longer explained nor reported.
  virtual void set_failure_monitor(std::weak_ptr<FailureMonitor> monitor);
  std::shared_ptr<FailureMonitor> failure_monitor() const;
  // Waits for `work` (one of this group's); when it failed because the job is going down, the error
  // also says why, e.g. "allreduce #11 failed: rank 1 is unreachable (...); the job is stopping
  // because rank 1 failed: data file vanished". What DDP waits with, so its errors name the cause.
  // A timeout while other ranks stopped making progress is a StalledRanksError naming them.
  void wait_and_explain(const std::shared_ptr<Work>& work) const;

 protected:
  std::chrono::milliseconds timeout_{std::chrono::minutes(10)};

 private:
  mutable std::mutex failure_monitor_mu_;
  std::weak_ptr<FailureMonitor> failure_monitor_;
};

}  // namespace colony::dist
