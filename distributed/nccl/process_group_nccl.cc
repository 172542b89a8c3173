#include "distributed/nccl/process_group_nccl.h"

#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "distributed/comm/fingerprint.h"
#include "distributed/comm/peer_channel.h"
#include "distributed/gloo/transport.h"
#include "ops/raw_ops.h"

namespace colony::dist {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using comm_detail::Fingerprint;
using comm_detail::OpKind;
using nccl_detail::CommHandle;
using nccl_detail::CommState;
using nccl_detail::EventHandle;
using nccl_detail::NcclRuntime;
using nccl_detail::StreamHandle;

std::string ms_str(milliseconds t) { return std::to_string(t.count()) + " ms"; }

// How long synchronize() sleeps between two looks at the end event: the usual collective of a
// step takes 0.1-10 ms, so a waiter is at most this late (and takes no core meanwhile).
constexpr auto kSynchronizePoll = std::chrono::microseconds(50);
// How often the destructor looks at the collectives still running when the group is destroyed.
constexpr auto kTeardownPoll = std::chrono::milliseconds(1);

}  // namespace

// ---------------------------------------------------------------------------------------------
// Shared state: the communicator, the in-flight Works, the abort.

class NcclWork;

struct ProcessGroupNCCL::State {
  State(std::shared_ptr<NcclRuntime> rt, int r, int s, int d) : runtime(std::move(rt)), rank(r), size(s), device(d) {}

  const std::shared_ptr<NcclRuntime> runtime;
  const int rank;
  const int size;
  const int device;
  CommHandle comm = nullptr;
  StreamHandle comm_stream = nullptr;
  std::unique_ptr<comm_detail::PeerChannel> channel;  // fingerprints; null for a group of one
  std::weak_ptr<FailureMonitor> monitor;              // with `mu`: set through the group, read by the watchdog
  std::atomic<uint64_t> next_seq{1};                  // taken by the calling thread, read by the watchdog

  std::mutex mu;
  std::condition_variable cv;  // stop, or an abort
  std::deque<std::shared_ptr<NcclWork>> in_flight;  // in launch order
  bool stop = false;
  bool comm_released = false;  // aborted or destroyed: never touched again
  // Threads inside NCCL calls on `comm` without `mu` (a launch, the teardown's polls): an abort
  // meanwhile is deferred to the last of them to leave (CommUse), since ncclCommAbort frees the
  // communicator under their feet.
  int comm_users = 0;
  bool abort_deferred = false;
  // A collective was queued into a CUDA graph: NCCL then finalizes the communicator only once
  // every such graph is destroyed, which the group cannot know, so teardown aborts instead.
  bool captured = false;
  std::string abort_reason;    // non-empty once aborted

  // With `mu` held. Fails every in-flight Work and aborts the communicator; later collectives fail
  // at once. Returns false when it was aborted already.
  bool abort_locked(const std::string& reason);
};

class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<ProcessGroupNCCL::State> state, const Fingerprint& fp, milliseconds timeout)
      : state_(std::move(state)),
        name_(comm_detail::work_name(fp)),
        description_(comm_detail::work_description(fp)),
        timeout_(timeout) {}
  ~NcclWork() override {
    if (start_event_) state_->runtime->destroy_event(start_event_);
    if (end_event_) state_->runtime->destroy_event(end_event_);
  }

  const std::string& name() const { return name_; }
  milliseconds timeout() const { return timeout_; }
  Clock::time_point deadline() const { return deadline_; }

  bool is_completed() const override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_) return true;
    }
    if (!end_event_ || !state_->runtime->query(end_event_)) return false;
    const_cast<NcclWork*>(this)->finish(nullptr);
    return true;
  }
  // is_completed() for the failure paths, which must not throw: a Work whose end event cannot be
  // queried (a CUDA error, the runtime unloading) counts as unfinished.
  bool completed_if_known() const noexcept {
    try {
      return is_completed();
    } catch (...) {
      return false;
    }
  }

  // The caller's current stream waits for the collective; the host does not. `timeout` is not
  // needed here: the watchdog enforces the collective's own.
  void wait(milliseconds /*timeout*/) override {
    rethrow_if_failed();
    state_->runtime->stream_wait(state_->runtime->current_stream(state_->device), end_event_, state_->device);
  }

  // Blocks the host until the collective ran on the GPU (or failed: its error is thrown).
  void synchronize() {
    while (!is_completed()) {
      rethrow_if_failed();
      std::this_thread::sleep_for(kSynchronizePoll);
    }
    rethrow_if_failed();
  }

  std::exception_ptr exception() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  std::string description() const override { return description_; }
  // started_at() is when it was queued and finished_at() when the host noticed it ended: events
  // recorded on this stream time the GPU's work.
  Stream stream() const override {
    const Device d = state_->runtime->device(state_->device);
    return d.is_cuda() ? Stream(d, state_->comm_stream) : Stream();
  }

  // The launching thread: events recorded, running from now.
  void launched(EventHandle start, EventHandle end) {
    start_event_ = start;
    end_event_ = end;
    deadline_ = Clock::now() + timeout_;
    mark_started();
  }
  // Completes it once; later calls are ignored. Returns whether this call did.
  bool finish(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return false;
    done_ = true;
    error_ = std::move(error);
    mark_finished();
    return true;
  }

 private:
  void rethrow_if_failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) std::rethrow_exception(error_);
  }

  const std::shared_ptr<ProcessGroupNCCL::State> state_;
  const std::string name_;
  const std::string description_;
  const milliseconds timeout_;
  Clock::time_point deadline_{};
  EventHandle start_event_ = nullptr;
  EventHandle end_event_ = nullptr;
  mutable std::mutex mu_;
  bool done_ = false;
  std::exception_ptr error_;
};

bool ProcessGroupNCCL::State::abort_locked(const std::string& reason) {
  if (!abort_reason.empty()) return false;
  abort_reason = reason;
  if (channel) channel->interrupt();
  if (comm && !comm_released) {
    if (comm_users > 0) {
      abort_deferred = true;
    } else {
      runtime->abort(comm);
      comm_released = true;
    }
  }
  for (auto& w : in_flight)
    if (!w->completed_if_known())
      w->finish(std::make_exception_ptr(CollectiveError(w->name() + " aborted: " + reason)));
  in_flight.clear();
  cv.notify_all();
  return true;
}

namespace {

// NCCL calls on the communicator made outside `mu`, as a scope. While any thread is inside one,
// an abort (the watchdog's, or abort() from the job's failure handling on another thread) only
// marks the group aborted; the last thread to leave aborts the communicator. Empty (false) when
// the group was aborted already: then nothing may touch the communicator.
class CommUse {
 public:
  explicit CommUse(ProcessGroupNCCL::State& s) : s_(s) {
    std::lock_guard<std::mutex> lock(s_.mu);
    entered_ = s_.abort_reason.empty() && !s_.comm_released;
    if (entered_) ++s_.comm_users;
  }
  ~CommUse() {
    if (!entered_) return;
    std::lock_guard<std::mutex> lock(s_.mu);
    if (--s_.comm_users == 0 && s_.abort_deferred && !s_.comm_released) {
      s_.runtime->abort(s_.comm);
      s_.comm_released = true;
    }
  }
  CommUse(const CommUse&) = delete;
  CommUse& operator=(const CommUse&) = delete;
  explicit operator bool() const { return entered_; }

 private:
  ProcessGroupNCCL::State& s_;
  bool entered_ = false;
};

// Aborts the group with `message` and tells the job (the other ranks stop too).
void fail_group(const std::shared_ptr<ProcessGroupNCCL::State>& s, const std::string& message) {
  std::shared_ptr<FailureMonitor> monitor;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->abort_locked(message)) return;
    monitor = s->monitor.lock();
  }
  if (monitor) monitor->report_failure(message);
}

// The watchdog: completed Works leave the in-flight list; one past its deadline, or an NCCL error,
// aborts the group and tells the job.
void watch_loop(const std::shared_ptr<ProcessGroupNCCL::State>& s, milliseconds interval) {
  std::unique_lock<std::mutex> lock(s->mu);
  while (!s->stop) {
    s->cv.wait_for(lock, interval, [&] { return s->stop; });
    if (s->stop || !s->abort_reason.empty()) continue;
    while (!s->in_flight.empty() && s->in_flight.front()->is_completed()) s->in_flight.pop_front();
    std::string failure;
    bool timed_out = false;
    const CommState state = s->runtime->state(s->comm);
    const std::string where = "rank " + std::to_string(s->rank) + "'s GPU (cuda:" + std::to_string(s->device) + ")";
    if (state.status == CommState::kFailed) {
      failure = "NCCL error on " + where +
                (s->in_flight.empty() ? "" : " during " + s->in_flight.front()->description()) + ": " + state.error;
    } else if (!s->in_flight.empty() && Clock::now() > s->in_flight.front()->deadline()) {
      const auto& w = s->in_flight.front();
      timed_out = true;
      failure = w->description() + " timed out after " + ms_str(w->timeout()) + " on " + where +
                " (another rank did not reach it, or the GPU is stuck)";
    }
    if (failure.empty()) continue;
    // The communicator is aborted and the job told before any Work fails: whoever catches the
    // error finds the group already down and the other ranks already stopping.
    auto failing = std::move(s->in_flight);
    s->in_flight.clear();
    s->abort_locked(failure);
    auto monitor = s->monitor.lock();
    lock.unlock();
    if (monitor) monitor->report_failure(failure);
    // The Works in flight fail with the words of the first failure.
    for (size_t i = 0; i < failing.size(); ++i) {
      auto& w = failing[i];
      if (w->completed_if_known()) continue;
      if (i > 0)
        w->finish(std::make_exception_ptr(CollectiveError(w->name() + " aborted: " + failure)));
      else if (timed_out)
        w->finish(std::make_exception_ptr(TimeoutError(failure)));
      else
        w->finish(std::make_exception_ptr(CollectiveError(failure)));
    }
    lock.lock();
  }
}

// The watchdog thread. An exception escaping it would end the process through std::terminate,
// whose handler tells every other rank that this one failed.
void watch(const std::shared_ptr<ProcessGroupNCCL::State>& s, milliseconds interval) {
  try {
    watch_loop(s, interval);
  } catch (const nccl_detail::RuntimeUnloading&) {
    // The process is exiting after the CUDA runtime shut down: nothing is left to watch, and
    // reporting a failure would stop the other ranks of a job that may well have finished.
  } catch (const std::exception& e) {
    // A CUDA error, e.g. a kernel that faulted: this rank's GPU is unusable, and the job must know.
    fail_group(s, "the NCCL watchdog on rank " + std::to_string(s->rank) + "'s GPU (cuda:" +
                      std::to_string(s->device) + ") could not check its collectives: " + e.what());
  }
}

void check_tensor(const std::string& op, const Tensor& t, const std::string& what, Device device) {
  if (!t.defined()) throw std::invalid_argument(op + ": " + what + " is an undefined tensor");
  if (t.device() != device)
    throw std::invalid_argument(op + ": " + what + " is on " + t.device().str() + ", but this NCCL group runs on " +
                                device.str() + "; move it with .to(" + device.str() + ")");
  if (!t.is_contiguous())
    throw std::invalid_argument(op + ": " + what + " must be contiguous, got shape " + shape_str(t.sizes()) +
                                " with strides " + shape_str(t.strides()) + "; pass .contiguous()");
  if (!nccl_detail::nccl_can_move(t.dtype()))
    throw std::invalid_argument(op + ": NCCL cannot move dtype " + dtype_name(t.dtype()) +
                                " (supported: float32, float64, float16, bfloat16, int32, int64, uint8, bool)");
}

// Bool moves (broadcast, allgather: a DDP buffer of flags) but does not reduce, as with Gloo.
void check_reducible(const std::string& op, const Tensor& t) {
  if (!nccl_detail::nccl_can_reduce(t.dtype()))
    throw std::invalid_argument(op + ": NCCL cannot reduce dtype " + dtype_name(t.dtype()) +
                                " (reducible: float32, float64, float16, bfloat16, int32, int64, uint8)");
}

void check_like(const std::string& op, const Tensor& t, const std::string& what, const Tensor& ref,
                const std::string& ref_name, Device device) {
  check_tensor(op, t, what, device);
  if (t.dtype() != ref.dtype() || t.numel() != ref.numel())
    throw std::invalid_argument(op + ": " + what + " is " + dtype_name(t.dtype()) + " with " +
                                std::to_string(t.numel()) + " elements, but " + ref_name + " is " +
                                dtype_name(ref.dtype()) + " with " + std::to_string(ref.numel()) +
                                " elements; they must match");
}

void check_count(const std::string& op, size_t n, int size, const std::string& what) {
  if (static_cast<int>(n) != size)
    throw std::invalid_argument(op + ": " + what + " has " + std::to_string(n) + " tensors, expected one per rank (" +
                                std::to_string(size) + ")");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Construction: the unique id through the store, the communicator, the fingerprint channel.

ProcessGroupNCCL::ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, ProcessGroupNCCLOptions options)
    : rank_(rank), size_(size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("ProcessGroupNCCL: rank " + std::to_string(rank) + " is out of range for " +
                                std::to_string(size) + " ranks (0 <= rank < size)");
  if (!store) throw std::invalid_argument("ProcessGroupNCCL: store is null");
  auto runtime = options.runtime ? options.runtime : nccl_detail::real_nccl_runtime();
  if (!runtime)
    throw std::runtime_error("ProcessGroupNCCL: this build has no CUDA/NCCL (built without a CUDA toolkit or with "
                             "--config=cpu); use the Gloo backend");
  device_ = options.device >= 0 ? options.device : runtime->current_device();
  timeout_ = options.timeout;
  const std::string who = "ProcessGroupNCCL rank " + std::to_string(rank) + " of " + std::to_string(size);
  state_ = std::make_shared<State>(runtime, rank, size, device_);

  // The n-th group a rank creates meets the n-th group of every other rank.
  const std::string gen = "nccl/gen" + std::to_string(options.generation);
  const int64_t n = store->add(gen + "/groups_of_rank_" + std::to_string(rank), 1);
  const std::string group_prefix = gen + "/group" + std::to_string(n);
  unique_id_key_ = group_prefix + "/unique_id";
  std::string id;
  try {
    if (rank == 0) {
      id = runtime->unique_id();
      store->set(unique_id_key_, Bytes(id.begin(), id.end()));
    } else {
      const Bytes b = store->get(unique_id_key_);
      id.assign(b.begin(), b.end());
    }
  } catch (const TimeoutError& e) {
    throw TimeoutError(who + ": rank 0 did not publish NCCL's unique id (" + unique_id_key_ +
                       ") within the store's timeout of " + ms_str(store->timeout()) + " (is rank 0 started?): " +
                       e.what());
  }
  if (id.size() != nccl_detail::kUniqueIdBytes)
    throw CollectiveError(who + ": the unique id under " + unique_id_key_ + " has " + std::to_string(id.size()) +
                          " bytes, expected " + std::to_string(nccl_detail::kUniqueIdBytes) +
                          " (is every rank running the same build?)");

  // Non-blocking init: poll, so that a missing rank ends in an error at the store's timeout.
  state_->comm = runtime->init_comm(id, size, rank, device_);
  const auto deadline = Clock::now() + store->timeout();
  for (;;) {
    const CommState st = runtime->state(state_->comm);
    if (st.status == CommState::kReady) break;
    if (st.status == CommState::kFailed || Clock::now() > deadline) {
      runtime->abort(state_->comm);
      state_->comm_released = true;
      if (st.status == CommState::kFailed)
        throw CollectiveError(who + ": creating the NCCL communicator on cuda:" + std::to_string(device_) +
                              " failed: " + st.error);
      throw TimeoutError(who + ": the NCCL communicator was not ready within the store's timeout of " +
                         ms_str(store->timeout()) + " (is every rank started, each on its own GPU?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  state_->comm_stream = runtime->new_comm_stream(device_);

  if (size > 1) {
    try {
      const gloo_detail::TransportChoice transport = gloo_detail::choose_transport();
      const gloo::transport::tcp::attr where = gloo::transport::tcp::CreateDeviceAttr(transport.attr);
      PrefixStore channel_store(group_prefix + "/channel", store);
      const char* shm = std::getenv("COLONY_SHM");
      const bool shared_memory = shm == nullptr || std::string(shm) != "0";
      state_->channel = std::make_unique<comm_detail::PeerChannel>(channel_store, rank, size, where.ai_addr,
                                                                   where.ai_addrlen, sizeof(Fingerprint),
                                                                   store->timeout(), shared_memory);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->abort_locked("construction failed");
      throw CollectiveError(who + ": connecting the fingerprint channel failed: " + e.what());
    }
  }
  watchdog_ = std::thread([s = state_, interval = options.watchdog_interval] { watch(s, interval); });
}

namespace {

enum class Teardown {
  kFinished,      // every collective ran
  kStuck,         // one is past its deadline, NCCL reported an error, or an event query failed
  kRuntimeGone,   // the CUDA runtime is unloading (the process is exiting)
};

// Waits until every Work of `in_flight` has run on the GPU, or until the first one still running
// is past its deadline, NCCL reports an error, the group is aborted or the runtime cannot tell.
// The Works that ran leave `in_flight`.
Teardown wait_until_finished(ProcessGroupNCCL::State& s, std::deque<std::shared_ptr<NcclWork>>& in_flight) {
  try {
    for (;;) {
      while (!in_flight.empty() && in_flight.front()->is_completed()) in_flight.pop_front();
      if (in_flight.empty()) return Teardown::kFinished;
      if (Clock::now() > in_flight.front()->deadline()) return Teardown::kStuck;
      if (s.runtime->state(s.comm).status == CommState::kFailed) return Teardown::kStuck;
      {
        std::lock_guard<std::mutex> lock(s.mu);
        if (!s.abort_reason.empty()) return Teardown::kStuck;
      }
      std::this_thread::sleep_for(kTeardownPoll);
    }
  } catch (const nccl_detail::RuntimeUnloading&) {
    return Teardown::kRuntimeGone;
  } catch (const std::exception&) {
    return Teardown::kStuck;  // an event query failed: nothing more can be known of them
  }
}

}  // namespace

ProcessGroupNCCL::~ProcessGroupNCCL() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
    state_->cv.notify_all();
  }
  watchdog_.join();
  // Each in-flight Work holds the state, so the list is emptied here, outside the lock (a Work's
  // destructor frees its events); a Work the caller still holds keeps the state alive on its own.
  std::deque<std::shared_ptr<NcclWork>> in_flight;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->comm_released) return;
    in_flight.swap(state_->in_flight);
  }
  // wait() does not block the host, so the last collectives are usually still running here (an
  // all_reduce, then destroy_process_group(), then t.cpu()). Aborting would stop their kernels
  // part-way, and what reads their results after them on the compute stream would read partial
  // sums without any error: wait for them first, each within its own deadline.
  Teardown how;
  {
    CommUse use(*state_);
    if (!use) return;  // aborted meanwhile
    how = wait_until_finished(*state_, in_flight);
  }
  const bool finished = how == Teardown::kFinished;
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->comm_released) return;  // aborted meanwhile
  // Destroyed during the process's exit, after the CUDA runtime: NCCL calls would fail or crash
  // now, and the driver reclaims everything as the process ends.
  if (how == Teardown::kRuntimeGone) return;
  if (finished && state_->captured) {
    // A graph that captured a collective may outlive the group: finalizing would wait for it
    // (ncclCommFinalize, NCCL 2.26 and later), and a graph destroyed after the group never
    // replays again anyway. Nothing eager is running any more, so aborting cuts nothing short.
    state_->runtime->abort(state_->comm);
  } else if (finished) {
    try {
      state_->runtime->destroy(state_->comm, timeout_);
    } catch (const std::exception& e) {
      // Finalizing failed or never finished: nothing is left to flush, so stop waiting.
      std::fprintf(stderr, "[rank %d] colony: aborting the NCCL communicator: %s\n", rank_, e.what());
      state_->runtime->abort(state_->comm);
    }
  } else {
    // One is stuck or NCCL failed: abort, and say so to whoever holds the Works and on stderr.
    const std::string reason = "the ProcessGroupNCCL was destroyed while it still ran (past its timeout, or after "
                               "an NCCL error); its results are incomplete";
    std::fprintf(stderr, "[rank %d] colony: %s aborted: %s\n", rank_, in_flight.front()->description().c_str(),
                 reason.c_str());
    state_->runtime->abort(state_->comm);
    for (auto& w : in_flight) w->finish(std::make_exception_ptr(CollectiveError(w->name() + " aborted: " + reason)));
  }
  state_->comm_released = true;
}

uint64_t ProcessGroupNCCL::collectives_started() const { return state_->next_seq.load() - 1; }

void ProcessGroupNCCL::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->abort_locked(reason);
}

void ProcessGroupNCCL::set_failure_monitor(std::weak_ptr<FailureMonitor> monitor) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->monitor = monitor;
  }
  ProcessGroup::set_failure_monitor(std::move(monitor));
}

// ---------------------------------------------------------------------------------------------
// Launching a collective.

namespace {

// The NCCL calls of one collective, queued on the communication stream inside one NCCL group.
using Body = std::function<void(NcclRuntime& rt, CommHandle comm, StreamHandle stream)>;

std::shared_ptr<Work> failed_work(const std::shared_ptr<ProcessGroupNCCL::State>& s, const Fingerprint& fp,
                                  milliseconds timeout, std::exception_ptr error) {
  auto w = std::make_shared<NcclWork>(s, fp, timeout);
  w->finish(std::move(error));
  return w;
}

// Exchanges `fp` with every rank. Returns the error the Work fails with, or null when all agree.
std::exception_ptr check_fingerprints(const std::shared_ptr<ProcessGroupNCCL::State>& s, const Fingerprint& fp,
                                      milliseconds timeout) {
  const std::string description = comm_detail::work_description(fp);
  try {
    std::memcpy(s->channel->outgoing(), &fp, sizeof(fp));
    const auto all = s->channel->exchange(sizeof(fp), Clock::now() + timeout, /*poll_first=*/true);
    std::vector<Fingerprint> fps(all.size());
    for (size_t r = 0; r < all.size(); ++r) std::memcpy(&fps[r], all[r], sizeof(Fingerprint));
    const std::string mismatch = comm_detail::describe_mismatch(fps, s->rank);
    if (mismatch.empty()) return nullptr;
    return std::make_exception_ptr(CollectiveError(mismatch));
  } catch (const comm_detail::PeerLostError& e) {
    const std::string message = description + " failed: " + unreachable_phrase({e.rank()}) + " (seen by rank " +
                                std::to_string(s->rank) + ": " + e.what() + ")";
    fail_group(s, message);
    return std::make_exception_ptr(CollectiveError(message, {e.rank()}));
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(s->mu);
      if (!s->abort_reason.empty())
        return std::make_exception_ptr(
            CollectiveError(comm_detail::work_name(fp) + " aborted: " + s->abort_reason));
    }
    // The channel is out of step now: the group cannot go on.
    const std::string what = e.what();
    if (what.find("timed out") != std::string::npos) {
      const std::string message = description + " timed out after " + ms_str(timeout) + " on rank " +
                                  std::to_string(s->rank) + " waiting for the other ranks to call it (" + what + ")";
      fail_group(s, message);
      return std::make_exception_ptr(TimeoutError(message));
    }
    const std::string message = description + " failed on rank " + std::to_string(s->rank) + ": " + what;
    fail_group(s, message);
    return std::make_exception_ptr(CollectiveError(message));
  }
}

// ncclGroupStart/End as a scope. A call that throws between them must still end the group: NCCL
// counts group depth per thread, and while it stays above zero every later NCCL call of this
// thread is only collected, never launched (the next collective would hang).
class NcclGroup {
 public:
  NcclGroup(NcclRuntime& rt, CommHandle comm, milliseconds timeout) : rt_(rt), comm_(comm), timeout_(timeout) {
    rt_.group_start();
  }
  ~NcclGroup() {
    if (!open_) return;
    try {
      rt_.group_end(comm_, timeout_);
    } catch (const std::exception&) {
      // The error that unwound the group is the one reported; the group is aborted after it.
    }
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  // Ends the group normally: its errors are the caller's.
  void end() {
    open_ = false;
    rt_.group_end(comm_, timeout_);
  }

 private:
  NcclRuntime& rt_;
  const CommHandle comm_;
  const milliseconds timeout_;
  bool open_ = true;
};

std::shared_ptr<Work> launch(const std::shared_ptr<ProcessGroupNCCL::State>& s, Fingerprint fp, milliseconds timeout,
                             const std::vector<Tensor>& tensors, const Body& body) {
  fp.seq = s->next_seq++;
  timeout = std::max(timeout, milliseconds(1));
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->abort_reason.empty())
      return failed_work(s, fp, timeout,
                         std::make_exception_ptr(CollectiveError(comm_detail::work_name(fp) +
                                                                 " cannot run: this ProcessGroupNCCL was aborted: " +
                                                                 s->abort_reason)));
  }
  if (s->channel) {
    if (auto error = check_fingerprints(s, fp, timeout)) return failed_work(s, fp, timeout, error);
  }
  NcclRuntime& rt = *s->runtime;
  auto work = std::make_shared<NcclWork>(s, fp, timeout);
  EventHandle start = rt.new_event(s->device);
  EventHandle end = rt.new_event(s->device);
  work->launched(start, end);
  bool captured = false;
  try {
    // Declared inside the try: it is left (and a deferred abort done) before the handler runs,
    // whose fail_group() aborts.
    CommUse use(*s);
    if (!use) {
      std::lock_guard<std::mutex> lock(s->mu);
      throw std::runtime_error("this ProcessGroupNCCL was aborted: " + s->abort_reason);
    }
    const StreamHandle caller = rt.current_stream(s->device);
    captured = rt.capturing(caller);
    // The inputs are ready once the caller's stream has come this far. (In a capture, this event
    // and the end event fork the communication stream into the graph and join it back.)
    rt.record(start, caller, s->device);
    rt.stream_wait(s->comm_stream, start, s->device);
    // A graph keeps its tensors' memory for as long as it lives: nothing to tell the allocator.
    if (!captured)
      for (const Tensor& t : tensors) rt.record_stream(t, s->comm_stream);
    NcclGroup group(rt, s->comm, timeout);
    body(rt, s->comm, s->comm_stream);
    group.end();
    rt.record(end, s->comm_stream, s->device);
  } catch (const std::exception& e) {
    const std::string message = work->description() + " could not be queued on rank " + std::to_string(s->rank) +
                                "'s GPU: " + e.what();
    work->finish(std::make_exception_ptr(CollectiveError(message)));
    fail_group(s, message);
    return work;
  }
  if (captured) {
    // It runs at each replay of the graph, not now: the host has nothing to watch (the watchdog
    // never sees it, as in PyTorch; a replay that hangs is not timed out) and the Work is done.
    // wait() still joins the communication stream back into the capture.
    work->finish(nullptr);
    std::lock_guard<std::mutex> lock(s->mu);
    s->captured = true;
    return work;
  }
  std::lock_guard<std::mutex> lock(s->mu);
  if (!s->abort_reason.empty()) {
    work->finish(std::make_exception_ptr(CollectiveError(work->name() + " aborted: " + s->abort_reason)));
  } else {
    s->in_flight.push_back(work);
  }
  return work;
}

milliseconds timeout_of(const CollectiveOptions& opts, milliseconds group_timeout) {
  return opts.timeout.count() >= 0 ? opts.timeout : group_timeout;
}

Fingerprint fingerprint(OpKind kind, const Tensor* t, int64_t numel, int root = -1, int reduce_op = -1) {
  Fingerprint fp;
  fp.kind = static_cast<int32_t>(kind);
  fp.numel = numel;
  fp.dtype = t ? static_cast<int32_t>(t->dtype()) : -1;
  fp.root = root;
  fp.reduce_op = reduce_op;
  return fp;
}

}  // namespace

std::shared_ptr<Work> ProcessGroupNCCL::allreduce(Tensor& tensor, ReduceOp op, const CollectiveOptions& opts) {
  const Device dev = state_->runtime->device(device_);
  check_tensor("allreduce", tensor, "tensor", dev);
  check_reducible("allreduce", tensor);
  const Fingerprint fp = fingerprint(OpKind::kAllreduce, &tensor, tensor.numel(), -1, static_cast<int>(op));
  Tensor t = tensor;
  return launch(state_, fp, timeout_of(opts, timeout_), {t}, [t, op](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    rt.all_reduce(t.data_ptr_raw(), t.data_ptr_raw(), t.numel(), t.dtype(), op, c, st);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::allreduce_coalesced(std::vector<Tensor>& tensors, ReduceOp op,
                                                            const CollectiveOptions& opts) {
  const Device dev = state_->runtime->device(device_);
  if (tensors.empty()) throw std::invalid_argument("allreduce_coalesced: no tensors");
  int64_t total = 0;
  std::vector<int64_t> numels;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string what = "tensors[" + std::to_string(i) + "]";
    check_tensor("allreduce_coalesced", tensors[i], what, dev);
    check_reducible("allreduce_coalesced", tensors[i]);
    if (tensors[i].dtype() != tensors[0].dtype())
      throw std::invalid_argument("allreduce_coalesced: " + what + " is " + dtype_name(tensors[i].dtype()) +
                                  " but tensors[0] is " + dtype_name(tensors[0].dtype()) + "; one dtype per call");
    total += tensors[i].numel();
    numels.push_back(tensors[i].numel());
  }
  // The sizes too, not only their total: each tensor is its own ncclAllReduce inside the group, so
  // ranks that split the same total differently ([100, 50] and [50, 100]) would give NCCL
  // collectives of different counts to match up (a hang, or sums of unrelated elements).
  Fingerprint fp = fingerprint(OpKind::kAllreduce, &tensors[0], total, -1, static_cast<int>(op));
  fp.layout = comm_detail::tensor_layout(numels);
  std::vector<Tensor> ts = tensors;
  return launch(state_, fp, timeout_of(opts, timeout_), ts, [ts, op](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    for (const Tensor& t : ts) rt.all_reduce(t.data_ptr_raw(), t.data_ptr_raw(), t.numel(), t.dtype(), op, c, st);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::broadcast(Tensor& tensor, int root, const CollectiveOptions& opts) {
  const Device dev = state_->runtime->device(device_);
  check_tensor("broadcast", tensor, "tensor", dev);
  if (root < 0 || root >= size_)
    throw std::invalid_argument("broadcast: root " + std::to_string(root) + " is not a rank of this group (0 <= root < " +
                                std::to_string(size_) + ")");
  const Fingerprint fp = fingerprint(OpKind::kBroadcast, &tensor, tensor.numel(), root);
  Tensor t = tensor;
  return launch(state_, fp, timeout_of(opts, timeout_), {t}, [t, root](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    rt.broadcast(t.data_ptr_raw(), t.data_ptr_raw(), t.numel(), t.dtype(), root, c, st);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::allgather(std::vector<Tensor>& outputs, const Tensor& input,
                                                  const CollectiveOptions& opts) {
  const Device dev = state_->runtime->device(device_);
  check_tensor("allgather", input, "input", dev);
  check_count("allgather", outputs.size(), size_, "outputs");
  for (int r = 0; r < size_; ++r)
    check_like("allgather", outputs[r], "outputs[" + std::to_string(r) + "]", input, "input", dev);
  const Fingerprint fp = fingerprint(OpKind::kAllgather, &input, input.numel());
  std::vector<Tensor> ts = outputs;
  ts.push_back(input);
  const int me = rank_;
  // One broadcast per rank, grouped: each output is its own tensor, so no staging buffer.
  return launch(state_, fp, timeout_of(opts, timeout_), ts, [ts, me](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    const Tensor& in = ts.back();
    for (size_t r = 0; r + 1 < ts.size(); ++r) {
      const void* send = static_cast<int>(r) == me ? in.data_ptr_raw() : nullptr;
      rt.broadcast(send, ts[r].data_ptr_raw(), in.numel(), in.dtype(), static_cast<int>(r), c, st);
    }
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                                       const CollectiveOptions& opts) {
  const Device dev = state_->runtime->device(device_);
  check_tensor("reduce_scatter", output, "output", dev);
  check_reducible("reduce_scatter", output);
  check_count("reduce_scatter", inputs.size(), size_, "inputs");
  for (int r = 0; r < size_; ++r)
    check_like("reduce_scatter", inputs[r], "inputs[" + std::to_string(r) + "]", output, "output", dev);
  const Fingerprint fp = fingerprint(OpKind::kReduceScatter, &output, output.numel(), -1, static_cast<int>(op));
  std::vector<Tensor> ts = inputs;
  ts.push_back(output);
  // One reduce per rank, grouped: rank r's output receives the reduction of every rank's inputs[r].
  return launch(state_, fp, timeout_of(opts, timeout_), ts, [ts, op](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    const Tensor& out = ts.back();
    for (size_t r = 0; r + 1 < ts.size(); ++r)
      rt.reduce(ts[r].data_ptr_raw(), out.data_ptr_raw(), out.numel(), out.dtype(), op, static_cast<int>(r), c, st);
  });
}

namespace {
// A flat collective's tensor must hold size x the other's elements, of its dtype, contiguous.
void check_flat(const std::string& op, const Tensor& flat, const std::string& flat_name, const Tensor& block,
                const std::string& block_name, int size, Device device) {
  check_tensor(op, flat, flat_name, device);
  if (flat.dtype() != block.dtype() || flat.numel() != block.numel() * size)
    throw std::invalid_argument(op + ": " + flat_name + " is " + dtype_name(flat.dtype()) + " with " +
                                std::to_string(flat.numel()) + " elements, but it must be " + dtype_name(block.dtype()) +
                                " with " + std::to_string(size) + " x " + std::to_string(block.numel()) + " elements (" +
                                block_name + "'s count per rank)");
}
}  // namespace

std::shared_ptr<Work> ProcessGroupNCCL::allgather_into_tensor(Tensor& output, const Tensor& input,
                                                              const CollectiveOptions& opts) {
  const Device dev = state_->runtime->device(device_);
  check_tensor("allgather_into_tensor", input, "input", dev);
  check_flat("allgather_into_tensor", output, "output", input, "input", size_, dev);
  const Fingerprint fp = fingerprint(OpKind::kAllgather, &input, input.numel());
  const Tensor in = input, out = output;
  return launch(state_, fp, timeout_of(opts, timeout_), {in, out}, [in, out](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    rt.all_gather(in.data_ptr_raw(), out.data_ptr_raw(), in.numel(), in.dtype(), c, st);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                                              const CollectiveOptions& opts) {
  const Device dev = state_->runtime->device(device_);
  check_tensor("reduce_scatter_tensor", output, "output", dev);
  check_reducible("reduce_scatter_tensor", output);
  check_flat("reduce_scatter_tensor", input, "input", output, "output", size_, dev);
  const Fingerprint fp = fingerprint(OpKind::kReduceScatter, &output, output.numel(), -1, static_cast<int>(op));
  const Tensor in = input, out = output;
  return launch(state_, fp, timeout_of(opts, timeout_), {in, out}, [in, out, op](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    rt.reduce_scatter(in.data_ptr_raw(), out.data_ptr_raw(), out.numel(), out.dtype(), op, c, st);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::barrier(const CollectiveOptions& opts) {
  // The fingerprint exchange already meets every rank on the host; the one-element allreduce makes
  // the caller's stream wait for the GPUs too, as torch's NCCL barrier does.
  Tensor t = raw::zeros({1}, TensorOptions(kFloat32).device(state_->runtime->device(device_)));
  const Fingerprint fp = fingerprint(OpKind::kBarrier, nullptr, 0);
  return launch(state_, fp, timeout_of(opts, timeout_), {t}, [t](NcclRuntime& rt, CommHandle c, StreamHandle st) {
    rt.all_reduce(t.data_ptr_raw(), t.data_ptr_raw(), 1, kFloat32, ReduceOp::kSum, c, st);
  });
}

void synchronize(Work& work) {
  if (auto* w = dynamic_cast<NcclWork*>(&work)) {
    w->synchronize();
  } else {
    work.wait();
  }
}

}  // namespace colony::dist
