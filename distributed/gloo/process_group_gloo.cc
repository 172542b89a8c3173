#include "distributed/gloo/process_group_gloo.h"

#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "distributed/comm/comm_thread_wakeup.h"
#include "distributed/comm/deadline.h"
#include "distributed/comm/fingerprint.h"
#include "distributed/comm/peer_channel.h"
#include "distributed/comm/queued_work.h"
#include "distributed/gloo/algorithms.h"
#include "distributed/gloo/cuda_staging.h"
#include "distributed/gloo/reduce.h"
#include "distributed/gloo/transport.h"
#include "ops/cuda_graph.h"
#include "ops/raw_ops.h"

namespace colony::dist {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using comm_detail::Fingerprint;
using gloo_detail::GlooContext;
using comm_detail::QueuedWork;
using comm_detail::OpKind;
using gloo_detail::ReduceFn;
using comm_detail::remaining;

std::string ms_str(milliseconds t) { return std::to_string(t.count()) + " ms"; }

// The data movement of one collective, run on the communication thread once the fingerprints
// agreed. `context` is null for a group of one.
using Body = std::function<void(const GlooContext& context, uint32_t tag, milliseconds timeout)>;

// An allreduce in a group of two can travel on the peer channel: each rank sends its data with
// its fingerprint, one message each way, instead of a fingerprint round trip followed by a ring.
// Over TCP it does up to this size, where the one exchange is as fast as the ring or faster
// (//benchmarks:allreduce_bench on 2 cores, 2026-12-03, medians: 242 KiB 0.26 ms against
// 0.46-0.64 by the ring, 1 MiB 1.1 against 1.0-2.0, 2 MiB 2.0-2.4 against 2.0-3.6); above it the
// ring's halved reduction and pipelined segments win. It covers DDP's first bucket (1 MiB).
// Costs 3 staging buffers of this size.
constexpr size_t kInlineAllreduceBytes = 2048 * 1024;

// Over shared memory (comm/shm_outbox.h) the exchange beats the ring at every size, so a
// group whose ranks all share one machine sends every allreduce this way (each rank reads every
// peer's chunk where it was written), one exchange per chunk of this size:
// small enough to stay in cache between the copy into the outbox and the peer's sum
// (allreduce_bench, 25 MiB: 2.1 ms in 256 KiB chunks, 2.5 in 512 KiB, 2.7 in 128 KiB, 3.1 in
// 2 MiB, 18-22 ms by gloo's ring over loopback TCP).
constexpr size_t kSharedMemoryChunkBytes = 256 * 1024;

// The most one message carries after its header: the channel's capacity (a group of two has
// room for kInlineAllreduceBytes, larger groups for one shared-memory chunk).
size_t channel_payload_bytes(int size) { return size == 2 ? kInlineAllreduceBytes : kSharedMemoryChunkBytes; }

// How long the communication thread leaves a collective that a waiting thread may run itself
// (one on the peer channel alone) before it takes it. The usual caller waits at once (DDP's last
// bucket, a barrier, a logged loss), and running it there, polling, is fastest; the
// communication thread, when it was woken by the enqueue, often got there first on a busy core
// (a third of LeNet's steps on 2 ranks) and then slept in poll(2) until the peer's message came,
// adding two wake-ups to the step. Now a timer wakes it at the end of this grace unless a waiter
// took the job (comm/comm_thread_wakeup.h). Jobs nobody waits for start this much later.
constexpr auto kInlineGrace = std::chrono::microseconds(500);

// A collective whose data travels on the PeerChannel: every rank sends every peer the same stream
// of `bytes` bytes, in exchanges of at most `chunk_bytes`. An allreduce sends its tensor; an
// allgather its input; a reduce-scatter, for each piece of its output, that piece's block of every
// rank's input one after another (so a chunk of world x L bytes carries L bytes for each rank).
struct ChannelData {
  size_t bytes = 0;
  size_t chunk_bytes = 0;  // at most this much per exchange, a whole number of the stream's units
  // Writes this rank's stream bytes [offset, offset + length) to `to`.
  std::function<void(uint8_t* to, size_t offset, size_t length)> pack;
  // Takes in every rank's stream bytes [offset, offset + length) (`chunks`, rank-indexed, this
  // rank's own copy included): an allreduce or reduce-scatter reduces them in rank order, so
  // every rank computes bit-identical results, and averages them for kAvg.
  std::function<void(const std::vector<const uint8_t*>& chunks, size_t offset, size_t length)> combine;
};

// What each rank sends every peer at the start of a collective on the PeerChannel.
struct ChannelHeader {
  Fingerprint fingerprint;
  uint64_t payload_bytes = 0;  // the inline allreduce's first chunk that follows, or 0
};
static_assert(sizeof(ChannelHeader) == 48, "ChannelHeader travels as 48 raw bytes");


// ---------------------------------------------------------------------------------------------
// Argument checks (synchronous: std::invalid_argument from the call itself).

void check_tensor(const std::string& op, const Tensor& t, const std::string& what) {
  if (!t.defined()) throw std::invalid_argument(op + ": " + what + " is an undefined tensor");
  if (!t.is_cpu())
    throw std::invalid_argument(op + ": " + what + " is on " + t.device().str() +
                                ", but Gloo runs on CPU tensors; use the NCCL backend or .to(kCPU)");
  if (!t.is_contiguous())
    throw std::invalid_argument(op + ": " + what + " must be contiguous, got shape " + shape_str(t.sizes()) +
                                " with strides " + shape_str(t.strides()) +
                                "; pass .contiguous() and copy the result back");
}

void check_reducible(const std::string& op, DType dtype) {
  if (!gloo_detail::is_reducible(dtype))
    throw std::invalid_argument(op + ": Gloo cannot reduce dtype " + dtype_name(dtype) +
                                " (reducible: float32, float64, float16, bfloat16, int64, int32, uint8)");
}

void check_like(const std::string& op, const Tensor& t, const std::string& what, const Tensor& ref,
                const std::string& ref_name) {
  check_tensor(op, t, what);
  if (t.dtype() != ref.dtype() || t.numel() != ref.numel())
    throw std::invalid_argument(op + ": " + what + " is " + dtype_name(t.dtype()) + " with " +
                                std::to_string(t.numel()) + " elements, but " + ref_name + " is " +
                                dtype_name(ref.dtype()) + " with " + std::to_string(ref.numel()) +
                                " elements; they must match");
}

bool is_timeout_message(const std::string& m) {
  return m.find("Timed out") != std::string::npos || m.find("timed out") != std::string::npos ||
         m.find("timeout") != std::string::npos;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Shared state and the communication thread.

struct ProcessGroupGloo::State : std::enable_shared_from_this<ProcessGroupGloo::State> {
  struct Job {
    std::shared_ptr<QueuedWork> work;
    Fingerprint fingerprint;
    Body body;
    std::optional<ChannelData> channel_data;
    Clock::time_point left_to_waiters_until{};  // the communication thread takes it from then
  };

  State(int r, int s) : rank(r), size(s) {}

  const int rank;
  const int size;
  GlooContext context;  // null for a group of one
  // Every rank exchanges channel messages with every other through shared memory (all decided
  // alike at construction): allreduce then goes through the channel at any size.
  bool all_shared_memory = false;
  std::unique_ptr<comm_detail::PeerChannel> channel;  // with context

  std::mutex mu;
  comm_detail::CommThreadWakeup wakeup;  // the communication thread's sleep: a job, stop, a timer
  Clock::time_point timer_at{};          // when the wakeup's timer is armed for, {} when it is not
  std::condition_variable exited_cv;
  std::deque<Job> queue;
  std::shared_ptr<QueuedWork> running;
  uint64_t next_seq = 1;
  bool stop = false;
  bool thread_exited = false;
  std::string abort_reason;  // non-empty once aborted
  std::string broken;        // non-empty once a failure left gloo's connections unusable

  // Has the communication thread woken at `until` unless its timer rings sooner already. With
  // `mu` held.
  void wake_at(Clock::time_point until) {
    if (timer_at != Clock::time_point{} && timer_at <= until) return;
    wakeup.arm(until);
    timer_at = until;
  }

  std::string unusable_message(const QueuedWork& w) const {
    return w.name() + " cannot run: this ProcessGroupGloo is unusable since " + broken;
  }

  std::shared_ptr<Work> enqueue(Fingerprint fp, milliseconds timeout, Body body,
                                std::optional<ChannelData> channel_data = std::nullopt) {
    if (cuda::CUDAGraph::capturing() != nullptr) {
      // Refused before the collective takes a sequence number, so the group stays usable.
      throw std::runtime_error(std::string("ProcessGroupGloo: ") + comm_detail::op_name(fp.kind) +
                               " inside a CUDA graph capture: Gloo moves data through the host, which a replay "
                               "would not redo; capture DDP steps with the NCCL backend");
    }
    std::shared_ptr<QueuedWork> work;
    std::string refusal;
    {
      std::lock_guard<std::mutex> lock(mu);
      fp.seq = next_seq++;
      work = std::make_shared<QueuedWork>(fp, std::max(timeout, milliseconds(1)));
      if (abort_reason.empty() && broken.empty()) {
        // Only collectives that move data on the PeerChannel alone may run on a waiting thread:
        // abort() can interrupt those, not gloo's own algorithms.
        const bool channel_only = channel_data.has_value() || static_cast<OpKind>(fp.kind) == OpKind::kBarrier;
        Clock::time_point left_to_waiters_until{};
        if (channel_only && context) {
          std::weak_ptr<State> self = weak_from_this();
          work->set_inline_runner([self, w = work.get()] {
            auto s = self.lock();
            return s && s->run_inline(w);
          });
          left_to_waiters_until = Clock::now() + kInlineGrace;
        }
        queue.push_back(Job{work, fp, std::move(body), std::move(channel_data), left_to_waiters_until});
        if (left_to_waiters_until == Clock::time_point{}) {
          wakeup.signal();
        } else {
          wake_at(left_to_waiters_until);  // nobody is woken now; a waiter that takes the job disarms it
        }
        return work;
      }
      refusal = !abort_reason.empty() ? work->name() + " aborted: " + abort_reason : unusable_message(*work);
    }
    // Fail at once rather than behind a communication thread that may be stuck in gloo.
    work->fail<CollectiveError>(refusal);
    return work;
  }

  void loop() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        bool take = false;
        while (!take) {
          if (stop && queue.empty()) break;  // the destructor took what was queued
          // A waiting thread may be running the front job itself (run_inline); the next one waits.
          if (!queue.empty() && !running) {
            const Clock::time_point until = queue.front().left_to_waiters_until;
            take = stop || Clock::now() >= until;
            if (!take) wake_at(until);
          }
          if (take) break;
          lock.unlock();
          wakeup.wait();
          lock.lock();
          if (timer_at != Clock::time_point{} && Clock::now() >= timer_at) timer_at = {};  // it rang
        }
        if (!take) break;
        job = std::move(queue.front());
        queue.pop_front();
        if (!abort_reason.empty()) {
          job.work->fail<CollectiveError>(job.work->name() + " aborted: " + abort_reason);
          continue;
        }
        if (!broken.empty()) {
          job.work->fail<CollectiveError>(unusable_message(*job.work));
          continue;
        }
        running = job.work;
      }
      execute(job, /*on_waiting_thread=*/false);
    }
    std::lock_guard<std::mutex> lock(mu);
    thread_exited = true;
    exited_cv.notify_all();
  }

  // Runs `w` on the calling thread if it is next in line and nothing is running (collectives run
  // one at a time, in order, whichever thread runs them).
  bool run_inline(const QueuedWork* w) {
    Job job;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (running || queue.empty() || queue.front().work.get() != w || !abort_reason.empty() || !broken.empty())
        return false;
      job = std::move(queue.front());
      queue.pop_front();
      running = job.work;
      if (queue.empty() && timer_at != Clock::time_point{}) {
        wakeup.disarm();  // it was for this job
        timer_at = {};
      }
    }
    execute(job, /*on_waiting_thread=*/true);
    return true;
  }

  // on_waiting_thread: run by a wait() that has nothing else to do, so it may poll for messages.
  void execute(Job& job, bool on_waiting_thread) {
    QueuedWork& w = *job.work;
    w.start();
    const auto deadline = Clock::now() + w.timeout();
    // Tags keep consecutive collectives apart; every rank derives the same ones because the k-th
    // collective has sequence number k everywhere.
    const auto tag = static_cast<uint32_t>(job.fingerprint.seq * 2);
    bool exchanged = false;
    std::exception_ptr error;
    bool breaks_group = false;
    try {
      if (!context) {
        job.body(context, tag + 1, remaining(deadline));
      } else {
        const bool inline_data = job.channel_data.has_value();
        ChannelHeader header;
        header.fingerprint = job.fingerprint;
        header.payload_bytes = inline_data ? std::min(job.channel_data->bytes, job.channel_data->chunk_bytes) : 0;
        std::memcpy(channel->outgoing(), &header, sizeof header);
        if (inline_data)
          job.channel_data->pack(channel->outgoing() + sizeof header, 0, header.payload_bytes);
        const std::vector<const uint8_t*> messages =
            channel->exchange(sizeof header + header.payload_bytes, deadline, /*poll_first=*/on_waiting_thread);
        exchanged = true;
        std::vector<Fingerprint> all(size);
        for (int r = 0; r < size; ++r) std::memcpy(&all[r], messages[r], sizeof(Fingerprint));
        // Every rank saw the same fingerprints, so on a mismatch every rank fails here, only the
        // one message each way was sent, and the group stays usable. Equal fingerprints mean equal
        // sizes, so both ranks of an inline allreduce sent data.
        const std::string mismatch = comm_detail::describe_mismatch(all, rank);
        if (!mismatch.empty()) {
          error = std::make_exception_ptr(CollectiveError(mismatch));
        } else if (inline_data) {
          const ChannelData& ia = *job.channel_data;
          std::vector<const uint8_t*> chunks(size);
          for (int r = 0; r < size; ++r) chunks[r] = messages[r] + sizeof header;
          ia.combine(chunks, 0, header.payload_bytes);
          for (size_t offset = header.payload_bytes; offset < ia.bytes;) {
            const size_t length = std::min(ia.chunk_bytes, ia.bytes - offset);
            ia.pack(channel->outgoing(), offset, length);
            ia.combine(channel->exchange(length, deadline, on_waiting_thread), offset, length);
            offset += length;
          }
        } else {
          job.body(context, tag + 1, remaining(deadline));
        }
      }
    } catch (const comm_detail::PeerLostError& e) {
      breaks_group = true;
      error = translate_failure(w, e.what(), exchanged, {e.rank()});
    } catch (const std::exception& e) {
      // gloo's connections are in an unknown state after any failure inside it (on a timeout it
      // closes them all itself), so the group cannot be trusted with another collective.
      breaks_group = true;
      error = translate_failure(w, e.what(), exchanged);
    }
    job.body = nullptr;  // release the tensors before anyone sees the work complete
    job.channel_data.reset();
    {
      std::lock_guard<std::mutex> lock(mu);
      running = nullptr;
      // The communication thread may be waiting for an inline run to end before the next job.
      if (!queue.empty()) wakeup.signal();
      if (breaks_group && broken.empty()) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          broken = e.what();
        }
      }
    }
    w.finish(error);
  }

  // A failure of gloo or of the peer channel, in words that name the collective and, where it can
  // be told, the peer: `lost` when the failure says who, else the connections gloo found broken.
  std::exception_ptr translate_failure(const QueuedWork& w, const std::string& what, bool exchanged,
                                       std::vector<int> lost = {}) {
    if (is_timeout_message(what)) {
      const std::string stage = exchanged ? "while exchanging data"
                                          : "waiting for every rank to start it (did a rank skip it, "
                                            "or is one still busy before it?)";
      return std::make_exception_ptr(
          TimeoutError(w.name() + " timed out after " + ms_str(w.timeout()) + " " + stage + " (" + what + ")"));
    }
    if (lost.empty() && context) {
      lost = gloo_detail::broken_peers(*context);
      // A connection can read as broken because of the collective's own failure (a peer that
      // gave up on it); the ranks that are really gone also closed their peer channel. Name
      // those when the channel can tell (else every broken connection's peer).
      if (lost.size() > 1 && channel) {
        const std::vector<int> closed = channel->closed_peers();
        std::vector<int> gone;
        for (int r : lost)
          if (std::find(closed.begin(), closed.end(), r) != closed.end()) gone.push_back(r);
        if (!gone.empty()) lost = gone;
      }
    }
    if (lost.empty())
      return std::make_exception_ptr(CollectiveError(w.name() + " failed: " + what));
    return std::make_exception_ptr(CollectiveError(
        w.name() + " failed: " + unreachable_phrase(lost) + " (exited, crashed or closed its connections: " + what + ")",
        lost));
  }
};

// ---------------------------------------------------------------------------------------------

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options)
    : rank_(rank), size_(size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("ProcessGroupGloo: rank " + std::to_string(rank) + " is out of range for " +
                                std::to_string(size) + " ranks (0 <= rank < size)");
  if (!store) throw std::invalid_argument("ProcessGroupGloo: store is null");
  timeout_ = options.timeout;
  state_ = std::make_shared<State>(rank, size);
  if (size > 1) {
    const gloo_detail::TransportChoice transport = gloo_detail::choose_transport();
    transport_description_ = transport.description;
    const std::string who = "ProcessGroupGloo rank " + std::to_string(rank) + " of " + std::to_string(size);
    try {
      // The n-th group a rank creates on this store meets the n-th group of every other rank, so
      // groups made one after another do not read each other's addresses.
      const int64_t n = store->add("gloo/groups_of_rank_" + std::to_string(rank), 1);
      gloo_detail::GlooStoreAdapter rendezvous(std::make_shared<PrefixStore>("gloo/" + std::to_string(n), store));
      const std::vector<int> descriptors_before = gloo_detail::open_descriptors();
      gloo_detail::ignore_sigpipe_if_default();
      auto device = gloo::transport::tcp::CreateDevice(transport.attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
      // Connecting is part of the rendezvous: bounded by the store's timeout. Collectives set
      // their own timeouts per call.
      context->setTimeout(store->timeout());
      context->connectFullMesh(rendezvous, device);
      gloo_detail::close_on_exec_since(descriptors_before);
      context->setTimeout(options.timeout);
      const size_t capacity = sizeof(ChannelHeader) + channel_payload_bytes(size);
      // The channel listens where gloo's transport does (the same interface reaches the peers).
      const gloo::transport::tcp::attr where = gloo::transport::tcp::CreateDeviceAttr(transport.attr);
      PrefixStore channel_store("gloo/" + std::to_string(n), store);
      // COLONY_SHM=0: TCP with every peer, also with those on this machine.
      const char* shm = std::getenv("COLONY_SHM");
      const bool shared_memory = shm == nullptr || std::string(shm) != "0";
      state_->channel = std::make_unique<comm_detail::PeerChannel>(
          channel_store, rank, size, where.ai_addr, where.ai_addrlen, capacity, store->timeout(), shared_memory);
      state_->context = std::move(context);
      // Whether all ranks share memory with all others, decided by all from the same answers.
      comm_detail::PeerChannel& channel = *state_->channel;
      channel.outgoing()[0] = channel.shared_memory_peers() == size - 1 ? 1 : 0;
      const auto answers = channel.exchange(1, Clock::now() + store->timeout(), /*poll_first=*/true);
      state_->all_shared_memory = std::all_of(answers.begin(), answers.end(), [](const uint8_t* a) { return a[0] == 1; });
    } catch (const TimeoutError& e) {
      throw TimeoutError(who + ": rendezvous did not complete within the store's timeout of " +
                         ms_str(store->timeout()) + " (is every rank started?): " + e.what());
    } catch (const std::exception& e) {
      throw CollectiveError(who + ": rendezvous failed (listening on " + transport_description_ + "): " + e.what());
    }
  } else {
    transport_description_ = "none (a group of one rank needs no transport)";
  }
  thread_ = std::thread([s = state_] { s->loop(); });
}

int ProcessGroupGloo::shared_memory_peers() const {
  return state_->channel ? state_->channel->shared_memory_peers() : 0;
}

ProcessGroupGloo::~ProcessGroupGloo() {
  std::vector<std::shared_ptr<QueuedWork>> never_ran;
  std::shared_ptr<QueuedWork> running;
  bool aborted;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
    for (auto& job : state_->queue) never_ran.push_back(job.work);
    state_->queue.clear();
    running = state_->running;
    aborted = !state_->abort_reason.empty();
  }
  state_->wakeup.signal();
  for (auto& w : never_ran)
    w->fail<CollectiveError>(w->name() + " never ran: its ProcessGroupGloo was destroyed first");

  // A healthy collective finishes in well under this; one stuck on a dead peer would keep us until
  // its timeout (minutes).
  const milliseconds grace = aborted ? milliseconds(200) : milliseconds(2000);
  bool exited;
  {
    std::unique_lock<std::mutex> lock(state_->mu);
    exited = state_->exited_cv.wait_for(lock, grace, [&] { return state_->thread_exited; });
  }
  if (exited) {
    thread_.join();
    return;
  }
  if (running) running->fail<CollectiveError>(running->name() + " was still running when its ProcessGroupGloo was destroyed");
  std::fprintf(stderr,
               "ProcessGroupGloo rank %d: the communication thread is stuck in %s (a peer is probably gone); "
               "detaching it so this process is not held up until the collective's timeout\n",
               rank_, running ? running->name().c_str() : "gloo");
  thread_.detach();
}

uint64_t ProcessGroupGloo::collectives_started() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->next_seq - 1;
}

void ProcessGroupGloo::abort(const std::string& reason) {
  std::vector<std::shared_ptr<QueuedWork>> victims;
  const std::string why = reason.empty() ? "abort() was called" : reason;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->abort_reason.empty()) return;
    state_->abort_reason = why;
    if (state_->running) victims.push_back(state_->running);
    for (auto& job : state_->queue) victims.push_back(job.work);
    state_->queue.clear();
  }
  state_->wakeup.signal();
  for (auto& w : victims) w->fail<CollectiveError>(w->name() + " aborted: " + why);
  // Frees a communication thread waiting for a peer's message (a dead peer's never comes).
  if (state_->channel) state_->channel->interrupt();
}

namespace {
milliseconds effective_timeout(const CollectiveOptions& opts, milliseconds group_timeout) {
  return opts.timeout.count() >= 0 ? opts.timeout : group_timeout;
}
}  // namespace

std::shared_ptr<Work> ProcessGroupGloo::allreduce(Tensor& tensor, ReduceOp op, const CollectiveOptions& opts) {
  if (tensor.defined() && tensor.is_cuda()) {
    Tensor host = gloo_detail::stage_to_host(tensor);
    return gloo_detail::copy_back_on_wait(allreduce(host, op, opts), {{tensor, host}});
  }
  check_tensor("allreduce", tensor, "tensor");
  check_reducible("allreduce", tensor.dtype());
  Fingerprint fp;
  fp.kind = static_cast<int32_t>(OpKind::kAllreduce);
  fp.numel = tensor.numel();
  fp.dtype = static_cast<int32_t>(tensor.dtype());
  fp.reduce_op = static_cast<int32_t>(op);
  const ReduceFn fn = gloo_detail::reduce_function(tensor.dtype(), op);
  const int world = size_;
  std::optional<ChannelData> channel_data;
  const size_t bytes = static_cast<size_t>(tensor.nbytes());
  // Every rank knows how the group decided (all_shared_memory), so all choose the same way.
  const bool shared_memory = state_->all_shared_memory;
  if (bytes > 0 && (shared_memory || (size_ == 2 && bytes <= kInlineAllreduceBytes))) {
    const size_t element = static_cast<size_t>(tensor.element_size());
    const auto* data = static_cast<const uint8_t*>(tensor.data_ptr_raw());
    channel_data = ChannelData{
        bytes, (shared_memory ? kSharedMemoryChunkBytes : kInlineAllreduceBytes) / element * element,
        [t = tensor, data](uint8_t* to, size_t offset, size_t length) { std::memcpy(to, data + offset, length); },
        [t = tensor, fn, average = op == ReduceOp::kAvg ? gloo_detail::sum_and_average_function(tensor.dtype()) : nullptr,
         world, element](const std::vector<const uint8_t*>& chunks, size_t offset, size_t length) {
          const size_t n = length / element;
          void* mine = static_cast<uint8_t*>(t.data_ptr_raw()) + offset;
          // Rank order; an average divides in the pass of the last sum.
          for (int r = 1; r < world; ++r) {
            const void* so_far = r == 1 ? chunks[0] : mine;
            if (average && r == world - 1) average(mine, so_far, chunks[r], n, world);
            else fn(mine, so_far, chunks[r], n);
          }
        }};
  }
  // The lambdas' copies of the handle keep the storage alive until the work completes.
  return state_->enqueue(fp, effective_timeout(opts, timeout_), [t = tensor, fn, op, world](const GlooContext& ctx, uint32_t tag, milliseconds timeout) {
    const size_t n = static_cast<size_t>(t.numel());
    if (n == 0) return;
    if (ctx) gloo_detail::allreduce_in_place(ctx, t.data_ptr_raw(), n, static_cast<size_t>(t.element_size()), fn, tag, timeout);
    if (op == ReduceOp::kAvg) gloo_detail::finish_average(t.data_ptr_raw(), n, t.dtype(), world);
  }, std::move(channel_data));
}

std::shared_ptr<Work> ProcessGroupGloo::broadcast(Tensor& tensor, int root, const CollectiveOptions& opts) {
  if (tensor.defined() && tensor.is_cuda()) {
    Tensor host = gloo_detail::stage_to_host(tensor);
    return gloo_detail::copy_back_on_wait(broadcast(host, root, opts), {{tensor, host}});
  }
  check_tensor("broadcast", tensor, "tensor");
  if (root < 0 || root >= size_)
    throw std::invalid_argument("broadcast: root " + std::to_string(root) + " is out of range for a group of " +
                                std::to_string(size_) + " ranks");
  Fingerprint fp;
  fp.kind = static_cast<int32_t>(OpKind::kBroadcast);
  fp.numel = tensor.numel();
  fp.dtype = static_cast<int32_t>(tensor.dtype());
  fp.root = root;
  return state_->enqueue(fp, effective_timeout(opts, timeout_), [t = tensor, root](const GlooContext& ctx, uint32_t tag, milliseconds timeout) {
    if (ctx && t.nbytes() > 0)
      gloo_detail::broadcast_in_place(ctx, t.data_ptr_raw(), static_cast<size_t>(t.nbytes()), root, tag, timeout);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::allgather(std::vector<Tensor>& outputs, const Tensor& input,
                                                  const CollectiveOptions& opts) {
  if (input.defined() && input.is_cuda()) {
    std::vector<Tensor> host_outputs;
    std::vector<std::pair<Tensor, Tensor>> results;
    for (const Tensor& o : outputs) {
      host_outputs.push_back(o.defined() && o.is_cuda() ? raw::empty(o.sizes(), TensorOptions(o.dtype()).pinned_memory(true)) : o);
      if (o.defined() && o.is_cuda()) results.emplace_back(o, host_outputs.back());
    }
    return gloo_detail::copy_back_on_wait(allgather(host_outputs, gloo_detail::stage_to_host(input), opts),
                                          std::move(results));
  }
  check_tensor("allgather", input, "input");
  if (static_cast<int>(outputs.size()) != size_)
    throw std::invalid_argument("allgather: expected one output per rank (" + std::to_string(size_) + "), got " +
                                std::to_string(outputs.size()));
  for (int r = 0; r < size_; ++r) check_like("allgather", outputs[r], "outputs[" + std::to_string(r) + "]", input, "input");
  Fingerprint fp;
  fp.kind = static_cast<int32_t>(OpKind::kAllgather);
  fp.numel = input.numel();
  fp.dtype = static_cast<int32_t>(input.dtype());
  const size_t nb = static_cast<size_t>(input.nbytes());
  // Outputs that are consecutive pieces of one buffer (a flat tensor split per rank) are gathered
  // into directly; any others go through one staging buffer.
  bool consecutive = true;
  auto* base = static_cast<uint8_t*>(outputs[0].data_ptr_raw());
  for (int r = 0; r < size_; ++r)
    consecutive = consecutive && static_cast<uint8_t*>(outputs[r].data_ptr_raw()) == base + r * nb;
  const int me = rank_;
  std::optional<ChannelData> channel_data;
  if (nb > 0 && state_->all_shared_memory) {
    // Each rank writes its input once into its outbox; every rank copies each rank's piece out.
    // Nothing is summed, so no chunk has to stay in cache: as much a message as the channel holds
    // (2 MiB in a group of two), the fewest exchanges, each a point where a rank waits for its
    // peers (ZeRO's all-gather of the char GPT's second bucket, 1.2 MB a rank: 1 instead of 5).
    const auto* data = static_cast<const uint8_t*>(input.data_ptr_raw());
    std::vector<uint8_t*> to;
    for (const Tensor& o : outputs) to.push_back(static_cast<uint8_t*>(o.data_ptr_raw()));
    const size_t element = static_cast<size_t>(input.element_size());
    channel_data = ChannelData{
        nb, channel_payload_bytes(size_) / element * element,
        [in = input, data](uint8_t* dst, size_t offset, size_t length) { std::memcpy(dst, data + offset, length); },
        [outs = outputs, to, data](const std::vector<const uint8_t*>& chunks, size_t offset, size_t length) {
          // In place (this rank's output is its input, as ZeRO's all-gather into DDP's flat
          // parameters): its own block is there already.
          for (size_t r = 0; r < to.size(); ++r)
            if (to[r] != data) std::memcpy(to[r] + offset, chunks[r], length);
        }};
  }
  return state_->enqueue(fp, effective_timeout(opts, timeout_),
                         [in = input, outs = outputs, nb, consecutive, me](const GlooContext& ctx, uint32_t tag,
                                                                           milliseconds timeout) {
    if (nb == 0) return;
    const int p = static_cast<int>(outs.size());
    std::vector<uint8_t> staging;
    uint8_t* block = static_cast<uint8_t*>(outs[0].data_ptr_raw());
    if (!consecutive) {
      staging.resize(nb * p);
      block = staging.data();
    }
    if (block + me * nb != in.data_ptr_raw()) std::memmove(block + me * nb, in.data_ptr_raw(), nb);
    if (ctx) gloo_detail::allgather_in_place(ctx, block, nb * p, tag, timeout);
    if (!consecutive)
      for (int r = 0; r < p; ++r) std::memcpy(outs[r].data_ptr_raw(), block + r * nb, nb);
  }, std::move(channel_data));
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                                       const CollectiveOptions& opts) {
  if (output.defined() && output.is_cuda()) {
    std::vector<Tensor> host_inputs;
    for (const Tensor& i : inputs) host_inputs.push_back(i.defined() && i.is_cuda() ? gloo_detail::stage_to_host(i) : i);
    Tensor host = raw::empty(output.sizes(), TensorOptions(output.dtype()).pinned_memory(true));
    return gloo_detail::copy_back_on_wait(reduce_scatter(host, host_inputs, op, opts), {{output, host}});
  }
  check_tensor("reduce_scatter", output, "output");
  check_reducible("reduce_scatter", output.dtype());
  if (static_cast<int>(inputs.size()) != size_)
    throw std::invalid_argument("reduce_scatter: expected one input per rank (" + std::to_string(size_) + "), got " +
                                std::to_string(inputs.size()));
  for (int r = 0; r < size_; ++r)
    check_like("reduce_scatter", inputs[r], "inputs[" + std::to_string(r) + "]", output, "output");
  Fingerprint fp;
  fp.kind = static_cast<int32_t>(OpKind::kReduceScatter);
  fp.numel = output.numel();
  fp.dtype = static_cast<int32_t>(output.dtype());
  fp.reduce_op = static_cast<int32_t>(op);
  const ReduceFn fn = gloo_detail::reduce_function(output.dtype(), op);
  const int world = size_;
  std::optional<ChannelData> channel_data;
  const size_t nb = static_cast<size_t>(output.nbytes());
  if (nb > 0 && state_->all_shared_memory) {
    // The stream is, for each piece [o, o + L) of the output, every rank's block of the input at
    // [o, o + L) one after another (world x L bytes): every rank reads its own block of each
    // rank's chunk and sums them in rank order, as the shared-memory allreduce does.
    std::vector<const uint8_t*> from;
    for (const Tensor& t : inputs) from.push_back(static_cast<const uint8_t*>(t.data_ptr_raw()));
    const size_t element = static_cast<size_t>(output.element_size());
    const size_t unit = element * static_cast<size_t>(world);
    const size_t me = static_cast<size_t>(rank_);
    channel_data = ChannelData{
        nb * world, kSharedMemoryChunkBytes / unit * unit,
        [ins = inputs, from](uint8_t* to, size_t offset, size_t length) {
          const size_t piece = length / from.size();
          for (size_t q = 0; q < from.size(); ++q) std::memcpy(to + q * piece, from[q] + offset / from.size(), piece);
        },
        [out = output, fn, me, element,
         average = op == ReduceOp::kAvg ? gloo_detail::sum_and_average_function(output.dtype()) : nullptr,
         world](const std::vector<const uint8_t*>& chunks, size_t offset, size_t length) {
          const size_t piece = length / world;
          const size_t n = piece / element;
          void* mine = static_cast<uint8_t*>(out.data_ptr_raw()) + offset / world;
          for (int r = 1; r < world; ++r) {
            const void* so_far = r == 1 ? chunks[0] + me * piece : mine;
            if (average && r == world - 1) average(mine, so_far, chunks[r] + me * piece, n, world);
            else fn(mine, so_far, chunks[r] + me * piece, n);
          }
        }};
  }
  // The ring's watch for a lost peer (algorithms.h); the channel lives as long as the group.
  const comm_detail::PeerChannel* channel = state_->channel.get();
  return state_->enqueue(fp, effective_timeout(opts, timeout_),
                         [out = output, ins = inputs, fn, op, world, channel](const GlooContext& ctx, uint32_t tag,
                                                                               milliseconds timeout) {
    const size_t n = static_cast<size_t>(out.numel());
    if (n == 0) return;
    if (ctx) {
      std::vector<const void*> ptrs;
      for (const auto& t : ins) ptrs.push_back(t.data_ptr_raw());
      gloo_detail::ring_reduce_scatter(ctx, ptrs, out.data_ptr_raw(), n, static_cast<size_t>(out.element_size()), fn, tag,
                                       timeout, [channel] { return channel && !channel->closed_peers().empty(); });
    } else if (ins[0].data_ptr_raw() != out.data_ptr_raw()) {
      std::memcpy(out.data_ptr_raw(), ins[0].data_ptr_raw(), static_cast<size_t>(out.nbytes()));
    }
    if (op == ReduceOp::kAvg) gloo_detail::finish_average(out.data_ptr_raw(), n, out.dtype(), world);
  }, std::move(channel_data));
}

std::shared_ptr<Work> ProcessGroupGloo::barrier(const CollectiveOptions& opts) {
  Fingerprint fp;
  fp.kind = static_cast<int32_t>(OpKind::kBarrier);
  // The fingerprint exchange is an allgather: no rank leaves it before every rank has entered.
  return state_->enqueue(fp, effective_timeout(opts, timeout_), [](const GlooContext&, uint32_t, milliseconds) {});
}

}  // namespace colony::dist
