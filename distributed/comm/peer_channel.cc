#include "distributed/comm/peer_channel.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

namespace colony::dist::comm_detail {
namespace {

using std::chrono::milliseconds;

// How long a caller with nothing else to do polls the sockets before it sleeps in poll(2). The
// ranks of a data-parallel step usually finish backward within a millisecond or two of each
// other; waking from poll(2) costs a scheduler round trip that on a loaded VM took milliseconds.
constexpr auto kPollBeforeSleeping = std::chrono::microseconds(2000);

constexpr uint64_t kHelloMagic = 0x436f6c6f6e794348ULL;  // "ColonyCH"

// The connecting rank's introduction, and the accepting rank's answer.
struct Hello {
  uint64_t magic;
  uint64_t secret;         // the one the accepting rank published
  int32_t rank;            // of the connecting rank
  int32_t size;
  uint64_t outbox_secret;  // the connecting rank's own, which its outbox carries
  uint32_t mapped;         // 1: the connecting rank opened the accepting rank's outbox
  char outbox[52];         // the connecting rank's outbox, or ""
};
struct Welcome {
  uint64_t magic;
  uint32_t mapped;  // 1: the accepting rank opened the connecting rank's outbox
  uint32_t unused;
};

std::string errno_str() { return std::strerror(errno); }

constexpr const char* kClosed = "it closed the connection: exited or crashed";

PeerLostError lost(int rank, const std::string& why) {
  return PeerLostError(rank, "the connection to rank " + std::to_string(rank) + " failed (" + why + ")");
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("PeerChannel: " + what); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void set_port(sockaddr_storage& a, uint16_t port) {
  if (a.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(a).sin_port = htons(port);
  if (a.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(a).sin6_port = htons(port);
}

int ms_left(PeerChannel::Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - PeerChannel::Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30));
}

// Waits until `fd` has `events` or the deadline passes; false on the deadline.
bool wait_fd(int fd, short events, PeerChannel::Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, ms_left(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) fail("poll: " + errno_str());
  }
}

// Reads or writes exactly `len` bytes of a blocking handshake before the deadline.
bool transfer_all(int fd, void* buf, size_t len, bool write, PeerChannel::Clock::time_point deadline) {
  auto* p = static_cast<uint8_t*>(buf);
  size_t done = 0;
  while (done < len) {
    if (!wait_fd(fd, write ? POLLOUT : POLLIN, deadline)) return false;
    const ssize_t n = write ? ::send(fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : ::recv(fd, p + done, len - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return false;
    }
  }
  return true;
}

void tune(int fd, size_t capacity) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Room for a whole message each way, so a sender rarely has to wait for the reader (the
  // kernel caps this at net.core.{w,r}mem_max; exchange() copes with partial writes either way).
  const int bytes = static_cast<int>(std::min<size_t>(capacity + 64, 1 << 30));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

}  // namespace

PeerChannel::PeerChannel(Store& store, int rank, int size, const sockaddr_storage& address, socklen_t address_len,
                         size_t capacity, milliseconds connect_timeout, bool shared_memory)
    : rank_(rank), size_(size), capacity_(capacity), peers_(size) {
  try {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) fail("eventfd: " + errno_str());
    std::random_device entropy;
    const uint64_t secret = (uint64_t{entropy()} << 32) ^ entropy();
    if (shared_memory && size_ > 1) {
      try {
        outbox_ = SharedOutbox::create(capacity_, secret);
      } catch (const std::runtime_error&) {
        // No usable /dev/shm (or too small): every peer goes over TCP, which always works.
      }
    }
    connect_all(store, address, address_len, connect_timeout, secret);
    // Every peer has opened this rank's outbox or declined: its name can go.
    if (outbox_ && shared_memory_peers() == 0) outbox_.reset();
    if (outbox_) outbox_->unlink();
    if (!outbox_) outgoing_.resize(capacity_);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      tune(peers_[r].fd, capacity_);
      if (!peers_[r].outbox) peers_[r].incoming.resize(capacity_);
    }
  } catch (...) {
    for (Peer& p : peers_) close_fd(p.fd);
    close_fd(wake_fd_);
    throw;
  }
}

int PeerChannel::shared_memory_peers() const {
  int n = 0;
  for (const Peer& p : peers_) n += p.outbox != nullptr;
  return n;
}

PeerChannel::~PeerChannel() {
  for (Peer& p : peers_) close_fd(p.fd);
  close_fd(wake_fd_);
}

void PeerChannel::connect_all(Store& store, const sockaddr_storage& address, socklen_t address_len,
                              milliseconds timeout, uint64_t secret) {
  const auto deadline = Clock::now() + timeout;
  int listen_fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) fail("socket: " + errno_str());
  try {
    sockaddr_storage local = address;
    set_port(local, 0);
    int one = 1;
    ::setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&local), address_len) != 0) fail("bind: " + errno_str());
    if (::listen(listen_fd, size_) != 0) fail("listen: " + errno_str());
    socklen_t len = sizeof local;
    ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&local), &len);
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&local), len, host, sizeof host, port, sizeof port,
                      NI_NUMERICHOST | NI_NUMERICSERV) != 0)
      fail("getnameinfo failed for the listening address");
    store.set("channel/" + std::to_string(rank_), std::string(host) + " " + port + " " + std::to_string(secret) +
                                                       " " + (outbox_ ? outbox_->name() : "-"));

    // The higher rank of each pair connects to the lower one.
    for (int r = 0; r < rank_; ++r) {
      const std::string key = "channel/" + std::to_string(r);
      store.wait({key}, std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(deadline - Clock::now())));
      std::istringstream in(store.get_string(key));
      std::string peer_host, peer_port, peer_outbox;
      uint64_t peer_secret = 0;
      in >> peer_host >> peer_port >> peer_secret >> peer_outbox;
      // Only a rank with an outbox of its own takes the peer's: a pair shares memory both ways.
      std::unique_ptr<SharedOutbox> theirs = outbox_ ? SharedOutbox::open(peer_outbox, capacity_, peer_secret) : nullptr;
      addrinfo hints{}, *found = nullptr;
      hints.ai_socktype = SOCK_STREAM;
      hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
      if (::getaddrinfo(peer_host.c_str(), peer_port.c_str(), &hints, &found) != 0 || !found)
        fail("rank " + std::to_string(r) + " published an unusable address '" + peer_host + " " + peer_port + "'");
      int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      const int rc = fd < 0 ? -1 : ::connect(fd, found->ai_addr, found->ai_addrlen);
      const int connect_errno = errno;
      ::freeaddrinfo(found);
      if (fd < 0) fail("socket: " + errno_str());
      peers_[r].fd = fd;
      if (rc != 0 && connect_errno != EINPROGRESS)
        fail("connecting to rank " + std::to_string(r) + " at " + peer_host + ":" + peer_port + ": " +
             std::strerror(connect_errno));
      int err = 0;
      socklen_t err_len = sizeof err;
      if (!wait_fd(fd, POLLOUT, deadline))
        throw TimeoutError("PeerChannel: connecting to rank " + std::to_string(r) + " timed out");
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
      if (err != 0)
        fail("connecting to rank " + std::to_string(r) + " at " + peer_host + ":" + peer_port + ": " +
             std::strerror(err));
      Hello hello{kHelloMagic, peer_secret, rank_, size_, secret, theirs ? 1u : 0u, {}};
      if (outbox_) std::snprintf(hello.outbox, sizeof hello.outbox, "%s", outbox_->name().c_str());
      Welcome welcome{};
      if (!transfer_all(fd, &hello, sizeof hello, /*write=*/true, deadline) ||
          !transfer_all(fd, &welcome, sizeof welcome, /*write=*/false, deadline) || welcome.magic != kHelloMagic)
        fail("could not introduce this rank to rank " + std::to_string(r));
      if (theirs && welcome.mapped) peers_[r].outbox = std::move(theirs);
    }

    // Accept every higher rank. A connection that is not one of them (a stray client, a wrong
    // secret, a duplicate) is closed and does not count.
    for (int waiting = size_ - 1 - rank_; waiting > 0;) {
      if (!wait_fd(listen_fd, POLLIN, deadline)) {
        std::string missing;
        for (int r = rank_ + 1; r < size_; ++r)
          if (peers_[r].fd < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        throw TimeoutError("PeerChannel: timed out waiting for rank(s) " + missing + " to connect");
      }
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      Hello hello{};
      const auto hello_deadline = std::min(deadline, Clock::now() + milliseconds(2000));
      const bool ok = transfer_all(fd, &hello, sizeof hello, /*write=*/false, hello_deadline) &&
                      hello.magic == kHelloMagic && hello.secret == secret && hello.size == size_ &&
                      hello.rank > rank_ && hello.rank < size_ && peers_[hello.rank].fd < 0;
      std::unique_ptr<SharedOutbox> theirs;
      if (ok && outbox_ && hello.mapped) {
        hello.outbox[sizeof hello.outbox - 1] = '\0';
        theirs = SharedOutbox::open(hello.outbox, capacity_, hello.outbox_secret);
      }
      const Welcome welcome{kHelloMagic, theirs ? 1u : 0u, 0};
      if (!ok || !transfer_all(fd, const_cast<Welcome*>(&welcome), sizeof welcome, /*write=*/true, hello_deadline)) {
        ::close(fd);
        continue;
      }
      peers_[hello.rank].fd = fd;
      peers_[hello.rank].outbox = std::move(theirs);
      --waiting;
    }
  } catch (...) {
    ::close(listen_fd);
    throw;
  }
  ::close(listen_fd);
}

std::vector<const uint8_t*> PeerChannel::exchange(size_t bytes, Clock::time_point deadline, bool poll_first) {
  if (bytes > capacity_)
    throw std::logic_error("PeerChannel: a message of " + std::to_string(bytes) + " bytes exceeds the capacity of " +
                           std::to_string(capacity_));
  const uint64_t message = ++exchanges_;
  const uint8_t* out = outbox_ ? outbox_->slot(message) : outgoing_.data();
  if (outbox_) {
    outbox_->publish(message, bytes);
    for (int r = 0; r < size_; ++r)
      if (peers_[r].outbox && peers_[r].outbox->sleeping()) {
        const uint8_t ring = 1;  // a full socket means the peer has doorbells enough to read
        (void)::send(peers_[r].fd, &ring, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      }
  }
  struct Progress {
    size_t sent = 0;       // of the 8-byte length and the message (TCP)
    size_t received = 0;   // likewise
    uint64_t length = 0;   // of the incoming message, once its first 8 bytes are in
    uint8_t header[8] = {};
    const uint8_t* message = nullptr;  // once it is all here
  };
  std::vector<Progress> progress(size_);
  const uint64_t out_length = bytes;  // little-endian on every platform we build for
  const size_t out_total = sizeof out_length + bytes;
  const auto too_long = [&](int r, uint64_t length) -> PeerLostError {
    return lost(r, "it sent a message of " + std::to_string(length) + " bytes, more than the " +
                       std::to_string(capacity_) + " every rank agreed on");
  };
  // A shared-memory peer's message is here once it is published; true if it came now.
  const auto take_published = [&](int r) {
    const SharedOutbox& theirs = *peers_[r].outbox;
    if (progress[r].message || theirs.published() < message) return false;
    if (theirs.length(message) > capacity_) throw too_long(r, theirs.length(message));
    progress[r].message = theirs.slot(message);
    return true;
  };
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && peers_[r].outbox) progress[r].sent = out_total;  // nothing goes on its socket
  const auto poll_until = poll_first ? Clock::now() + kPollBeforeSleeping : Clock::now();
  std::vector<pollfd> fds;
  std::vector<int> fd_rank;
  for (;;) {
    if (interrupted_.load(std::memory_order_acquire)) throw std::runtime_error("the exchange was interrupted");
    bool moved = false;
    int pending = 0;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      Progress& p = progress[r];
      if (peers_[r].outbox) {
        moved |= take_published(r);
        pending += !p.message;
        continue;
      }
      const int fd = peers_[r].fd;
      if (p.sent < out_total) {
        iovec iov[2];
        int n_iov = 0;
        if (p.sent < sizeof out_length) {
          iov[n_iov++] = {const_cast<char*>(reinterpret_cast<const char*>(&out_length)) + p.sent,
                          sizeof out_length - p.sent};
          if (bytes > 0) iov[n_iov++] = {const_cast<uint8_t*>(out), bytes};
        } else {
          iov[n_iov++] = {const_cast<uint8_t*>(out) + (p.sent - sizeof out_length), out_total - p.sent};
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = n_iov;
        const ssize_t n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
          p.sent += static_cast<size_t>(n);
          moved = true;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          throw lost(r, "sending: " + errno_str());
        }
      }
      // Exactly this collective's message: the peer's next one stays in the socket.
      while (!p.message) {
        const bool have_length = p.received >= sizeof p.header;
        uint8_t* dst = have_length ? peers_[r].incoming.data() + (p.received - sizeof p.header) : p.header + p.received;
        const size_t want = have_length ? sizeof p.header + p.length - p.received : sizeof p.header - p.received;
        const ssize_t n = ::recv(fd, dst, want, MSG_DONTWAIT);
        if (n == 0) throw lost(r, kClosed);
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
          throw lost(r, "receiving: " + errno_str());
        }
        p.received += static_cast<size_t>(n);
        moved |= n > 0;
        if (!have_length && p.received == sizeof p.header) {
          std::memcpy(&p.length, p.header, sizeof p.length);
          if (p.length > capacity_) throw too_long(r, p.length);
        }
        if (p.received >= sizeof p.header && p.received == sizeof p.header + p.length)
          p.message = peers_[r].incoming.data();
      }
      pending += (p.sent < out_total) + !p.message;
    }
    if (pending == 0) break;
    if (moved) continue;
    const auto now = Clock::now();
    if (now >= deadline) {
      std::string who;
      for (int r = 0; r < size_; ++r)
        if (r != rank_ && !progress[r].message) who += (who.empty() ? "" : ", ") + std::to_string(r);
      throw std::runtime_error("timed out waiting for the message of rank(s) " + (who.empty() ? "?" : who));
    }
    if (now < poll_until) {
      // Yield the core between polls rather than spin on it: the peer that has yet to send may be
      // waiting for this core, because more ranks than cores share the machine or because other
      // processes keep the cores busy. Spinning kept its slice on the core and the descheduled
      // peer off it: 3 ranks on 2 cores, a 242 KiB allreduce 1.2 ms spinning, 0.1 yielding; 2
      // ranks on the 2-core VM at load average 8.7, LeNet's DDP step 6.7-7.3 ms spinning, 4.0
      // yielding, and ZeRO's all-gather after backward waited 3.4-4.2 ms a step spinning, 0.9-1.3
      // yielding (benchmarks/zero_bench, 2026-12-05). With the core to itself, sched_yield returns
      // at once: a system call per poll instead of a pause instruction.
      ::sched_yield();
      continue;
    }
    // Sleep. Shared-memory peers that publish from now on ring the doorbell; one that published
    // just before set_sleeping() is seen by the check after it.
    bool awaiting_shared = false;
    for (int r = 0; r < size_; ++r) awaiting_shared |= r != rank_ && peers_[r].outbox && !progress[r].message;
    if (awaiting_shared) {
      outbox_->set_sleeping(true);
      bool arrived = false;
      for (int r = 0; r < size_; ++r)
        if (r != rank_ && peers_[r].outbox) arrived |= take_published(r);
      if (arrived) {
        outbox_->set_sleeping(false);
        continue;
      }
    }
    fds.clear();
    fd_rank.clear();
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const Progress& p = progress[r];
      short events = 0;
      if (p.sent < out_total) events |= POLLOUT;
      if (!p.message) events |= POLLIN;  // for a shared-memory peer: its doorbell, or its end
      if (events) {
        fds.push_back({peers_[r].fd, events, 0});
        fd_rank.push_back(r);
      }
    }
    fds.push_back({wake_fd_, POLLIN, 0});
    const int polled = ::poll(fds.data(), fds.size(), std::max(1, ms_left(deadline)));
    const int poll_errno = errno;
    if (awaiting_shared) outbox_->set_sleeping(false);
    if (polled < 0 && poll_errno != EINTR) throw std::runtime_error("PeerChannel: poll: " + std::string(std::strerror(poll_errno)));
    for (size_t i = 0; i + 1 < fds.size(); ++i) {
      const int r = fd_rank[i];
      // A peer that published its message and then exited is not lost to this exchange.
      if (fds[i].revents && peers_[r].outbox && !drain_doorbells(r) && !take_published(r)) throw lost(r, kClosed);
    }
  }
  std::vector<const uint8_t*> messages(size_, nullptr);
  for (int r = 0; r < size_; ++r) messages[r] = r == rank_ ? out : progress[r].message;
  return messages;
}

bool PeerChannel::drain_doorbells(int rank) {
  uint8_t rings[64];
  for (;;) {
    const ssize_t n = ::recv(peers_[rank].fd, rings, sizeof rings, MSG_DONTWAIT);
    if (n > 0) continue;
    // Closed, or reset (a peer that closes with doorbells unread sends RST): gone either way.
    if (n == 0) return false;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    if (errno != EINTR) return false;
  }
}

std::vector<int> PeerChannel::closed_peers() const {
  std::vector<int> closed;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || peers_[r].fd < 0) continue;
    // POLLRDHUP: the peer's end is closed even when bytes it sent are still unread before the end.
    pollfd p{peers_[r].fd, POLLRDHUP, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) closed.push_back(r);
  }
  return closed;
}

void PeerChannel::interrupt() {
  interrupted_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
}

}  // namespace colony::dist::comm_detail
