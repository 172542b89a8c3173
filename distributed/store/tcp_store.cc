// TCPStore: a length-prefixed binary protocol over one TCP connection per client.
//
//   hello    client -> "CLNY" u32 version, bytes token          server -> u8 status (0 ok, 1 refused)
//   request  u8 command, then its fields; bytes = u32 length + data, i64 = 8 bytes little-endian
//   reply    u8 status (0 ok, 1 timeout, 2 error), then the command's fields (error: bytes message)
//
// Blocking calls (get, wait) carry their timeout: the server parks them as waiters and answers
// when the keys exist or with "timeout" at the deadline, so a client never leaves a reply in
// flight that could be mistaken for the next one's. The server is one thread polling every
// connection; a malformed message, an oversized field or an unknown command closes that
// connection only, and so does a connection that has not said hello within the options'
// hello_timeout, sent more than a hello's worth of bytes before it, or is the oldest silent one
// when max_unauthenticated are; past max_connections new ones are closed at once; out of file
// descriptors it pauses accept() (10 ms doubling to 1 s) instead of spinning.
#include "distributed/store/tcp_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "distributed/store/accept_backoff.h"
#include "distributed/store/store_socket.h"

namespace colony::dist {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr uint32_t kVersion = 1;
constexpr size_t kMaxKey = 4096;
constexpr size_t kMaxValue = size_t{64} << 20;
constexpr size_t kMaxKeys = 1024;
constexpr size_t kMaxToken = 4096;
// The longest hello: magic, version, token length, token. Before it, a connection may not make the
// server hold more (it used to buffer up to 128 MiB from anyone who connected).
constexpr size_t kMaxHello = 4 + 4 + 4 + kMaxToken;

enum Command : uint8_t { kSet = 1, kGet, kAdd, kCompareSet, kWait, kCheck, kDelete };
enum Status : uint8_t { kOk = 0, kTimedOut = 1, kError = 2 };
// The longest wait a client may ask the server for; longer ones are waited this long.
constexpr int64_t kMaxWaitMs = int64_t{7} * 24 * 3600 * 1000;

// ---------------------------------------------------------------- encoding

void put_u8(Bytes& b, uint8_t v) { b.push_back(v); }
void put_u32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_i64(Bytes& b, int64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
}
void put_bytes(Bytes& b, const void* data, size_t n) {
  put_u32(b, static_cast<uint32_t>(n));
  const auto* p = static_cast<const uint8_t*>(data);
  b.insert(b.end(), p, p + n);
}
void put_str(Bytes& b, const std::string& s) { put_bytes(b, s.data(), s.size()); }

// Reads fields from a buffer that may hold only part of a message: every getter returns false
// when the data is not there yet, and sets `bad` when it never can be (a field over its cap).
struct Reader {
  const uint8_t* p;
  size_t n, pos = 0;
  bool bad = false;
  bool u8(uint8_t& v) {
    if (pos + 1 > n) return false;
    v = p[pos++];
    return true;
  }
  bool u32(uint32_t& v) {
    if (pos + 4 > n) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[pos + i]) << (8 * i);
    pos += 4;
    return true;
  }
  bool i64(int64_t& v) {
    if (pos + 8 > n) return false;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(p[pos + i]) << (8 * i);
    v = static_cast<int64_t>(u);
    pos += 8;
    return true;
  }
  bool bytes(Bytes& out, size_t cap) {
    uint32_t len;
    size_t save = pos;
    if (!u32(len)) return false;
    if (len > cap) {
      bad = true;
      return false;
    }
    if (pos + len > n) {
      pos = save;
      return false;
    }
    out.assign(p + pos, p + pos + len);
    pos += len;
    return true;
  }
  bool str(std::string& out, size_t cap) {
    Bytes b;
    if (!bytes(b, cap)) return false;
    out.assign(b.begin(), b.end());
    return true;
  }
};

bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    unsigned char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

std::string errno_text() { return std::strerror(errno); }

// False when the value is not a decimal integer (a key set() with other data, then add()ed).
bool parse_counter(const Bytes& v, int64_t* out) {
  std::string s(v.begin(), v.end());
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE) return false;
  *out = x;
  return true;
}

Bytes counter_bytes(int64_t v) {
  std::string s = std::to_string(v);
  return Bytes(s.begin(), s.end());
}

// ---------------------------------------------------------------- server

class Server {
 public:
  Server(const std::string& host, int port, std::string token, const TCPStoreOptions& limits)
      : token_(std::move(token)),
        hello_timeout_(limits.hello_timeout),
        max_connections_(static_cast<size_t>(std::max(1, limits.max_connections))),
        max_unauthenticated_(static_cast<size_t>(std::max(1, limits.max_unauthenticated))) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw StoreError("TCPStore: socket() failed: " + errno_text());
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    // Listen on every interface: other machines reach the store by MASTER_ADDR, which names one
    // of this machine's addresses (loopback-only hosts stay loopback-only).
    in_addr want = resolve_host(host);
    addr.sin_addr.s_addr = (ntohl(want.s_addr) >> 24) == 127 ? want.s_addr : htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(listen_fd_, 512) != 0) {
      std::string why = errno_text();
      bool in_use = errno == EADDRINUSE;
      close(listen_fd_);
      throw StoreError("TCPStore: cannot listen on " + host + ":" + std::to_string(port) + ": " + why +
                       (in_use ? "; another job may be using this port: pick another one, or pass --master_port=0 "
                                 "to let colonyrun choose a free one"
                               : ""));
    }
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_backoff_ = AcceptBackoff("the store on port " + std::to_string(port_));
    fcntl(listen_fd_, F_SETFL, O_NONBLOCK);
    if (pipe2(wake_, O_CLOEXEC) != 0) throw StoreError("TCPStore: pipe() failed: " + errno_text());
    thread_ = std::thread([this] { loop(); });
  }

  ~Server() {
    stop_ = true;
    char c = 0;
    (void)!write(wake_[1], &c, 1);
    thread_.join();
    for (auto& [fd, conn] : conns_) close(fd);
    close(listen_fd_);
    close(wake_[0]);
    close(wake_[1]);
  }

  int port() const { return port_; }

 private:
  struct Conn {
    Bytes in, out;
    Clock::time_point accepted = Clock::now();
    bool hello_done = false;
    bool closing = false;  // close once `out` is flushed
  };
  struct Waiter {
    int fd;
    uint8_t command;  // kGet or kWait
    std::vector<std::string> keys;
    Clock::time_point deadline;
  };

  void loop() {
    while (!stop_) {
      auto now = Clock::now();
      // While out of descriptors the listening socket stays readable: leave it out of the poll
      // until the back-off ends instead of spinning on accept().
      const bool accepting = accept_backoff_.accepting(now);
      std::vector<pollfd> fds{{accepting ? listen_fd_ : -1, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      for (auto& [fd, c] : conns_) fds.push_back({fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
      int timeout = 1000;
      const auto wake_by = [&](Clock::time_point t) {
        auto ms = std::chrono::duration_cast<milliseconds>(t - now).count();
        timeout = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(timeout, ms + 1)));
      };
      for (const auto& w : waiters_) wake_by(w.deadline);
      for (const auto& [fd, c] : conns_)
        if (!c.hello_done) wake_by(c.accepted + hello_timeout_);
      if (!accepting) wake_by(accept_backoff_.paused_until());
      poll(fds.data(), fds.size(), timeout);
      if (stop_) break;
      if (fds[0].revents & POLLIN) accept_all();
      std::vector<int> dead;
      for (size_t i = 2; i < fds.size(); ++i) {
        auto it = conns_.find(fds[i].fd);
        if (it == conns_.end()) continue;
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
          if (!read_from(fds[i].fd, it->second)) dead.push_back(fds[i].fd);
        }
      }
      for (int fd : dead) drop(fd);
      drop_silent_connections();
      expire_waiters();
      flush_all();
    }
  }

  void accept_all() {
    while (true) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        accept_backoff_.failed(errno);
        return;
      }
      accept_backoff_.succeeded();
      if (conns_.size() >= max_connections_) {
        close(fd);  // full: refused at once rather than left waiting
        continue;
      }
      if (unauthenticated() >= max_unauthenticated_) drop(oldest_unauthenticated());
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      conns_[fd] = Conn{};
    }
  }

  size_t unauthenticated() const {
    size_t n = 0;
    for (const auto& [fd, c] : conns_) n += c.hello_done ? 0 : 1;
    return n;
  }

  int oldest_unauthenticated() const {
    int oldest = -1;
    Clock::time_point when = Clock::time_point::max();
    for (const auto& [fd, c] : conns_)
      if (!c.hello_done && c.accepted < when) {
        oldest = fd;
        when = c.accepted;
      }
    return oldest;
  }

  // A connection that has not said hello within hello_timeout_ is closed.
  void drop_silent_connections() {
    const auto now = Clock::now();
    std::vector<int> silent;
    for (const auto& [fd, c] : conns_)
      if (!c.hello_done && now - c.accepted >= hello_timeout_) silent.push_back(fd);
    for (int fd : silent) drop(fd);
  }

  void drop(int fd) {
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(), [fd](const Waiter& w) { return w.fd == fd; }),
                   waiters_.end());
    close(fd);
    conns_.erase(fd);
  }

  // False: close this connection (peer gone, or it sent something we do not accept).
  bool read_from(int fd, Conn& c) {
    uint8_t buf[65536];
    while (true) {
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n > 0) {
        c.in.insert(c.in.end(), buf, buf + n);
        if (c.in.size() > (c.hello_done ? kMaxValue * 2 + kMaxKey + 64 : kMaxHello + sizeof(buf))) return false;
        if (!c.hello_done && c.in.size() >= kMaxHello) break;  // decide on the hello before reading more
        continue;
      }
      if (n == 0) return false;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return false;
    }
    while (!c.closing) {
      Reader r{c.in.data(), c.in.size()};
      bool complete = c.hello_done ? handle(fd, c, r) : hello(c, r);
      if (r.bad) return false;
      if (!complete) break;
      c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(r.pos));
    }
    return true;
  }

  bool hello(Conn& c, Reader& r) {
    uint8_t magic[4];
    for (auto& m : magic)
      if (!r.u8(m)) return false;
    if (std::memcmp(magic, "CLNY", 4) != 0) {
      r.bad = true;
      return false;
    }
    uint32_t version;
    std::string token;
    if (!r.u32(version) || !r.str(token, kMaxToken)) return false;
    bool ok = version == kVersion && constant_time_equal(token, token_);
    c.out.push_back(ok ? kOk : kError);
    if (ok) c.hello_done = true;
    else c.closing = true;
    return true;
  }

  // Parses and runs one request; false when it has not fully arrived.
  bool handle(int fd, Conn& c, Reader& r) {
    uint8_t cmd;
    if (!r.u8(cmd)) return false;
    Bytes reply;
    switch (cmd) {
      case kSet: {
        std::string key;
        Bytes value;
        if (!r.str(key, kMaxKey) || !r.bytes(value, kMaxValue)) return false;
        data_[key] = std::move(value);
        put_u8(reply, kOk);
        c.out.insert(c.out.end(), reply.begin(), reply.end());
        wake_waiters();
        return true;
      }
      case kGet:
      case kWait: {
        uint32_t count = 1;
        if (cmd == kWait && !r.u32(count)) return false;
        if (count > kMaxKeys) {
          r.bad = true;
          return false;
        }
        std::vector<std::string> keys(count);
        for (auto& k : keys)
          if (!r.str(k, kMaxKey)) return false;
        int64_t timeout_ms;
        if (!r.i64(timeout_ms)) return false;
        // A client's timeout is capped (a week) so that adding it to now() cannot overflow.
        const int64_t wait_ms = std::clamp<int64_t>(timeout_ms, 0, kMaxWaitMs);
        Waiter w{fd, cmd, std::move(keys), Clock::now() + milliseconds(wait_ms)};
        if (!try_answer(w, c)) waiters_.push_back(std::move(w));
        return true;
      }
      case kAdd: {
        std::string key;
        int64_t delta;
        if (!r.str(key, kMaxKey) || !r.i64(delta)) return false;
        auto it = data_.find(key);
        int64_t v = 0;
        std::string error;
        if (it != data_.end() && !parse_counter(it->second, &v)) {
          error = "add() on key '" + key + "', whose value is not a decimal integer";
        } else if (__builtin_add_overflow(v, delta, &v)) {
          // The counter stays as it was; the client learns why its add failed.
          error = "add(" + std::to_string(delta) + ") on key '" + key + "' would overflow its int64 counter";
        }
        if (!error.empty()) {
          put_u8(reply, kError);
          put_bytes(reply, error.data(), error.size());
          c.out.insert(c.out.end(), reply.begin(), reply.end());
          return true;
        }
        data_[key] = counter_bytes(v);
        put_u8(reply, kOk);
        put_i64(reply, v);
        c.out.insert(c.out.end(), reply.begin(), reply.end());
        wake_waiters();
        return true;
      }
      case kCompareSet: {
        std::string key;
        Bytes expected, desired;
        if (!r.str(key, kMaxKey) || !r.bytes(expected, kMaxValue) || !r.bytes(desired, kMaxValue)) return false;
        auto it = data_.find(key);
        if (it == data_.end()) {
          if (expected.empty()) data_[key] = desired;
        } else if (it->second == expected) {
          it->second = desired;
        }
        auto now = data_.find(key);
        put_u8(reply, kOk);
        if (now == data_.end()) put_bytes(reply, expected.data(), expected.size());
        else put_bytes(reply, now->second.data(), now->second.size());
        c.out.insert(c.out.end(), reply.begin(), reply.end());
        wake_waiters();
        return true;
      }
      case kCheck: {
        uint32_t count;
        if (!r.u32(count)) return false;
        if (count > kMaxKeys) {
          r.bad = true;
          return false;
        }
        bool all = true;
        for (uint32_t i = 0; i < count; ++i) {
          std::string k;
          if (!r.str(k, kMaxKey)) return false;
          all = all && data_.count(k) > 0;
        }
        put_u8(reply, kOk);
        put_u8(reply, all ? 1 : 0);
        c.out.insert(c.out.end(), reply.begin(), reply.end());
        return true;
      }
      case kDelete: {
        std::string key;
        if (!r.str(key, kMaxKey)) return false;
        bool existed = data_.erase(key) > 0;
        put_u8(reply, kOk);
        put_u8(reply, existed ? 1 : 0);
        c.out.insert(c.out.end(), reply.begin(), reply.end());
        return true;
      }
      default:
        r.bad = true;
        return false;
    }
  }

  // Answers a waiter whose keys all exist; false otherwise.
  bool try_answer(const Waiter& w, Conn& c) {
    for (const auto& k : w.keys)
      if (!data_.count(k)) return false;
    Bytes reply;
    put_u8(reply, kOk);
    if (w.command == kGet) {
      const Bytes& v = data_[w.keys.front()];
      put_bytes(reply, v.data(), v.size());
    }
    c.out.insert(c.out.end(), reply.begin(), reply.end());
    return true;
  }

  void wake_waiters() {
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      auto c = conns_.find(it->fd);
      if (c != conns_.end() && try_answer(*it, c->second)) it = waiters_.erase(it);
      else ++it;
    }
  }

  void expire_waiters() {
    auto now = Clock::now();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->deadline > now) {
        ++it;
        continue;
      }
      auto c = conns_.find(it->fd);
      if (c != conns_.end()) {
        std::string missing;
        for (const auto& k : it->keys)
          if (!data_.count(k)) missing += (missing.empty() ? "" : ", ") + k;
        Bytes reply;
        put_u8(reply, kTimedOut);
        put_str(reply, missing);
        c->second.out.insert(c->second.out.end(), reply.begin(), reply.end());
      }
      it = waiters_.erase(it);
    }
  }

  void flush_all() {
    std::vector<int> done;
    for (auto& [fd, c] : conns_) {
      while (!c.out.empty()) {
        ssize_t n = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (n > 0) {
          c.out.erase(c.out.begin(), c.out.begin() + n);
          continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n < 0 && errno == EINTR) continue;
        done.push_back(fd);
        break;
      }
      if (c.out.empty() && c.closing) done.push_back(fd);
    }
    for (int fd : done)
      if (conns_.count(fd)) drop(fd);
  }

  std::string token_;
  milliseconds hello_timeout_;
  size_t max_connections_;
  size_t max_unauthenticated_;
  // Out of file descriptors (or kernel memory): the pending connections wait in the backlog.
  AcceptBackoff accept_backoff_{"the store"};
  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::unordered_map<int, Conn> conns_;
  std::unordered_map<std::string, Bytes> data_;
  std::vector<Waiter> waiters_;
};

}  // namespace

// ---------------------------------------------------------------- client

struct TCPStore::Impl {
  TCPStoreOptions options;
  std::unique_ptr<Server> server;
  int port = 0;
  std::unique_ptr<StoreSocket> socket;
  std::mutex mu;

  std::string where() const { return options.host + ":" + std::to_string(port); }

  StoreConnectOptions connect_options() const {
    StoreConnectOptions c;
    c.host = options.host;
    c.port = port;
    c.timeout = options.timeout;
    c.description = options.description;
    c.progress_interval = options.progress_interval;
    c.progress = options.progress;
    return c;
  }

  void connect() {
    try {
      socket = std::make_unique<StoreSocket>(connect_options());
    } catch (const StoreError& e) {
      throw StoreError("TCPStore: " + std::string(e.what()) +
                       "; is rank 0 (or colonyrun) running, and are MASTER_ADDR/MASTER_PORT right?");
    }
  }

  // Reads exactly n bytes; the server answers blocking calls by their deadline, so this waits at
  // most that long plus a margin for a server that stopped answering.
  void recv_exact(void* out, size_t n, milliseconds limit) {
    socket->recv_exact(out, n, limit + milliseconds(5000));
  }

  uint8_t recv_u8(milliseconds limit) {
    uint8_t v;
    recv_exact(&v, 1, limit);
    return v;
  }
  int64_t recv_i64(milliseconds limit) {
    uint8_t b[8];
    recv_exact(b, 8, limit);
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(b[i]) << (8 * i);
    return static_cast<int64_t>(u);
  }
  Bytes recv_bytes(milliseconds limit) {
    uint8_t b[4];
    recv_exact(b, 4, limit);
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(b[i]) << (8 * i);
    if (len > kMaxValue) throw StoreError("TCPStore: malformed reply from the store at " + where());
    Bytes out(len);
    if (len) recv_exact(out.data(), len, limit);
    return out;
  }

  // A store that accepted the connection but does not answer (its process stopped, or another
  // program owns the port) is reported while waited for, like one that refuses connections.
  // False when the server closed the connection without answering (it had max_connections).
  bool hello() {
    Bytes b{'C', 'L', 'N', 'Y'};
    put_u32(b, kVersion);
    put_str(b, *options.token);
    socket->send_all(b);
    if (!socket->wait_for_answer(connect_options(), "connected, no answer to the hello yet")) {
      throw StoreError("TCPStore: the store at " + where() + " accepted the connection but did not answer within " +
                       std::to_string(options.timeout.count()) +
                       " ms (is its process stopped, or another program listening on MASTER_PORT?)");
    }
    uint8_t status;
    try {
      status = recv_u8(options.timeout);
    } catch (const StoreError&) {
      return false;
    }
    if (status != kOk) {
      throw StoreError("TCPStore: the store at " + where() +
                       " refused this process's job token (COLONY_JOB_TOKEN differs from the job's)");
    }
    return true;
  }

  // Sends a request and reads the status; a timeout status throws with the missing keys.
  void request(const Bytes& b, milliseconds limit, const char* what) {
    socket->send_all(b);
    uint8_t status = recv_u8(limit);
    if (status == kTimedOut) {
      Bytes missing = recv_bytes(limit);
      throw TimeoutError(std::string("TCPStore: ") + what + " timed out after " + std::to_string(limit.count()) +
                         " ms waiting for key(s) " + std::string(missing.begin(), missing.end()) + " at " + where());
    }
    if (status == kError) {
      Bytes msg = recv_bytes(limit);
      throw StoreError("TCPStore: " + std::string(msg.begin(), msg.end()) + " (store at " + where() + ")");
    }
    if (status != kOk) throw StoreError("TCPStore: malformed reply from the store at " + where());
  }
};

TCPStore::TCPStore(TCPStoreOptions options) : Store(options.timeout), impl_(std::make_unique<Impl>()) {
  if (!options.token) {
    const char* env = std::getenv("COLONY_JOB_TOKEN");
    options.token = env != nullptr ? env : "";
  }
  if (options.token->size() > kMaxToken) throw std::invalid_argument("TCPStore: the job token is longer than 4096 bytes");
  if (options.port < 0 || options.port > 65535)
    throw std::invalid_argument("TCPStore: port " + std::to_string(options.port) + " is not in 0..65535");
  if (!options.is_server && options.port == 0)
    throw std::invalid_argument("TCPStore: a client needs the server's port (0 only lets a server choose one)");
  impl_->options = options;
  impl_->port = options.port;
  if (options.is_server) {
    impl_->server = std::make_unique<Server>(options.host, options.port, *options.token, options);
    impl_->port = impl_->server->port();
  }
  // A full server closes new connections at once: try again (10 ms doubling to 1 s) until the
  // timeout, as for a server that is not up yet.
  const auto deadline = Clock::now() + options.timeout;
  milliseconds backoff(10);
  while (true) {
    impl_->connect();
    if (impl_->hello()) break;
    if (Clock::now() + backoff > deadline) {
      throw StoreError("TCPStore: the store at " + impl_->where() + " closed every connection before answering for " +
                       std::to_string(options.timeout.count()) + " ms (it may have max_connections clients)");
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, milliseconds(1000));
  }
}

TCPStore::~TCPStore() {
  impl_->socket.reset();
  impl_->server.reset();
}

const std::string& TCPStore::host() const { return impl_->options.host; }
int TCPStore::port() const { return impl_->port; }
bool TCPStore::is_server() const { return impl_->server != nullptr; }

namespace {
void check_key(const std::string& key) {
  if (key.size() > kMaxKey) throw std::invalid_argument("TCPStore: key longer than 4096 bytes");
}
void check_value(const Bytes& v) {
  if (v.size() > kMaxValue) throw std::invalid_argument("TCPStore: value larger than 64 MiB");
}
}  // namespace

void TCPStore::set(const std::string& key, const Bytes& value) {
  check_key(key);
  check_value(value);
  Bytes b;
  put_u8(b, kSet);
  put_str(b, key);
  put_bytes(b, value.data(), value.size());
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->request(b, timeout_, "set");
}

Bytes TCPStore::get(const std::string& key) {
  check_key(key);
  Bytes b;
  put_u8(b, kGet);
  put_str(b, key);
  put_i64(b, timeout_.count());
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->request(b, timeout_, "get");
  return impl_->recv_bytes(timeout_);
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  check_key(key);
  Bytes b;
  put_u8(b, kAdd);
  put_str(b, key);
  put_i64(b, delta);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->request(b, timeout_, "add");
  return impl_->recv_i64(timeout_);
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key(key);
  check_value(expected);
  check_value(desired);
  Bytes b;
  put_u8(b, kCompareSet);
  put_str(b, key);
  put_bytes(b, expected.data(), expected.size());
  put_bytes(b, desired.data(), desired.size());
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->request(b, timeout_, "compare_set");
  return impl_->recv_bytes(timeout_);
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  if (keys.size() > kMaxKeys) throw std::invalid_argument("TCPStore: wait on more than 1024 keys");
  Bytes b;
  put_u8(b, kWait);
  put_u32(b, static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) {
    check_key(k);
    put_str(b, k);
  }
  put_i64(b, timeout.count());
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->request(b, timeout, "wait");
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  if (keys.size() > kMaxKeys) throw std::invalid_argument("TCPStore: check of more than 1024 keys");
  Bytes b;
  put_u8(b, kCheck);
  put_u32(b, static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) {
    check_key(k);
    put_str(b, k);
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->request(b, timeout_, "check");
  return impl_->recv_u8(timeout_) != 0;
}

bool TCPStore::delete_key(const std::string& key) {
  check_key(key);
  Bytes b;
  put_u8(b, kDelete);
  put_str(b, key);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->request(b, timeout_, "delete_key");
  return impl_->recv_u8(timeout_) != 0;
}

}  // namespace colony::dist
