// A rank's outbox in POSIX shared memory, for the peer channel between ranks on one machine.
// Internal to the backends (peer_channel.h says how the channel uses it).
//
// Why: over TCP on loopback a 242 KiB message costs a copy into the kernel, another out of it,
// and the socket calls of both ranks (0.13 ms each way for LeNet's gradients on the 2-core VM,
// a twentieth of a step). From an outbox the peer reads the message where the sender wrote it:
// one copy in, none out, no system call on the way while both ranks are awake.
//
// The outbox has two slots, message k in slot k % 2, so no acknowledgement is needed: a rank
// only writes message k + 2 after it has received every peer's message k + 1, which each peer
// sends only once it is done reading message k (the channel's messages stay valid until the
// next exchange).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace colony::dist::comm_detail {

class SharedOutbox {
 public:
  // Creates this rank's outbox of two `capacity`-byte slots, its pages reserved at once so a
  // full /dev/shm fails here (std::runtime_error) and never later with SIGBUS. `secret` goes
  // into it so a peer can tell it opened the right one.
  static std::unique_ptr<SharedOutbox> create(size_t capacity, uint64_t secret);
  // Maps a peer's outbox read-only; null when `name` does not open here (the peer is on another
  // machine, or /dev/shm is not shared) or is not an outbox of this capacity and secret.
  static std::unique_ptr<SharedOutbox> open(const std::string& name, size_t capacity, uint64_t secret);

  ~SharedOutbox();
  SharedOutbox(const SharedOutbox&) = delete;
  SharedOutbox& operator=(const SharedOutbox&) = delete;

  // The name a peer opens ("/colony-<job>-<pid>-<random>", shm_names.h), until unlink().
  const std::string& name() const { return name_; }
  // Removes the name (the owner, once every peer has opened it or declined): mappings stay, and
  // nothing is left in /dev/shm when the process ends, however it ends.
  void unlink();

  // Where message number `message` (1, 2, ...) is written and read.
  uint8_t* slot(uint64_t message) { return base_ + kSlotsOffset + (message % 2) * capacity_; }
  const uint8_t* slot(uint64_t message) const { return base_ + kSlotsOffset + (message % 2) * capacity_; }

  // Owner: message `message`, `length` bytes already in its slot, is complete.
  void publish(uint64_t message, uint64_t length);
  // How many messages have been published; a message's length, once it is.
  uint64_t published() const { return control().published.load(std::memory_order_seq_cst); }
  uint64_t length(uint64_t message) const { return control().length[message % 2]; }

  // Owner: about to sleep waiting for peers (they then ring its doorbell after publishing).
  // Sequentially consistent with publish(), so either the sleeper sees a peer's new message when
  // it checks after setting this, or the peer sees this and rings.
  void set_sleeping(bool sleeping) { mutable_control().sleeping.store(sleeping ? 1 : 0, std::memory_order_seq_cst); }
  bool sleeping() const { return control().sleeping.load(std::memory_order_seq_cst) != 0; }

 private:
  struct Control {
    uint64_t magic;
    uint64_t secret;
    uint64_t capacity;
    std::atomic<uint64_t> published;
    std::atomic<uint32_t> sleeping;
    uint64_t length[2];
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
                "shared-memory atomics must be lock-free to work across processes");
  static constexpr size_t kSlotsOffset = 4096;

  SharedOutbox(std::string name, uint8_t* base, size_t mapped, size_t capacity, bool owner)
      : name_(std::move(name)), base_(base), mapped_(mapped), capacity_(capacity), owner_(owner) {}
  const Control& control() const { return *reinterpret_cast<const Control*>(base_); }
  Control& mutable_control() { return *reinterpret_cast<Control*>(base_); }

  std::string name_;
  uint8_t* base_;
  size_t mapped_;
  size_t capacity_;
  bool owner_;
  bool linked_ = true;
};

}  // namespace colony::dist::comm_detail
