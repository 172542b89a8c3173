#include "distributed/gloo/algorithms.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "distributed/comm/deadline.h"

namespace colony::dist::gloo_detail {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using comm_detail::remaining;

// The slot prefix of our own reduce-scatter; gloo's collectives use 0x01..0x08, and the tag in the
// lower bits keeps consecutive collectives apart.
constexpr uint8_t kReduceScatterSlotPrefix = 0x7d;

// The ring reduce-scatter's segment: small enough that a step's first segment is forwarded soon
// after it started, large enough that a segment's fixed cost (a message header, a wake-up of
// gloo's socket thread) stays small; gloo's own ring allreduce caps its segments at 1 MiB for the
// same reason. allreduce_bench's reduce_scatter rows (distributed/README.md) are measured with it.
constexpr size_t kRingSegmentBytes = 256 * 1024;

// gloo sizes its buffers by sizeof(T) and leaves the arithmetic to our ReduceFn, so any type of
// the right width will do.
template <typename T>
void allreduce_as(const GlooContext& ctx, void* data, size_t n, ReduceFn fn, uint32_t tag, milliseconds timeout) {
  ::gloo::AllreduceOptions o(ctx);
  o.setAlgorithm(::gloo::AllreduceOptions::Algorithm::RING);
  o.setOutput(static_cast<T*>(data), n);  // no input: in place
  o.setReduceFunction(fn);
  o.setTag(tag);
  o.setTimeout(timeout);
  ::gloo::allreduce(o);
}

// While a ring runs: polls `lost` every 20 ms and, once it has said a peer is gone for 200 ms,
// aborts every wait on the buffers (gloo's abortWaitRecv/abortWaitSend: a wait in progress, or the
// next one, returns false). Stops, and joins its thread, when destroyed.
class LostPeerWatch {
 public:
  LostPeerWatch(std::function<bool()> lost, std::vector<::gloo::transport::UnboundBuffer*> buffers)
      : lost_(std::move(lost)), buffers_(std::move(buffers)) {
    if (lost_) thread_ = std::thread([this] { run(); });
  }
  ~LostPeerWatch() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  LostPeerWatch(const LostPeerWatch&) = delete;
  LostPeerWatch& operator=(const LostPeerWatch&) = delete;
  bool fired() const { return fired_.load(); }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    int polls_lost = 0;
    while (!cv_.wait_for(lock, milliseconds(20), [this] { return stop_; })) {
      polls_lost = lost_() ? polls_lost + 1 : 0;
      if (polls_lost < 10) continue;
      fired_.store(true);
      for (auto* b : buffers_) {
        b->abortWaitRecv();
        b->abortWaitSend();
      }
      return;
    }
  }

  std::function<bool()> lost_;
  std::vector<::gloo::transport::UnboundBuffer*> buffers_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace

void allreduce_in_place(const GlooContext& ctx, void* data, size_t n, size_t element_size, ReduceFn fn,
                        uint32_t tag, milliseconds timeout) {
  switch (element_size) {
    case 1: return allreduce_as<uint8_t>(ctx, data, n, fn, tag, timeout);
    case 2: return allreduce_as<uint16_t>(ctx, data, n, fn, tag, timeout);
    case 4: return allreduce_as<uint32_t>(ctx, data, n, fn, tag, timeout);
    case 8: return allreduce_as<uint64_t>(ctx, data, n, fn, tag, timeout);
  }
  throw std::logic_error("allreduce: unexpected element size " + std::to_string(element_size));
}

void broadcast_in_place(const GlooContext& ctx, void* data, size_t bytes, int root, uint32_t tag,
                        milliseconds timeout) {
  ::gloo::BroadcastOptions o(ctx);
  o.setOutput(static_cast<uint8_t*>(data), bytes);  // no input: the root sends from the output
  o.setRoot(root);
  o.setTag(tag);
  o.setTimeout(timeout);
  ::gloo::broadcast(o);
}

void allgather_in_place(const GlooContext& ctx, void* data, size_t bytes, uint32_t tag, milliseconds timeout) {
  ::gloo::AllgatherOptions o(ctx);
  o.setOutput(static_cast<uint8_t*>(data), bytes);  // no input: this rank's block is already there
  o.setTag(tag);
  o.setTimeout(timeout);
  ::gloo::allgather(o);
}

// In p-1 steps each rank passes a partial reduction of one chunk to its right neighbour, adding
// its own contribution to what arrives from the left: at step s rank r receives chunk r-s-2 and
// sends on what it finished the step before (at step 0, its own input for chunk r-1). After the
// last step rank r holds the full reduction of chunk r.
//
// Each chunk travels in segments, all of a step's receives posted at once: a segment is reduced
// the moment it has arrived and forwarded at once, while the next ones are still on the wire, so
// sending overlaps reducing within a step and across steps. Two scratch buffers alternate
// (step s receives into buffer s % 2); before a buffer receives again, the sends out of it (posted
// two steps earlier) are waited for, so a send never reads memory being received into.
void ring_reduce_scatter(const GlooContext& ctx, const std::vector<const void*>& in, void* out, size_t n,
                         size_t element_size, ReduceFn fn, uint32_t tag, milliseconds timeout,
                         std::function<bool()> peer_lost) {
  const int p = ctx->size;
  const int r = ctx->rank;
  auto wrap = [p](int k) { return ((k % p) + p) % p; };
  const size_t bytes = n * element_size;
  const auto deadline = Clock::now() + timeout;
  const uint64_t slot = ::gloo::Slot::build(kReduceScatterSlotPrefix, tag);
  const size_t segment = std::max<size_t>(1, kRingSegmentBytes / element_size) * element_size;
  const int right = wrap(r + 1);
  const int left = wrap(r - 1);
  std::vector<uint8_t> scratch[2] = {std::vector<uint8_t>(bytes), std::vector<uint8_t>(bytes)};
  auto own = ctx->createUnboundBuffer(const_cast<void*>(in[left]), bytes);  // only ever sent
  std::unique_ptr<::gloo::transport::UnboundBuffer> buffers[2] = {
      ctx->createUnboundBuffer(scratch[0].data(), bytes), ctx->createUnboundBuffer(scratch[1].data(), bytes)};
  size_t sends_out_of[2] = {0, 0};
  size_t own_sends = 0;
  // Declared after the buffers, so it stops (and no longer touches them) before they go.
  LostPeerWatch watch(std::move(peer_lost), {own.get(), buffers[0].get(), buffers[1].get()});
  auto aborted = [&watch] {
    return std::runtime_error(watch.fired() ? "a peer was lost (its connection closed) while the ring ran"
                                            : "a transfer was aborted");
  };
  auto wait_sends = [&](::gloo::transport::UnboundBuffer* b, size_t& count) {
    for (; count > 0; --count)
      if (!b->waitSend(remaining(deadline))) throw aborted();
  };
  for (size_t offset = 0; offset < bytes; offset += segment, ++own_sends)
    own->send(right, slot, offset, std::min(segment, bytes - offset));
  for (int step = 0; step < p - 1; ++step) {
    ::gloo::transport::UnboundBuffer* recv = buffers[step % 2].get();
    wait_sends(recv, sends_out_of[step % 2]);
    for (size_t offset = 0; offset < bytes; offset += segment)
      recv->recv(left, slot, offset, std::min(segment, bytes - offset));
    const auto* mine = static_cast<const uint8_t*>(in[wrap(r - step - 2)]);
    const bool last = step == p - 2;
    for (size_t offset = 0; offset < bytes; offset += segment) {
      const size_t length = std::min(segment, bytes - offset);
      // Receives on one slot from one peer complete in the order posted.
      if (!recv->waitRecv(remaining(deadline))) throw aborted();
      uint8_t* arrived = static_cast<uint8_t*>(recv->ptr) + offset;
      fn(last ? static_cast<uint8_t*>(out) + offset : arrived, arrived, mine + offset, length / element_size);
      if (!last) {
        recv->send(right, slot, offset, length);
        ++sends_out_of[step % 2];
      }
    }
  }
  wait_sends(own.get(), own_sends);
  for (int i = 0; i < 2; ++i) wait_sends(buffers[i].get(), sends_out_of[i]);
}

}  // namespace colony::dist::gloo_detail
