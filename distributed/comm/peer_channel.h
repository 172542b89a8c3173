// A standing lane to every peer for the one message each rank sends every peer at the start of
// each collective (its fingerprint, and the data of an allreduce that travels on the channel:
// a small one in a group of two, any one in chunks when all ranks share memory).
// Internal to the backends.
//
// Why its own TCP connections rather than gloo's: gloo delivers every received byte through its
// socket thread, which then wakes the thread waiting for the message. On a loaded machine that
// socket thread first has to be scheduled, often on the core a peer's computation occupies:
// measured on the 2-core VM during 2-rank LeNet training, it waited 0.8 ms on average per wake-up
// (up to 6 ms), and a tenth of the steps' all-reduces took over 3 ms after both ranks had sent.
// Here the thread that needs the message reads it from the socket itself, so no other thread has
// to run for it to arrive; and when that thread is one that would otherwise only sleep (a wait()
// that runs the collective inline), it polls the socket for a short while instead of sleeping, so
// not even its own wake-up is on the path.
//
// Messages from a peer arrive in the order sent (one TCP connection per pair of ranks), and every
// rank sends every peer exactly one message per collective, so the k-th message from a peer
// always belongs to the k-th collective. Each message is framed by its 8-byte length.
//
// Ranks on one machine skip the sockets for the messages themselves: each rank writes its message
// once into its outbox in shared memory (shm_outbox.h) and its local peers read it
// there. Their TCP connection stays, to tell a peer that crashed (the kernel closes it) and as the
// doorbell that wakes a peer asleep in poll(2) (one byte, only when the peer said it sleeps).
// A pair uses shared memory when both ranks could open each other's outbox, else TCP; each rank
// can refuse it (COLONY_SHM=0 for the process group).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/comm/shm_outbox.h"
#include "distributed/store/store.h"

namespace colony::dist::comm_detail {

// The connection to `rank` failed (it exited, crashed or closed it).
class PeerLostError : public std::runtime_error {
 public:
  PeerLostError(int rank, const std::string& what) : std::runtime_error(what), rank_(rank) {}
  int rank() const { return rank_; }

 private:
  int rank_;
};

class PeerChannel {
 public:
  using Clock = std::chrono::steady_clock;  // DeadlineClock (deadline.h)

  // Connects this rank to every other one: each listens on `address` (the one gloo's transport
  // uses, port chosen by the kernel) and publishes it with a random secret on `store` (whose keys
  // are this group's alone); the higher rank of each pair connects and presents the secret, so a
  // process that cannot read the job's store cannot join. Bounded by `connect_timeout`.
  // `capacity`: the largest message, the same on every rank.
  // `shared_memory`: offer peers on this machine an outbox (false: TCP with every peer).
  PeerChannel(Store& store, int rank, int size, const sockaddr_storage& address, socklen_t address_len,
              size_t capacity, std::chrono::milliseconds connect_timeout, bool shared_memory = true);
  ~PeerChannel();
  PeerChannel(const PeerChannel&) = delete;
  PeerChannel& operator=(const PeerChannel&) = delete;

  size_t capacity() const { return capacity_; }

  // How many peers this rank exchanges messages with through shared memory.
  int shared_memory_peers() const;

  // Where the caller writes this rank's next message (capacity() bytes).
  uint8_t* outgoing() { return outbox_ ? outbox_->slot(exchanges_ + 1) : outgoing_.data(); }

  // Sends the first `bytes` of outgoing() to every peer and receives every peer's next message.
  // Returns, rank-indexed, the start of each rank's message (this rank's: where outgoing() pointed
  // before the call; afterwards it points at the next message's place); all stay valid until the
  // next exchange. Its length is for the caller to encode in the message.
  // `poll_first`: keep polling the sockets for a while before sleeping, for a caller that has
  // nothing else to do (not the communication thread, which would take the core from the
  // computation it overlaps). Throws PeerLostError, a std::runtime_error that says "timed out"
  // at the deadline, or one that says "interrupted" after interrupt().
  std::vector<const uint8_t*> exchange(size_t bytes, Clock::time_point deadline, bool poll_first);

  // The peers whose connection the kernel saw closed or reset (a process that exited or crashed
  // closes every socket; a live rank keeps this one open for as long as its group exists, even
  // after a failed collective). Does not read or wait. Safe while no exchange runs.
  std::vector<int> closed_peers() const;

  // Makes an exchange that is waiting return at once with an error (abort). The channel is
  // unusable afterwards, as the group is. Safe from any thread.
  void interrupt();

 private:
  struct Peer {
    int fd = -1;
    std::vector<uint8_t> incoming;          // this exchange's message from the peer, over TCP
    std::unique_ptr<SharedOutbox> outbox;   // the peer's, when the pair uses shared memory
  };

  void connect_all(Store& store, const sockaddr_storage& address, socklen_t address_len,
                   std::chrono::milliseconds timeout, uint64_t secret);
  // Reads whatever a shared-memory peer sent on its socket (doorbells); false once the peer
  // closed or reset the connection.
  bool drain_doorbells(int rank);

  const int rank_;
  const int size_;
  const size_t capacity_;
  std::unique_ptr<SharedOutbox> outbox_;  // this rank's, when some peer uses it
  std::vector<uint8_t> outgoing_;          // else the one outgoing message
  uint64_t exchanges_ = 0;                 // begun so far: the next one sends message exchanges_ + 1
  std::vector<Peer> peers_;  // rank-indexed; this rank's entry is unused
  int wake_fd_ = -1;         // an eventfd: interrupt() makes it readable
  std::atomic<bool> interrupted_{false};
};

}  // namespace colony::dist::comm_detail
