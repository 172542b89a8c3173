#include "distributed/process_group_gloo_channel.h"
#include "distributed/process_group_gloo_deadline.h"

#include <gloo/types.h>

#include <algorithm>
#include <stdexcept>

namespace colony::dist::gloo_detail {
namespace {

// gloo's collectives use slot prefixes 0x01..0x08, our reduce-scatter 0x7d with the collective's tag;
// the lane is one fixed slot of its own.
constexpr uint8_t kChannelSlotPrefix = 0x7b;
const uint64_t kChannelSlot = ::gloo::Slot::build(kChannelSlotPrefix, 0);

}  // namespace

PeerChannel::PeerChannel(std::shared_ptr<::gloo::Context> context, size_t capacity)
    : context_(std::move(context)), capacity_(capacity), outgoing_(capacity), peers_(context_->size) {
  send_buffer_ = context_->createUnboundBuffer(outgoing_.data(), capacity_);
  for (int r = 0; r < context_->size; ++r) {
    if (r == context_->rank) continue;
    Peer& p = peers_[r];
    for (int i = 0; i < 2; ++i) {
      p.staging[i].resize(capacity_);
      p.buffer[i] = context_->createUnboundBuffer(p.staging[i].data(), capacity_);
    }
    p.buffer[0]->recv(r, kChannelSlot, 0, capacity_);
  }
}

// A receive still posted into a buffer destroyed here is harmless: gloo's connection holds only
// a weak reference to it, and no peer sends on the lane once the group is going away.
PeerChannel::~PeerChannel() = default;

std::vector<const uint8_t*> PeerChannel::exchange(size_t bytes, Clock::time_point deadline) {
  if (bytes > capacity_)
    throw std::logic_error("PeerChannel: a message of " + std::to_string(bytes) + " bytes exceeds the capacity of " +
                           std::to_string(capacity_));
  const int me = context_->rank;
  const int size = context_->size;
  std::vector<const uint8_t*> messages(size, nullptr);
  messages[me] = outgoing_.data();
  for (int r = 0; r < size; ++r)
    if (r != me && !peers_[r].post_error.empty()) throw std::runtime_error(peers_[r].post_error);
  for (int r = 0; r < size; ++r)
    if (r != me) send_buffer_->send(r, kChannelSlot, 0, bytes);
  for (int r = 0; r < size; ++r) {
    if (r == me) continue;
    Peer& p = peers_[r];
    const int cur = p.next;
    // waitRecv returns false only when interrupt() called abortWaitRecv.
    if (!p.buffer[cur]->waitRecv(remaining(deadline))) throw std::runtime_error("the exchange was interrupted");
    // The peer may send its next message as soon as it has ours, before the caller has read this
    // one: it lands in the other buffer.
    p.next = 1 - cur;
    messages[r] = p.staging[cur].data();
    try {
      p.buffer[p.next]->recv(r, kChannelSlot, 0, capacity_);
    } catch (const std::exception& e) {
      // This collective is complete; the peer may simply have finished its last one and exited.
      // Only another exchange with it is impossible, and says why.
      p.post_error = e.what();
    }
  }
  for (int r = 0; r < size; ++r)
    if (r != me && !send_buffer_->waitSend(remaining(deadline))) throw std::runtime_error("the exchange was interrupted");
  return messages;
}

void PeerChannel::interrupt() {
  send_buffer_->abortWaitSend();
  for (Peer& p : peers_)
    for (auto& b : p.buffer)
      if (b) b->abortWaitRecv();
}

}  // namespace colony::dist::gloo_detail
