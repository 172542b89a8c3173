#include "distributed/gloo/algorithms.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "distributed/comm/deadline.h"

namespace colony::dist::gloo_detail {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using comm_detail::remaining;

// The slot prefix of our own reduce-scatter; gloo's collectives use 0x01..0x08, and the tag in the
// lower bits keeps consecutive collectives apart.
constexpr uint8_t kReduceScatterSlotPrefix = 0x7d;

void wait_both(::gloo::transport::UnboundBuffer* recv, ::gloo::transport::UnboundBuffer* send,
               Clock::time_point deadline) {
  // waitRecv/waitSend return false only when aborted through abortWait*, which nothing here calls.
  if (!recv->waitRecv(remaining(deadline)) || !send->waitSend(remaining(deadline)))
    throw std::runtime_error("a transfer was aborted");
}

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
// last step rank r holds the full reduction of chunk r. Two scratch buffers alternate, so a send
// never reads memory that is being received into.
void ring_reduce_scatter(const GlooContext& ctx, const std::vector<const void*>& in, void* out, size_t n,
                         size_t element_size, ReduceFn fn, uint32_t tag, milliseconds timeout) {
  const int p = ctx->size;
  const int r = ctx->rank;
  auto wrap = [p](int k) { return ((k % p) + p) % p; };
  const size_t bytes = n * element_size;
  const auto deadline = Clock::now() + timeout;
  const uint64_t slot = ::gloo::Slot::build(kReduceScatterSlotPrefix, tag);
  std::vector<uint8_t> scratch_a(bytes), scratch_b(bytes);
  auto own = ctx->createUnboundBuffer(const_cast<void*>(in[wrap(r - 1)]), bytes);  // only ever sent
  auto a = ctx->createUnboundBuffer(scratch_a.data(), bytes);
  auto b = ctx->createUnboundBuffer(scratch_b.data(), bytes);
  ::gloo::transport::UnboundBuffer* send = own.get();
  ::gloo::transport::UnboundBuffer* recv = a.get();
  for (int step = 0; step < p - 1; ++step) {
    send->send(wrap(r + 1), slot);
    recv->recv(wrap(r - 1), slot);
    wait_both(recv, send, deadline);
    void* dst = step == p - 2 ? out : recv->ptr;
    fn(dst, recv->ptr, in[wrap(r - step - 2)], n);
    ::gloo::transport::UnboundBuffer* spare = send == own.get() ? b.get() : send;
    send = recv;
    recv = spare;
  }
}

}  // namespace colony::dist::gloo_detail
