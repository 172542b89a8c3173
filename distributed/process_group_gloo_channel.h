// A standing lane to every peer for the one message each rank sends every peer at the start of
// each collective (its fingerprint, and for a small two-rank allreduce the data itself).
// Internal to the Gloo backend.
//
// Why: gloo's unbound buffers only move data once the receiver has announced "ready to receive",
// so a plain send/recv costs a round trip of notifications, each handled by the peer's socket
// thread. On a loaded machine that thread first has to be scheduled on a core the peer's
// computation occupies, and one such round trip can cost more than the transfer. Here every rank
// keeps a receive posted for the next message from each peer (two staging buffers per peer,
// alternating, on one fixed slot), so the announcement is long done when the data is sent: the
// sender writes straight into the socket and the receiver only waits for the bytes.
//
// Messages on the lane arrive in the order they were sent (one slot, one TCP connection per
// peer), and every rank sends every peer exactly one message per collective, so the k-th message
// from a peer always belongs to the k-th collective.
#pragma once

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace colony::dist::gloo_detail {

class PeerChannel {
 public:
  using Clock = std::chrono::steady_clock;  // DeadlineClock (process_group_gloo_deadline.h)

  // Posts the first receive from every peer. `capacity`: the largest message, the same on every
  // rank (a larger one on a peer would not fit the buffer posted for it).
  PeerChannel(std::shared_ptr<::gloo::Context> context, size_t capacity);
  ~PeerChannel();
  PeerChannel(const PeerChannel&) = delete;
  PeerChannel& operator=(const PeerChannel&) = delete;

  size_t capacity() const { return capacity_; }

  // Where the caller writes this rank's next message (capacity() bytes).
  uint8_t* outgoing() { return outgoing_.data(); }

  // Sends the first `bytes` of outgoing() to every peer and receives every peer's next message.
  // Returns, rank-indexed, the start of each rank's message (this rank's: outgoing()); a peer's
  // stays valid until the next exchange. Its length is for the caller to encode in the message.
  // Throws what gloo throws on a timeout or a lost peer; a std::runtime_error if interrupt() was
  // called.
  std::vector<const uint8_t*> exchange(size_t bytes, Clock::time_point deadline);

  // Makes an exchange that is waiting return at once with an error (abort). The channel is
  // unusable afterwards, as the group is.
  void interrupt();

 private:
  struct Peer {
    std::vector<uint8_t> staging[2];
    std::unique_ptr<::gloo::transport::UnboundBuffer> buffer[2];
    int next = 0;  // the buffer the next message from this peer lands in
    std::string post_error;  // why the receive for the next message could not be posted
  };

  std::shared_ptr<::gloo::Context> context_;
  const size_t capacity_;
  std::vector<uint8_t> outgoing_;
  std::unique_ptr<::gloo::transport::UnboundBuffer> send_buffer_;
  std::vector<Peer> peers_;  // rank-indexed; this rank's entry is unused
};

}  // namespace colony::dist::gloo_detail
